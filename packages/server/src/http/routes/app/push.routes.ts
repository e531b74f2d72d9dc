import { PushSubscriptionBody, PushSubscriptionCreated, VapidPublicKey } from '@parley/protocol';
import { subscribePush, unsubscribePush } from '../../../domain/push/subscriptions.service.js';
import { notFound } from '../../../errors/app-error.js';
import type { ApiPlugin } from '../../app.js';
import { principalOf } from '../../plugins/auth.js';
import { NoContent, params, responses } from '../../schemas.js';
import { APP_SECURITY, APP_TAGS } from './route-meta.js';

/** D66: Web Push — the server's VAPID key, and this device's subscription. */
export const pushRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;
  const base = { tags: APP_TAGS, security: APP_SECURITY };

  app.get(
    '/push-subscriptions/vapid-key',
    {
      schema: {
        ...base,
        summary:
          "The server's VAPID public key: the web app's `applicationServerKey` when it subscribes (D66)",
        response: responses({ 200: VapidPublicKey }),
      },
    },
    async () => {
      if (!deps.push) throw notFound('route');
      return { publicKey: deps.push.sender.publicKey };
    },
  );

  app.post(
    '/push-subscriptions',
    {
      schema: {
        ...base,
        summary:
          "Subscribe this device to Web Push: the browser's PushSubscription; the endpoint must be https and public (D37 rules). Tied to this session (D66)",
        body: PushSubscriptionBody,
        response: responses({ 201: PushSubscriptionCreated }),
      },
    },
    async (req, reply) => {
      const created = await subscribePush(d, principalOf(req), req.body);
      return reply.code(201).send(created);
    },
  );

  app.delete(
    '/push-subscriptions/:id',
    {
      schema: {
        ...base,
        summary: "Remove one of one's push subscriptions (anyone else's: 404) (D66)",
        params: params('id'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await unsubscribePush(d, principalOf(req), Number(req.params.id));
      return reply.code(204).send(null);
    },
  );
};
