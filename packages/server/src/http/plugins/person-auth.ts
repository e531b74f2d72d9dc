import type { FastifyReply, FastifyRequest } from 'fastify';
import { authenticate, bearerToken, unauthorized } from '../../domain/auth/authenticate.js';
import { AppError } from '../../errors/app-error.js';
import type { AppDeps } from '../app.js';

/** D47: the session cookie's name. */
export const SESSION_COOKIE = 'parley_session';

declare module 'fastify' {
  interface FastifyRequest {
    /** D47: how the person authenticated (cookie-authenticated writes need a same-site Origin) */
    authVia?: 'bearer' | 'cookie';
  }
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/**
 * D45/D47: `/app/v1` authenticates a person by `Authorization: Bearer <session token>` or, when
 * no Authorization header is sent, by the `parley_session` cookie. A bot token there is 403
 * (it is valid, but this API is not for bots). A cookie-authenticated request whose method is
 * not GET/HEAD must carry an `Origin` equal to the public origin: a cross-site form or script
 * cannot act with the person's cookie (SameSite=Lax already keeps it off cross-site
 * subrequests; this closes the rest).
 */
/**
 * D47: the session cookie — HttpOnly, SameSite=Lax, Path=/, Secure when the public URL is https.
 * It lives as long as an unused session does (PARLEY_SESSION_IDLE_DAYS) and is renewed when the
 * session's last use is written (at most once a minute), so an active person stays logged in.
 */
export function setSessionCookie(reply: FastifyReply, deps: AppDeps, token: string): void {
  reply.setCookie(SESSION_COOKIE, token, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: deps.domain.urls.origin.startsWith('https:'),
    maxAge: deps.domain.config.sessionIdleDays * 86_400,
  });
}

/** D47: logout clears the cookie (same attributes, expired). */
export function clearSessionCookie(reply: FastifyReply, deps: AppDeps): void {
  reply.clearCookie(SESSION_COOKIE, {
    httpOnly: true,
    sameSite: 'lax',
    path: '/',
    secure: deps.domain.urls.origin.startsWith('https:'),
  });
}

/** D47: the session cookie of a request, when it carries one (undefined when absent or empty). */
export function sessionCookieOf(req: FastifyRequest): string | undefined {
  const v = (req as { cookies?: Record<string, string | undefined> }).cookies?.[SESSION_COOKIE];
  return v === undefined || v === '' ? undefined : v;
}

/**
 * D47: a cookie-authenticated request whose method is not GET/HEAD must carry an `Origin` equal
 * to the public origin (403 otherwise): a cross-site form or script cannot act with the cookie.
 */
export function requireSameSiteWrite(req: FastifyRequest, deps: AppDeps): void {
  if (SAFE_METHODS.has(req.method)) return;
  if (req.headers.origin !== deps.domain.urls.origin)
    throw new AppError(
      'FORBIDDEN',
      'Cross-site request refused: a cookie-authenticated write must come from this site (Origin)',
    );
}

export const personAuth =
  (deps: AppDeps) =>
  async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const header = req.headers.authorization;
    const cookie = sessionCookieOf(req);
    let token: string;
    if (header !== undefined && header !== '') {
      token = bearerToken(header);
      req.authVia = 'bearer';
    } else if (cookie !== undefined) {
      token = cookie;
      req.authVia = 'cookie';
    } else {
      throw unauthorized('Missing session: log in, or send Authorization: Bearer <session token>');
    }
    // Principal.pinned: one cache version read for the authentication and the access check
    const principal = await authenticate(
      deps.domain,
      deps.codec,
      token,
      deps.domain.dialect === 'postgres',
    );
    if (principal.isBot)
      throw new AppError('FORBIDDEN', "The people's API /app/v1 does not take bot tokens");
    if (req.authVia === 'cookie') requireSameSiteWrite(req, deps);
    req.principal = principal;
    if (req.authVia === 'cookie' && principal.session?.touched)
      setSessionCookie(reply, deps, token);
  };
