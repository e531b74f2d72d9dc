import { AuthResult, LoginBody, RegisterBody } from '@parley/protocol';
import { login, logout, register } from '../../../domain/accounts/accounts.service.js';
import type { ApiPlugin } from '../../app.js';
import { principalOf } from '../../plugins/auth.js';
import { clearSessionCookie, setSessionCookie } from '../../plugins/person-auth.js';
import { NoContent, responses } from '../../schemas.js';
import { APP_SECURITY, APP_TAGS, NO_SECURITY } from './route-meta.js';

/** D46–D47: register, log in, log out. Register and login take no session (D45). */
export const authRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;

  app.post(
    '/auth/register',
    {
      config: { public: true },
      schema: {
        tags: APP_TAGS,
        security: NO_SECURITY,
        summary:
          'Create an account (PARLEY_REGISTRATION: invite | open | closed) and log in; sets the session cookie (D46)',
        body: RegisterBody,
        response: responses({ 201: AuthResult }),
      },
    },
    async (req, reply) => {
      const out = await register(d, req.body, req.headers['user-agent']);
      setSessionCookie(reply, deps, out.token);
      return reply.code(201).send(out);
    },
  );

  app.post(
    '/auth/login',
    {
      config: { public: true },
      schema: {
        tags: APP_TAGS,
        security: NO_SECURITY,
        summary:
          'Log in by name (ignoring case) and password; 5 failures for a name from one address in 15 min lock it there (429, D70); sets the session cookie (D46)',
        body: LoginBody,
        response: responses({ 200: AuthResult }),
      },
    },
    async (req, reply) => {
      const out = await login(d, req.body, req.headers['user-agent'], req.ip);
      setSessionCookie(reply, deps, out.token);
      return out;
    },
  );

  app.post(
    '/auth/logout',
    {
      schema: {
        tags: APP_TAGS,
        security: APP_SECURITY,
        summary: 'End the current session and clear the cookie (D47)',
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await logout(d, principalOf(req));
      clearSessionCookie(reply, deps);
      return reply.code(204).send(null);
    },
  );
};
