import { CallbackBody, Invoked, InvokeBody, Message, ResponseMessage } from '@parley/protocol';
import { Type } from 'typebox';
import { invoke } from '../../domain/interactions/invoke.js';
import { callback, editOriginal, followUp } from '../../domain/interactions/respond.js';
import type { ApiPlugin } from '../app.js';
import { principalOf } from '../plugins/auth.js';
import { NoContent, responses } from '../schemas.js';
import { IdParam } from '@parley/protocol';

/** D65: the interaction token in a path (its own secret; no Authorization header). */
const TokenParam = Type.String({
  pattern: '^pit_[A-Za-z0-9_-]{43}$',
  description: 'the interaction token',
});

/**
 * D64–D65: invoking (a person), answering (the bot, authorized by the interaction's token in
 * the path for 15 minutes: these routes are `public`, charged to the client address's bucket).
 */
export const interactionRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;

  app.post(
    '/interactions',
    {
      schema: {
        tags: ['interactions'],
        summary:
          'Run a command (type 2), ask for autocomplete (type 4: answers the bot’s choices, waiting up to 3 s) or use a component (type 3) (D64–D65): 202 {id}',
        body: InvokeBody,
        response: responses({ 200: Invoked, 202: Invoked }),
      },
    },
    async (req, reply) => {
      const r = await invoke(d, principalOf(req), req.body);
      return reply.code(req.body.type === 4 ? 200 : 202).send(r);
    },
  );

  app.post(
    '/interactions/:interactionId/:token/callback',
    {
      schema: {
        tags: ['interactions'],
        summary:
          'Answer an interaction once (D65: 4 reply, 5 defer, 6 defer an update, 7 update the message, 8 autocomplete choices); a second → 409; 204',
        params: Type.Object({ interactionId: IdParam, token: TokenParam }),
        body: CallbackBody,
        response: responses({ 204: NoContent }),
      },
      config: { public: true },
    },
    async (req, reply) => {
      await callback(d, Number(req.params.interactionId), req.params.token, req.body);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/webhooks/:botId/:token',
    {
      schema: {
        tags: ['interactions'],
        summary: 'A follow-up message of an interaction, within its 15 minutes (D65)',
        params: Type.Object({ botId: IdParam, token: TokenParam }),
        body: ResponseMessage,
        response: responses({ 200: Message }),
      },
      config: { public: true },
    },
    async (req) => followUp(d, Number(req.params.botId), req.params.token, req.body),
  );

  app.patch(
    '/webhooks/:botId/:token/messages/@original',
    {
      schema: {
        tags: ['interactions'],
        summary:
          'Edit the original answer of an interaction (after a defer: its "thinking…" becomes the answer, same id), within 15 minutes (D65)',
        params: Type.Object({ botId: IdParam, token: TokenParam }),
        body: Type.Omit(ResponseMessage, ['flags']),
        response: responses({ 200: Message }),
      },
      config: { public: true },
    },
    async (req) => editOriginal(d, Number(req.params.botId), req.params.token, req.body),
  );
};
