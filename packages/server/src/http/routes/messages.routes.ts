import {
  EditMessageBody,
  EditedMessage,
  Message,
  MessageList,
  MESSAGE_PAGE,
  SendMessageBody,
} from '@parley/protocol';
import { guildMessages, dmMessages } from '../../domain/messages/messages.service.js';
import { answerWith } from '../answer.js';
import type { ApiPlugin } from '../app.js';
import { principalOf } from '../plugins/auth.js';
import { auditReason } from '../plugins/actor.js';
import { MessagePageQuery, NoContent, num, params, responses } from '../schemas.js';

/**
 * Guild channel messages (docs/interface.md#endpoints) and the same four operations on DM channels
 * (D17). One table of routes, two prefixes: the operations are the same, only the channel
 * resolution differs (done in the domain).
 */
export const messageRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;
  const kinds = [
    {
      prefix: '/channels/:channelId/messages',
      tag: 'messages',
      ops: guildMessages,
      what: 'guild channel',
    },
    { prefix: '/dm/channels/:channelId/messages', tag: 'dm', ops: dmMessages, what: 'DM channel' },
  ] as const;

  for (const { prefix, tag, ops, what } of kinds) {
    app.post(
      prefix,
      {
        schema: {
          tags: [tag],
          summary: `Send a message to a ${what} (D14, D15; bucket "messages", D25)`,
          params: params('channelId'),
          body: SendMessageBody,
          response: responses({ 200: Message }),
        },
        config: { bucket: 'messages' },
      },
      // the message's JSON text as its event recorded it (http/answer.ts)
      async (req, reply) =>
        answerWith(
          reply,
          await ops.send(d, principalOf(req), Number(req.params.channelId), req.body),
        ),
    );

    app.get(
      prefix,
      {
        schema: {
          tags: [tag],
          summary: `List messages of a ${what}, newest first (D16)`,
          params: params('channelId'),
          querystring: MessagePageQuery,
          response: responses({ 200: MessageList }),
        },
      },
      async (req) =>
        ops.list(d, principalOf(req), Number(req.params.channelId), {
          before: num(req.query.before),
          after: num(req.query.after),
          limit: req.query.limit ?? MESSAGE_PAGE.default,
        }),
    );

    app.put(
      `${prefix}/:messageId`,
      {
        schema: {
          tags: [tag],
          summary: `Edit a message the caller sent in a ${what} (D13, D18)`,
          params: params('channelId', 'messageId'),
          body: EditMessageBody,
          response: responses({ 200: EditedMessage }),
        },
      },
      async (req) =>
        ops.edit(
          d,
          principalOf(req),
          Number(req.params.channelId),
          Number(req.params.messageId),
          req.body,
        ),
    );

    app.delete(
      `${prefix}/:messageId`,
      {
        schema: {
          tags: [tag],
          summary:
            tag === 'dm'
              ? `Delete a message the caller sent in a ${what} (D13): 204`
              : `Delete a message: the caller's own (D13), or anyone's with MANAGE_MESSAGES (D59): 204`,
          params: params('channelId', 'messageId'),
          response: responses({ 204: NoContent }),
        },
      },
      async (req, reply) => {
        await ops.remove(
          d,
          principalOf(req),
          Number(req.params.channelId),
          Number(req.params.messageId),
          auditReason(req),
        );
        return reply.code(204).send(null);
      },
    );
  }
};
