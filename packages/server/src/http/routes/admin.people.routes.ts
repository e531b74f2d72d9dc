import { Type } from 'typebox';
import {
  ADMIN_PAGE,
  AdminStats,
  AdminUserDetail,
  AdminUserList,
  AdminUserPatch,
  CursorParam,
} from '@parley/protocol';
import { stats } from '../../domain/admin/stats.js';
import {
  deleteUser,
  endUserSessions,
  listUsers,
  updateUser,
} from '../../domain/users/users.admin.js';
import { getUser } from '../../domain/users/get-user.js';
import { operatorOfRequest } from '../plugins/actor.js';
import { openConnections } from '../../metrics/metrics.js';
import type { ApiPlugin } from '../app.js';
import { NoContent, num, params, responses } from '../schemas.js';

/** D52: `?after=<id>&limit=1..1000&q=<name contains>`, id ascending. */
export const AdminPageQuery = Type.Object({
  after: Type.Optional(CursorParam),
  limit: Type.Optional(
    Type.Integer({ minimum: 1, maximum: ADMIN_PAGE.max, default: ADMIN_PAGE.default }),
  ),
  q: Type.Optional(
    Type.String({ maxLength: 100, description: 'name contains this (case-insensitive)' }),
  ),
});

export const pageOf = (q: { after?: string; limit?: number; q?: string }) => ({
  after: num(q.after),
  limit: q.limit ?? ADMIN_PAGE.default,
  q: q.q,
});

export const tags = ['operator'];
export const security = [{ adminToken: [] }];

/** D52: users (people and bot users) and the platform's counts. */
export const adminPeopleRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;

  app.get(
    '/users',
    {
      schema: {
        tags,
        security,
        summary: 'Users by id ascending, optionally filtered by name (D52)',
        querystring: AdminPageQuery,
        response: responses({ 200: AdminUserList }),
      },
    },
    async (req) => listUsers(d, pageOf(req.query)),
  );

  app.get(
    '/users/:userId',
    {
      schema: {
        tags,
        security,
        summary: 'One user, with its guilds, bots and session count',
        params: params('userId'),
        response: responses({ 200: AdminUserDetail }),
      },
    },
    async (req) => getUser(d, operatorOfRequest(req), Number(req.params.userId)),
  );

  app.patch(
    '/users/:userId',
    {
      schema: {
        tags,
        security,
        summary: 'Rename, set a password or avatar, disable or enable (disabling ends sessions)',
        params: params('userId'),
        body: AdminUserPatch,
        response: responses({ 200: AdminUserDetail }),
      },
    },
    async (req) => updateUser(d, Number(req.params.userId), req.body),
  );

  app.delete(
    '/users/:userId',
    {
      schema: {
        tags,
        security,
        summary:
          'Delete a person and what hangs on them (owned guilds and bots, memberships, messages)',
        params: params('userId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await deleteUser(d, Number(req.params.userId));
      return reply.code(204).send(null);
    },
  );

  app.delete(
    '/users/:userId/sessions',
    {
      schema: {
        tags,
        security,
        summary: "End every one of the person's sessions",
        params: params('userId'),
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await endUserSessions(d, Number(req.params.userId));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/stats',
    {
      schema: {
        tags,
        security,
        summary: 'Counts: users, guilds, messages, connections, webhook backlog (D52)',
        response: responses({ 200: AdminStats }),
      },
    },
    async () => stats(d, openConnections('person')),
  );
};
