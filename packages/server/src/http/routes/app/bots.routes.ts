import { Type } from 'typebox';
import {
  AddBotBody,
  Bot,
  BotToken,
  CreatedBot,
  CreateOwnBotBody,
  Delivery,
  DeliveryDetail,
  DeliveryList,
  Member,
  OwnedBotList,
  PatchBotBody,
  SetWebhookBody,
  UploadQuota,
  WebhookSecret,
  WebhookSettings,
} from '@parley/protocol';
import { resetBotToken } from '../../../domain/bots/bots.service.js';
import {
  addOwnBotToGuild,
  createOwnBot,
  deleteOwnBot,
  listOwnBots,
  ownBotQuota,
  patchOwnBot,
  requireOwnBot,
} from '../../../domain/bots/owner.service.js';
import {
  deleteWebhook,
  getDelivery,
  listDeliveries,
  redeliver,
  rotateWebhookSecret,
  sendTestEvent,
  setWebhook,
} from '../../../webhooks/webhooks.service.js';
import type { ApiPlugin } from '../../app.js';
import { principalOf } from '../../plugins/auth.js';
import { NoContent, params, responses } from '../../schemas.js';
import { APP_SECURITY, APP_TAGS } from './route-meta.js';

const DeliveriesQuery = Type.Object({
  state: Type.Optional(
    Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
  ),
});

/**
 * D50: a person's own bots, with the operator's webhook routes (D41) under /app/v1/bots/:botId.
 * Each route checks the bot is the caller's (someone else's → 404), then makes the same domain
 * call as the operator API.
 */
export const botOwnerRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;
  const base = { tags: APP_TAGS, security: APP_SECURITY };
  const own = async (req: Parameters<typeof principalOf>[0], botId: string) =>
    (await requireOwnBot(d, principalOf(req), Number(botId))).id;

  app.get(
    '/bots',
    {
      schema: {
        ...base,
        summary: "The person's bots, with webhook address and guilds (D50)",
        response: responses({ 200: OwnedBotList }),
      },
    },
    async (req) => listOwnBots(d, principalOf(req)),
  );

  app.post(
    '/bots',
    {
      schema: {
        ...base,
        summary: 'Create a bot (at most 3: the 4th → 409); its token is shown once (D50)',
        body: CreateOwnBotBody,
        response: responses({ 201: CreatedBot }),
      },
    },
    async (req, reply) =>
      reply.code(201).send(await createOwnBot(d, deps.codec, principalOf(req), req.body)),
  );

  app.patch(
    '/bots/:botId',
    {
      schema: {
        ...base,
        summary: "Change one's bot: name, description, avatar (null: the default) (D50)",
        params: params('botId'),
        body: PatchBotBody,
        response: responses({ 200: Bot }),
      },
    },
    async (req) => patchOwnBot(d, principalOf(req), Number(req.params.botId), req.body),
  );

  app.delete(
    '/bots/:botId',
    {
      schema: {
        ...base,
        summary:
          'Delete a bot: its token dies, its connection closes 4004, it leaves every guild (D50)',
        params: params('botId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await deleteOwnBot(d, principalOf(req), Number(req.params.botId));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/bots/:botId/token',
    {
      schema: {
        ...base,
        summary: 'Reset the bot token: the old one is refused at once (D8, D50)',
        params: params('botId'),
        response: responses({ 200: BotToken }),
      },
    },
    async (req) => resetBotToken(d, deps.codec, await own(req, req.params.botId)),
  );

  app.get(
    '/bots/:botId/quota',
    {
      schema: {
        ...base,
        summary: "The bot's upload quota (D24, D50)",
        params: params('botId'),
        response: responses({ 200: UploadQuota }),
      },
    },
    async (req) => ownBotQuota(d, principalOf(req), Number(req.params.botId)),
  );

  // D41 webhook routes, for the bot's owner.
  app.put(
    '/bots/:botId/webhook',
    {
      schema: {
        ...base,
        summary:
          'Set the webhook address (checked: https, public address — D37); answers the secret',
        params: params('botId'),
        body: SetWebhookBody,
        response: responses({ 200: WebhookSettings }),
      },
    },
    async (req) => setWebhook(d, await own(req, req.params.botId), req.body.url),
  );

  app.delete(
    '/bots/:botId/webhook',
    {
      schema: {
        ...base,
        summary: 'Remove the webhook address',
        params: params('botId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await deleteWebhook(d, await own(req, req.params.botId));
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/bots/:botId/webhook/secret',
    {
      schema: {
        ...base,
        summary: 'Rotate the signing secret (signs from the next try on)',
        params: params('botId'),
        response: responses({ 200: WebhookSecret }),
      },
    },
    async (req) => rotateWebhookSecret(d, await own(req, req.params.botId)),
  );

  app.post(
    '/bots/:botId/webhook/test',
    {
      schema: {
        ...base,
        summary: 'Send a WEBHOOK_TEST event through the delivery path (D40)',
        params: params('botId'),
        response: responses({ 200: Delivery }),
      },
    },
    async (req) => {
      const delivery = await sendTestEvent(d, await own(req, req.params.botId));
      deps.webhooks?.wake();
      return delivery;
    },
  );

  app.get(
    '/bots/:botId/deliveries',
    {
      schema: {
        ...base,
        summary: 'Recent deliveries, newest first; ?state= pending | delivered | failed (D40, D50)',
        params: params('botId'),
        querystring: DeliveriesQuery,
        response: responses({ 200: DeliveryList }),
      },
    },
    async (req) => listDeliveries(d, await own(req, req.params.botId), { state: req.query.state }),
  );

  app.get(
    '/bots/:botId/deliveries/:id',
    {
      schema: {
        ...base,
        summary:
          'One delivery with each try: time, status, latency, error, first 4 KiB of the answer (D50)',
        params: params('botId', 'id'),
        response: responses({ 200: DeliveryDetail }),
      },
    },
    async (req) => getDelivery(d, await own(req, req.params.botId), Number(req.params.id)),
  );

  app.post(
    '/bots/:botId/deliveries/:id/redeliver',
    {
      schema: {
        ...base,
        summary: 'Try a delivery again now, same delivery id (D39)',
        params: params('botId', 'id'),
        response: responses({ 200: Delivery }),
      },
    },
    async (req) => {
      const delivery = await redeliver(d, await own(req, req.params.botId), Number(req.params.id));
      deps.webhooks?.wake();
      return delivery;
    },
  );

  app.put(
    '/guilds/:guildId/bots/:botId',
    {
      schema: {
        ...base,
        summary:
          "Add one's bot to a guild where one has ADMINISTRATOR (201, GUILD_MEMBER_ADD), or set its roles (200) (D50)",
        params: params('guildId', 'botId'),
        body: AddBotBody,
        response: responses({ 200: Member, 201: Member }),
      },
    },
    async (req, reply) => {
      const { member, created } = await addOwnBotToGuild(
        d,
        principalOf(req),
        Number(req.params.guildId),
        Number(req.params.botId),
        req.body ?? {},
      );
      return reply.code(created ? 201 : 200).send(member);
    },
  );
};
