import { MessageList, ReactionUsersQuery, MemberUser } from '@parley/protocol';
import { Type } from 'typebox';
import { IdParam } from '@parley/protocol';
import { dmReactions, guildReactions } from '../../domain/messages/reactions.service.js';
import type { ApiPlugin } from '../app.js';
import { principalOf } from '../plugins/auth.js';
import { NoContent, num, params, responses } from '../schemas.js';

/** D63: one URL-encoded Unicode emoji in the path (checked against the Unicode data). */
const EmojiParams = Type.Object({
  channelId: IdParam,
  messageId: IdParam,
  emoji: Type.String({ minLength: 1, maxLength: 64 }),
});
const EmojiUserParams = Type.Object({
  channelId: IdParam,
  messageId: IdParam,
  emoji: Type.String({ minLength: 1, maxLength: 64 }),
  userId: IdParam,
});
const ReactionUsers = Type.Object(
  { users: Type.Array(MemberUser), hasMore: Type.Boolean() },
  { title: 'ReactionUsers', additionalProperties: false },
);
const Pins = Type.Object(
  { messages: MessageList.properties.messages },
  { title: 'Pins', additionalProperties: false },
);

/**
 * D63: reactions and pins, on guild channels and DM channels alike — one table of routes, two
 * prefixes (as messages.routes.ts).
 */
export const reactionRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;
  const kinds = [
    { prefix: '/channels/:channelId', tag: 'messages', ops: guildReactions, what: 'guild channel' },
    { prefix: '/dm/channels/:channelId', tag: 'dm', ops: dmReactions, what: 'DM channel' },
  ] as const;
  for (const { prefix, tag, ops, what } of kinds) {
    const base = `${prefix}/messages/:messageId/reactions/:emoji`;
    app.put(
      `${base}/@me`,
      {
        schema: {
          tags: [tag],
          summary: `React with one Unicode emoji to a message of a ${what} (D63): 204`,
          params: EmojiParams,
          response: responses({ 204: NoContent }),
        },
      },
      async (req, reply) => {
        const q = req.params;
        await ops.add(d, principalOf(req), Number(q.channelId), Number(q.messageId), q.emoji);
        return reply.code(204).send(null);
      },
    );
    app.delete(
      `${base}/@me`,
      {
        schema: {
          tags: [tag],
          summary: `Remove one's own reaction in a ${what} (D63): 204`,
          params: EmojiParams,
          response: responses({ 204: NoContent }),
        },
      },
      async (req, reply) => {
        const q = req.params;
        await ops.removeOwn(d, principalOf(req), Number(q.channelId), Number(q.messageId), q.emoji);
        return reply.code(204).send(null);
      },
    );
    app.delete(
      `${base}/:userId`,
      {
        schema: {
          tags: [tag],
          summary: `Remove someone's reaction in a ${what} (D63: MANAGE_MESSAGES): 204`,
          params: EmojiUserParams,
          response: responses({ 204: NoContent }),
        },
      },
      async (req, reply) => {
        const q = req.params;
        await ops.removeUser(
          d,
          principalOf(req),
          Number(q.channelId),
          Number(q.messageId),
          q.emoji,
          Number(q.userId),
        );
        return reply.code(204).send(null);
      },
    );
    app.get(
      base,
      {
        schema: {
          tags: [tag],
          summary: `Who reacted with this emoji, by ascending id (D63)`,
          params: EmojiParams,
          querystring: ReactionUsersQuery,
          response: responses({ 200: ReactionUsers }),
        },
      },
      async (req) => {
        const q = req.params;
        return ops.list(d, principalOf(req), Number(q.channelId), Number(q.messageId), q.emoji, {
          after: num(req.query.after),
          limit: req.query.limit ?? 25,
        });
      },
    );
    app.put(
      `${prefix}/pins/:messageId`,
      {
        schema: {
          tags: [tag],
          summary: `Pin a message of a ${what} (D63: MANAGE_MESSAGES; at most 50, else 409): 204`,
          params: params('channelId', 'messageId'),
          response: responses({ 204: NoContent }),
        },
      },
      async (req, reply) => {
        const q = req.params;
        await ops.pin(d, principalOf(req), Number(q.channelId), Number(q.messageId), true);
        return reply.code(204).send(null);
      },
    );
    app.delete(
      `${prefix}/pins/:messageId`,
      {
        schema: {
          tags: [tag],
          summary: `Unpin a message of a ${what} (D63: MANAGE_MESSAGES): 204`,
          params: params('channelId', 'messageId'),
          response: responses({ 204: NoContent }),
        },
      },
      async (req, reply) => {
        const q = req.params;
        await ops.pin(d, principalOf(req), Number(q.channelId), Number(q.messageId), false);
        return reply.code(204).send(null);
      },
    );
    app.get(
      `${prefix}/pins`,
      {
        schema: {
          tags: [tag],
          summary: `The pinned messages of a ${what}, newest pin first (D63)`,
          params: params('channelId'),
          response: responses({ 200: Pins }),
        },
      },
      async (req) => ops.pins(d, principalOf(req), Number(req.params.channelId)),
    );
  }
};
