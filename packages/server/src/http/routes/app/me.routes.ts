import { DmList, MyGuilds, PatchMeBody, ReadBody, ReadStates, User } from '@parley/protocol';
import {
  getMe,
  leaveGuild,
  markRead,
  myDms,
  myGuilds,
  patchMe,
  readStates,
} from '../../../domain/me/me.service.js';
import { getUser } from '../../../domain/users/get-user.js';
import type { ApiPlugin } from '../../app.js';
import { actorOfRequest } from '../../plugins/actor.js';
import { principalOf } from '../../plugins/auth.js';
import { NoContent, params, responses } from '../../schemas.js';
import { APP_SECURITY, APP_TAGS } from './route-meta.js';

/** D48: the person themselves, their guilds and DMs, other users, read states. */
export const meRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;
  const base = { tags: APP_TAGS, security: APP_SECURITY };

  app.get(
    '/users/@me',
    { schema: { ...base, summary: 'The person (D48)', response: responses({ 200: User }) } },
    async (req) => getMe(d, principalOf(req)),
  );

  app.patch(
    '/users/@me',
    {
      schema: {
        ...base,
        summary: 'Rename (unique ignoring case: 409) or set the avatar (null: the default) (D48)',
        body: PatchMeBody,
        response: responses({ 200: User }),
      },
    },
    async (req) => patchMe(d, principalOf(req), req.body),
  );

  app.get(
    '/users/@me/guilds',
    {
      schema: {
        ...base,
        summary: "The person's guilds (D48)",
        response: responses({ 200: MyGuilds }),
      },
    },
    async (req) => myGuilds(d, principalOf(req)),
  );

  app.delete(
    '/users/@me/guilds/:guildId',
    {
      schema: {
        ...base,
        summary: 'Leave a guild (the owner cannot: 409) (D48)',
        params: params('guildId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await leaveGuild(d, principalOf(req), Number(req.params.guildId));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/users/@me/dms',
    {
      schema: {
        ...base,
        summary: "The person's DM channels, newest activity first (D48)",
        response: responses({ 200: DmList }),
      },
    },
    async (req) => myDms(d, principalOf(req)),
  );

  app.get(
    '/users/@me/read-states',
    {
      schema: {
        ...base,
        summary: "The person's read marks, DMs included (D48)",
        response: responses({ 200: ReadStates }),
      },
    },
    async (req) => readStates(d, principalOf(req)),
  );

  app.get(
    '/users/:userId',
    {
      schema: {
        ...base,
        summary: 'A user who shares a guild or a DM with the person (else 404) (D48)',
        params: params('userId'),
        response: responses({ 200: User }),
      },
    },
    async (req) => getUser(d, actorOfRequest(req), Number(req.params.userId)),
  );

  app.put(
    '/channels/:channelId/read',
    {
      schema: {
        ...base,
        summary: 'Mark a channel read up to a message; never moves backwards (D48)',
        params: params('channelId'),
        body: ReadBody,
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await markRead(d, principalOf(req), Number(req.params.channelId), req.body.messageId);
      return reply.code(204).send(null);
    },
  );
};
