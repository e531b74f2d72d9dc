import { Type } from 'typebox';
import { ChangePasswordBody, SessionList } from '@parley/protocol';
import { changePassword } from '../../../domain/accounts/accounts.service.js';
import { endSession, listSessions } from '../../../domain/accounts/sessions.service.js';
import type { ApiPlugin } from '../../app.js';
import { principalOf } from '../../plugins/auth.js';
import { NoContent, responses } from '../../schemas.js';
import { APP_SECURITY, APP_TAGS } from './route-meta.js';

/** D47: a session's public id (never the token). */
const SessionIdParams = Type.Object({
  id: Type.String({ pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'a session id (D47)' }),
});

/** D47: the person's sessions, ending one, changing the password. */
export const sessionRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;
  const base = { tags: APP_TAGS, security: APP_SECURITY };

  app.get(
    '/sessions',
    {
      schema: {
        ...base,
        summary: "The person's sessions, newest first; `current` is this one (D47)",
        response: responses({ 200: SessionList }),
      },
    },
    async (req) => listSessions(d, principalOf(req)),
  );

  app.delete(
    '/sessions/:id',
    {
      schema: {
        ...base,
        summary:
          "End one of one's sessions: its token gets 401, its gateway connections close 4004 (D47)",
        params: SessionIdParams,
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await endSession(d, principalOf(req), req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/users/@me/password',
    {
      schema: {
        ...base,
        summary:
          'Change the password (current one asked again: wrong → 403); ends every other session (D47)',
        body: ChangePasswordBody,
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await changePassword(d, principalOf(req), req.body);
      return reply.code(204).send(null);
    },
  );
};
