import {
  BotToken,
  Channel,
  CreateBotBody,
  CreateChannelBody,
  CreatedBot,
  CreateGuildBody,
  CreateRoleBody,
  CreateUserBody,
  Delivery,
  DeliveryList,
  Guild,
  Member,
  Overwrite,
  OverwriteBody,
  PutMemberBody,
  Role,
  SessionToken,
  SetWebhookBody,
  User,
  WebhookSecret,
  WebhookSettings,
} from '@parley/protocol';
import { createBot, resetBotToken } from '../../domain/bots/bots.service.js';
import {
  operatorCreateChannel,
  operatorCreateRole,
  operatorSetOverwrite,
} from '../../domain/admin/operator.js';
import { createGuild } from '../../domain/guilds/guilds.service.js';
import { auditReason } from '../plugins/actor.js';
import { putMember, removeMember } from '../../domain/members/members.service.js';
import { createSession, createUser } from '../../domain/users/users.service.js';
import {
  deleteWebhook,
  listDeliveries,
  redeliver,
  rotateWebhookSecret,
  sendTestEvent,
  setWebhook,
} from '../../webhooks/webhooks.service.js';
import type { ApiPlugin } from '../app.js';
import { NoContent, params, responses } from '../schemas.js';
import { adminBotRoutes } from './admin.bots.routes.js';
import { adminGuildRoutes } from './admin.guilds.routes.js';
import { adminInviteRoutes } from './admin.invites.routes.js';
import { adminPeopleRoutes } from './admin.people.routes.js';

/** D41: the operator API. The CLI calls the same domain functions. */
export const adminRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;
  // D52: reading, changing and deleting (files per resource).
  for (const routes of [adminPeopleRoutes, adminGuildRoutes, adminBotRoutes, adminInviteRoutes])
    await app.register(routes, { deps });
  const tags = ['operator'];
  const security = [{ adminToken: [] }];

  app.post(
    '/users',
    {
      schema: {
        tags,
        security,
        summary: 'Create a human user',
        body: CreateUserBody,
        response: responses({ 201: User }),
      },
    },
    async (req, reply) => reply.code(201).send(await createUser(d, req.body)),
  );

  app.post(
    '/users/:userId/sessions',
    {
      schema: {
        tags,
        security,
        summary: 'A session token with which the user calls /api/v1',
        params: params('userId'),
        response: responses({ 201: SessionToken }),
      },
    },
    async (req, reply) =>
      reply.code(201).send({ token: (await createSession(d, Number(req.params.userId))).token }),
  );

  app.post(
    '/guilds',
    {
      schema: {
        tags,
        security,
        summary: 'Create a guild (the owner joins)',
        body: CreateGuildBody,
        response: responses({ 201: Guild }),
      },
    },
    async (req, reply) => reply.code(201).send(await createGuild(d, req.body)),
  );

  app.post(
    '/guilds/:guildId/channels',
    {
      schema: {
        tags,
        security,
        summary: 'Create a channel',
        params: params('guildId'),
        body: CreateChannelBody,
        response: responses({ 201: Channel }),
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(
          await operatorCreateChannel(d, Number(req.params.guildId), req.body, auditReason(req)),
        ),
  );

  app.post(
    '/guilds/:guildId/roles',
    {
      schema: {
        tags,
        security,
        summary: 'Create a role (D11 bits)',
        params: params('guildId'),
        body: CreateRoleBody,
        response: responses({ 201: Role }),
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(await operatorCreateRole(d, Number(req.params.guildId), req.body, auditReason(req))),
  );

  app.put(
    '/guilds/:guildId/members/:userId',
    {
      schema: {
        tags,
        security,
        summary: 'Add a member (201, GUILD_MEMBER_ADD) or set its roles (200)',
        params: params('guildId', 'userId'),
        body: PutMemberBody,
        response: responses({ 200: Member, 201: Member }),
      },
    },
    async (req, reply) => {
      const { member, created } = await putMember(
        d,
        Number(req.params.guildId),
        Number(req.params.userId),
        req.body ?? {},
      );
      return reply.code(created ? 201 : 200).send(member);
    },
  );

  app.delete(
    '/guilds/:guildId/members/:userId',
    {
      schema: {
        tags,
        security,
        summary: 'Remove a member (GUILD_MEMBER_REMOVE)',
        params: params('guildId', 'userId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await removeMember(d, Number(req.params.guildId), Number(req.params.userId));
      return reply.code(204).send(null);
    },
  );

  app.put(
    '/channels/:channelId/overwrites/:roleId',
    {
      schema: {
        tags,
        security,
        summary: 'Set a channel permission overwrite for a role (D11)',
        params: params('channelId', 'roleId'),
        body: OverwriteBody,
        response: responses({ 200: Overwrite }),
      },
    },
    async (req) =>
      operatorSetOverwrite(
        d,
        Number(req.params.channelId),
        Number(req.params.roleId),
        req.body,
        auditReason(req),
      ),
  );

  app.post(
    '/bots',
    {
      schema: {
        tags,
        security,
        summary: 'Create a bot (at most 3 per owner: 409)',
        body: CreateBotBody,
        response: responses({ 201: CreatedBot }),
      },
      config: { errors: [409] }, // D41: the fourth bot of an owner (OpenAPI: openapi-refine.ts)
    },
    async (req, reply) => reply.code(201).send(await createBot(d, deps.codec, req.body)),
  );

  app.post(
    '/bots/:botId/token',
    {
      schema: {
        tags,
        security,
        summary: 'Reset the bot token: the old one is refused at once (D8)',
        params: params('botId'),
        response: responses({ 200: BotToken }),
      },
    },
    async (req) => resetBotToken(d, deps.codec, Number(req.params.botId)),
  );

  // D37–D41: webhook address, secret rotation, delivery log, redelivery, test event.
  app.put(
    '/bots/:botId/webhook',
    {
      schema: {
        tags,
        security,
        summary:
          'Set the webhook address (checked: https, public address — D37); answers the secret',
        params: params('botId'),
        body: SetWebhookBody,
        response: responses({ 200: WebhookSettings }),
      },
    },
    async (req) => setWebhook(d, Number(req.params.botId), req.body.url),
  );

  app.delete(
    '/bots/:botId/webhook',
    {
      schema: {
        tags,
        security,
        summary: 'Remove the webhook address',
        params: params('botId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await deleteWebhook(d, Number(req.params.botId));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/bots/:botId/webhook/secret',
    {
      schema: {
        tags,
        security,
        summary: 'Rotate the signing secret (signs from the next try on)',
        params: params('botId'),
        response: responses({ 200: WebhookSecret }),
      },
    },
    async (req) => rotateWebhookSecret(d, Number(req.params.botId)),
  );

  app.post(
    '/bots/:botId/webhook/test',
    {
      schema: {
        tags,
        security,
        summary: 'Send a WEBHOOK_TEST event through the delivery path (D40)',
        params: params('botId'),
        response: responses({ 200: Delivery }),
      },
    },
    async (req) => {
      const delivery = await sendTestEvent(d, Number(req.params.botId));
      deps.webhooks?.wake();
      return delivery;
    },
  );

  app.get(
    '/bots/:botId/deliveries',
    {
      schema: {
        tags,
        security,
        summary: 'Recent deliveries, newest first (D40)',
        params: params('botId'),
        response: responses({ 200: DeliveryList }),
      },
    },
    async (req) => listDeliveries(d, Number(req.params.botId)),
  );

  app.post(
    '/bots/:botId/deliveries/:id/redeliver',
    {
      schema: {
        tags,
        security,
        summary: 'Try a delivery again now, same delivery id (D39)',
        params: params('botId', 'id'),
        response: responses({ 200: Delivery }),
      },
    },
    async (req) => {
      const delivery = await redeliver(d, Number(req.params.botId), Number(req.params.id));
      deps.webhooks?.wake();
      return delivery;
    },
  );
};
