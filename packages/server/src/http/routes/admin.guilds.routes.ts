import {
  AdminChannelPatch,
  AdminGuildDetail,
  AdminGuildList,
  AdminGuildPatch,
  AdminRole,
  AdminRolePatch,
  Channel,
} from '@parley/protocol';
import {
  operatorDeleteChannel,
  operatorDeleteGuild,
  operatorDeleteMessage,
  operatorDeleteRole,
  operatorUpdateChannel,
  operatorUpdateGuild,
  operatorUpdateRole,
} from '../../domain/admin/operator.js';
import { getChannel } from '../../domain/channels/channels.admin.js';
import { getGuild, getRole, listGuilds } from '../../domain/guilds/guilds.admin.js';
import { auditReason } from '../plugins/actor.js';
import type { ApiPlugin } from '../app.js';
import { NoContent, params, responses } from '../schemas.js';
import { AdminPageQuery, pageOf, security, tags } from './admin.people.routes.js';

/** D52: guilds, channels, roles and messages. */
export const adminGuildRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;

  app.get(
    '/guilds',
    {
      schema: {
        tags,
        security,
        summary: 'Guilds by id ascending, optionally filtered by name (D52)',
        querystring: AdminPageQuery,
        response: responses({ 200: AdminGuildList }),
      },
    },
    async (req) => listGuilds(d, pageOf(req.query)),
  );

  app.get(
    '/guilds/:guildId',
    {
      schema: {
        tags,
        security,
        summary: 'One guild with its channels, roles and bots',
        params: params('guildId'),
        response: responses({ 200: AdminGuildDetail }),
      },
    },
    async (req) => getGuild(d, Number(req.params.guildId)),
  );

  app.patch(
    '/guilds/:guildId',
    {
      schema: {
        tags,
        security,
        summary: 'Rename a guild or give it to another member',
        params: params('guildId'),
        body: AdminGuildPatch,
        response: responses({ 200: AdminGuildDetail }),
      },
    },
    async (req) => operatorUpdateGuild(d, Number(req.params.guildId), req.body, auditReason(req)),
  );

  app.delete(
    '/guilds/:guildId',
    {
      schema: {
        tags,
        security,
        summary: 'Delete a guild and everything in it (each bot in it gets GUILD_MEMBER_REMOVE)',
        params: params('guildId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await operatorDeleteGuild(d, Number(req.params.guildId), auditReason(req));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/channels/:channelId',
    {
      schema: {
        tags,
        security,
        summary: 'One guild channel',
        params: params('channelId'),
        response: responses({ 200: Channel }),
      },
    },
    async (req) => getChannel(d, Number(req.params.channelId)),
  );

  app.patch(
    '/channels/:channelId',
    {
      schema: {
        tags,
        security,
        summary: "Change a channel's name or topic",
        params: params('channelId'),
        body: AdminChannelPatch,
        response: responses({ 200: Channel }),
      },
    },
    async (req) =>
      operatorUpdateChannel(d, Number(req.params.channelId), req.body, auditReason(req)),
  );

  app.delete(
    '/channels/:channelId',
    {
      schema: {
        tags,
        security,
        summary: 'Delete a channel and its messages',
        params: params('channelId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await operatorDeleteChannel(d, Number(req.params.channelId), auditReason(req));
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/channels/:channelId/messages/:messageId',
    {
      schema: {
        tags,
        security,
        summary: 'Delete any message (MESSAGE_DELETE / DM_MESSAGE_DELETE to bots, D34)',
        params: params('channelId', 'messageId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await operatorDeleteMessage(
        d,
        Number(req.params.channelId),
        Number(req.params.messageId),
        auditReason(req),
      );
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/roles/:roleId',
    {
      schema: {
        tags,
        security,
        summary: 'One role',
        params: params('roleId'),
        response: responses({ 200: AdminRole }),
      },
    },
    async (req) => getRole(d, Number(req.params.roleId)),
  );

  app.patch(
    '/roles/:roleId',
    {
      schema: {
        tags,
        security,
        summary: "Change a role's name or permissions (@everyone keeps its name)",
        params: params('roleId'),
        body: AdminRolePatch,
        response: responses({ 200: AdminRole }),
      },
    },
    async (req) => operatorUpdateRole(d, Number(req.params.roleId), req.body, auditReason(req)),
  );

  app.delete(
    '/roles/:roleId',
    {
      schema: {
        tags,
        security,
        summary: 'Delete a role (not @everyone: 409)',
        params: params('roleId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await operatorDeleteRole(d, Number(req.params.roleId), auditReason(req));
      return reply.code(204).send(null);
    },
  );
};
