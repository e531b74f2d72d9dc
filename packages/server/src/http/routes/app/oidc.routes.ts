import { AuthConfig, OidcLink, OidcLinkStart } from '@parley/protocol';
import { AppError } from '../../../errors/app-error.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import {
  CALLBACK_PATH,
  finishFlow,
  FLOW_TTL_MS,
  linkState,
  OidcFailure,
  requireOidc,
  startFlow,
  unlink,
} from '../../../domain/oidc/oidc.service.js';
import type { ApiPlugin, AppDeps } from '../../app.js';
import { principalOf } from '../../plugins/auth.js';
import { setSessionCookie } from '../../plugins/person-auth.js';
import { NoContent, responses } from '../../schemas.js';
import { APP_SECURITY, APP_TAGS, NO_SECURITY } from './route-meta.js';

/** D69: the cookie that binds a flow to the browser that began it (its value is the state). */
export const FLOW_COOKIE = 'parley_oidc';
const FLOW_COOKIE_PATH = '/app/v1/auth/oidc';

const Redirect = Type.Null({ description: 'A redirect (Location)' });

function setFlowCookie(reply: FastifyReply, deps: AppDeps, state: string): void {
  reply.setCookie(FLOW_COOKIE, state, {
    httpOnly: true,
    // Lax: the cookie comes along on the provider's top-level redirect back to the callback.
    sameSite: 'lax',
    path: FLOW_COOKIE_PATH,
    secure: deps.domain.urls.origin.startsWith('https:'),
    maxAge: FLOW_TTL_MS / 1000,
  });
}

function clearFlowCookie(reply: FastifyReply, deps: AppDeps): void {
  reply.clearCookie(FLOW_COOKIE, {
    httpOnly: true,
    sameSite: 'lax',
    path: FLOW_COOKIE_PATH,
    secure: deps.domain.urls.origin.startsWith('https:'),
  });
}

const cookieOf = (req: FastifyRequest, name: string): string | undefined =>
  (req as { cookies?: Record<string, string | undefined> }).cookies?.[name] || undefined;

/** D69: where the web app shows a failed sign-in (login page) or link (settings). */
function failurePage(err: OidcFailure): string {
  return `${err.linking ? '/settings' : '/login'}?sso_error=${err.code}`;
}

/**
 * D69: sign-in with the OpenID provider — the login page's configuration, the flow's start and
 * callback (browser navigations: they answer redirects, and every failure ends on the web app's
 * login or settings page with `?sso_error=<code>`, never an error page), and the person's link.
 */
export const oidcRoutes: ApiPlugin = async (app, { deps }) => {
  const d = deps.domain;
  const me = { tags: APP_TAGS, security: APP_SECURITY };
  const open = { tags: APP_TAGS, security: NO_SECURITY };

  app.get(
    '/auth/config',
    {
      config: { public: true },
      schema: {
        ...open,
        summary:
          'How people sign in here: passwords on or off, registration mode, the OpenID provider (D46, D69)',
        response: responses({ 200: AuthConfig }),
      },
    },
    async () => ({
      passwordLogin: d.config.passwordLogin,
      registration: d.config.registration,
      oidc: d.oidc ? { name: d.oidc.name, startUrl: '/app/v1/auth/oidc/start' } : null,
    }),
  );

  app.get(
    '/auth/oidc/start',
    {
      config: { public: true },
      schema: {
        // A browser navigation that answers only redirects, like the web app's pages: in
        // docs/people-api.md, not the OpenAPI document (whose operations answer 2xx bodies).
        hide: true,
        ...open,
        summary:
          'Begin signing in with the OpenID provider: redirects there (PKCE S256, state, nonce); `invite` is carried through and joins its guild on a first sign-in (D69). 404 when no provider is configured',
        querystring: Type.Object(
          { invite: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) },
          { additionalProperties: false },
        ),
        response: responses({ 302: Redirect }),
      },
    },
    async (req, reply) => {
      const oidc = requireOidc(d);
      try {
        const { url, state } = await startFlow(d, oidc, { invite: req.query.invite });
        setFlowCookie(reply, deps, state);
        return reply.redirect(url, 302);
      } catch (err) {
        if (!(err instanceof OidcFailure)) throw err;
        req.log.warn({ oidc: err.code }, `OpenID sign-in could not start: ${err.detail}`);
        return reply.redirect(failurePage(err), 302);
      }
    },
  );

  app.get(
    '/auth/oidc/callback',
    {
      config: { public: true },
      schema: {
        hide: true,
        ...open,
        summary: `The OpenID provider's redirect back (register ${CALLBACK_PATH} at the provider): checks state, exchanges the code, checks the ID token (D69); signs in (the session cookie, D47), creates the person as registration allows, or links; redirects into the web app, or to its login page with ?sso_error=<code>`,
        querystring: Type.Object(
          {
            code: Type.Optional(Type.String({ maxLength: 4096 })),
            state: Type.Optional(Type.String({ maxLength: 512 })),
            iss: Type.Optional(Type.String({ maxLength: 2048 })),
            error: Type.Optional(Type.String({ maxLength: 256 })),
            error_description: Type.Optional(Type.String({ maxLength: 2048 })),
          },
          // Providers add their own (session_state, scope, …): passed on, never a 400.
          { additionalProperties: Type.String({ maxLength: 4096 }) },
        ),
        response: responses({ 302: Redirect }),
      },
    },
    async (req, reply) => {
      const oidc = requireOidc(d);
      clearFlowCookie(reply, deps);
      try {
        const out = await finishFlow(d, oidc, {
          query: req.query,
          cookieState: cookieOf(req, FLOW_COOKIE),
          userAgent: req.headers['user-agent'],
        });
        if (out.kind === 'signin') setSessionCookie(reply, deps, out.token);
        return reply.redirect(out.to, 302);
      } catch (err) {
        if (err instanceof OidcFailure) {
          req.log.warn({ oidc: err.code }, `OpenID sign-in refused: ${err.detail}`);
          return reply.redirect(failurePage(err), 302);
        }
        // Never an error page for a browser in the middle of signing in (the cause is logged).
        req.log.error({ err }, 'OpenID sign-in failed');
        return reply.redirect('/login?sso_error=failed', 302);
      }
    },
  );

  app.get(
    '/users/@me/oidc',
    {
      schema: {
        ...me,
        summary:
          "Whether the person's account is linked to the OpenID provider, and whether it may be unlinked (D69); 404 when no provider is configured",
        response: responses({ 200: OidcLink }),
      },
    },
    async (req) => linkState(d, requireOidc(d), principalOf(req)),
  );

  app.post(
    '/users/@me/oidc',
    {
      schema: {
        ...me,
        summary:
          "Begin linking the account to the OpenID provider: answers the provider's URL to navigate to (the callback links, then returns to /settings) (D69)",
        response: responses({ 200: OidcLinkStart }),
      },
    },
    async (req, reply) => {
      const oidc = requireOidc(d);
      try {
        const { url, state } = await startFlow(d, oidc, { linkUserId: principalOf(req).userId });
        setFlowCookie(reply, deps, state);
        return { url };
      } catch (err) {
        if (!(err instanceof OidcFailure)) throw err;
        // The provider cannot be reached: a temporary refusal, as for the database (D72).
        req.log.warn({ oidc: err.code }, `OpenID link could not start: ${err.detail}`);
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          'The sign-in provider cannot be reached; retry shortly',
          {
            retryAfter: 5,
            headers: { 'retry-after': '5' },
          },
        );
      }
    },
  );

  app.delete(
    '/users/@me/oidc',
    {
      schema: {
        ...me,
        summary:
          'Unlink the account from the OpenID provider; 409 when that would leave no way to sign in (no password, or passwords off) (D69)',
        response: responses({ 204: NoContent }),
      },
    },
    async (req, reply) => {
      await unlink(d, requireOidc(d), principalOf(req));
      return reply.code(204).send(null);
    },
  );
};
