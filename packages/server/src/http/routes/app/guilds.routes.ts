import { AppGuild, CreateAppGuildBody } from '@parley/protocol';
import { createAppGuild } from '../../../domain/guilds/app-guilds.service.js';
import { deleteGuildMessage } from '../../../domain/moderation/moderation.service.js';
import type { ApiPlugin } from '../../app.js';
import { actorOfRequest } from '../../plugins/actor.js';
import { principalOf } from '../../plugins/auth.js';
import { NoContent, params, responses } from '../../schemas.js';

/**
 * D49: guilds for people — creating one. Administration (D59) is http/routes/guild-admin.routes.ts,
 * answering under /app/v1 and /api/v1 alike.
 */
export const guildRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;
  const tags = ['app'];
  const id = (v: string): number => Number(v);

  app.post(
    '/guilds',
    {
      schema: {
        tags,
        summary: 'Create a guild: the caller owns it; it starts with a text channel "general"',
        body: CreateAppGuildBody,
        response: responses({ 201: AppGuild }),
      },
    },
    async (req, reply) =>
      reply.code(201).send(await createAppGuild(d, principalOf(req), req.body.name)),
  );

  // D49's moderation path; under /api/v1 the message routes answer it (the same function).
  app.delete(
    '/channels/:channelId/messages/:messageId',
    {
      schema: {
        tags,
        summary: "Delete a message: one's own, or anyone's with MANAGE_MESSAGES; MESSAGE_DELETE",
        params: params('channelId', 'messageId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await deleteGuildMessage(
        d,
        actorOfRequest(req),
        id(req.params.channelId),
        id(req.params.messageId),
      );
      return reply.code(204).send(null);
    },
  );
};
