import { ChannelCommands, Command, CommandList } from '@parley/protocol';
import { Type } from 'typebox';
import {
  channelCommands,
  deleteCommand,
  getCommands,
  setCommands,
} from '../../domain/interactions/commands.service.js';
import type { ApiPlugin } from '../app.js';
import { principalOf } from '../plugins/auth.js';
import { NoContent, params, responses } from '../schemas.js';

/**
 * D64: a bot's slash commands — global (`/applications/@me/commands`) or one guild's
 * (`/guilds/:guildId/commands`), each list replaced whole by PUT — and what a person may run in
 * a channel.
 */
export const commandRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;
  const scopes = [
    { prefix: '/applications/@me/commands', guild: false, what: 'global' },
    { prefix: '/guilds/:guildId/commands', guild: true, what: "one guild's" },
  ] as const;
  for (const s of scopes) {
    const guildOf = (p: unknown): number | null =>
      s.guild ? Number((p as { guildId: string }).guildId) : null;
    const ps = s.guild ? params('guildId') : Type.Object({});
    app.put(
      s.prefix,
      {
        schema: {
          tags: ['commands'],
          summary: `Replace the bot's ${s.what} commands (D64): the whole list, ≤ 100; 200 with ids`,
          params: ps,
          body: CommandList,
          response: responses({ 200: Type.Array(Command) }),
        },
      },
      async (req) => setCommands(d, principalOf(req), guildOf(req.params), req.body),
    );
    app.get(
      s.prefix,
      {
        schema: {
          tags: ['commands'],
          summary: `The bot's ${s.what} commands (D64)`,
          params: ps,
          response: responses({ 200: Type.Array(Command) }),
        },
      },
      async (req) => getCommands(d, principalOf(req), guildOf(req.params)),
    );
    app.delete(
      `${s.prefix}/:commandId`,
      {
        schema: {
          tags: ['commands'],
          summary: `Delete one of the bot's ${s.what} commands (D64): 204`,
          params: s.guild ? params('guildId', 'commandId') : params('commandId'),
          response: responses({ 204: NoContent }),
        },
      },
      async (req, reply) => {
        await deleteCommand(d, principalOf(req), guildOf(req.params), Number(req.params.commandId));
        return reply.code(204).send(null);
      },
    );
  }

  app.get(
    '/channels/:channelId/commands',
    {
      schema: {
        tags: ['commands'],
        summary:
          'The commands the caller may run in a channel (D64: USE_APPLICATION_COMMANDS and each defaultMemberPermissions), with their bots',
        params: params('channelId'),
        response: responses({ 200: ChannelCommands }),
      },
    },
    async (req) => channelCommands(d, principalOf(req), Number(req.params.channelId)),
  );
};
