import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authenticate, bearerToken, unauthorized } from '../../domain/auth/authenticate.js';
import type { Principal } from '../../domain/auth/principal.js';
import { AppError } from '../../errors/app-error.js';
import type { AppDeps } from '../app.js';
import { SESSION_PREFIX } from '../../domain/auth/session-token.js';
import { requireSameSiteWrite, sessionCookieOf, setSessionCookie } from './person-auth.js';
import { chargeBucket, type RateLimits, type Step } from './rate-limit.js';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** The authenticated caller; routes under /api/v1 only run after `botAuth` succeeded. */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw unauthorized();
  return req.principal;
}

/**
 * D8–D10: every /api/v1 request authenticates before anything else happens to it, by
 * `Authorization: Bearer` — or, without that header, by a person's session cookie (D70 revises
 * D10's bearer-only reading: the web app keeps no token within reach of script), under D47's
 * rule that a cookie-authenticated write carries this site's Origin (403 otherwise). Only a
 * person's session opens /api/v1 by cookie: a bot token there is refused like an unknown one.
 */
export const botAuth =
  (deps: AppDeps): Step =>
  (req, reply) => {
    const header = req.headers.authorization;
    const cookie = header === undefined || header === '' ? sessionCookieOf(req) : undefined;
    // PostgreSQL: the cache version read for the authentication serves the access check too
    // (Principal.pinned); on SQLite a read costs nothing.
    const pin = deps.domain.dialect === 'postgres';
    if (cookie === undefined) {
      // a cached bot is known at once: no promise (issue 29)
      const principal = authenticate(deps.domain, deps.codec, bearerToken(header), pin);
      if (principal instanceof Promise)
        return principal.then((p) => {
          req.principal = p;
        });
      req.principal = principal;
      return;
    }
    return byCookie(deps, req, reply, cookie, pin);
  };

async function byCookie(
  deps: AppDeps,
  req: FastifyRequest,
  reply: FastifyReply,
  cookie: string,
  pin: boolean,
): Promise<void> {
  if (!cookie.startsWith(SESSION_PREFIX)) throw unauthorized('Unknown or ended session');
  const principal = await authenticate(deps.domain, deps.codec, cookie, pin);
  requireSameSiteWrite(req, deps);
  req.principal = principal;
  req.authVia = 'cookie';
  if (principal.session?.touched) setSessionCookie(reply, deps, cookie);
}

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** The Authorization header carries the admin token (constant-time comparison of hashes). */
export function isAdminBearer(header: string | undefined, adminToken: string): boolean {
  let given: string;
  try {
    given = bearerToken(header);
  } catch {
    return false;
  }
  return timingSafeEqual(digest(given), digest(adminToken));
}

/**
 * D41: the operator API. Without a configured admin token the whole surface is 404 (it does not
 * exist); with one, the bearer is compared in constant time (hashes of equal length). D70: a
 * missing or wrong token draws from the client address's `global` bucket, like a failed
 * authentication under /api/v1 (D25/D54): past its burst the answer is 429, so the operator
 * token cannot be guessed at the speed of the network.
 */
export const adminAuth =
  (adminToken: string | undefined, limits?: RateLimits) =>
  async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    if (adminToken === undefined)
      throw new AppError('NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0] ?? ''}`);
    try {
      const given = bearerToken(req.headers.authorization);
      if (!timingSafeEqual(digest(given), digest(adminToken)))
        throw unauthorized('Invalid admin token');
    } catch (err) {
      // Past the bucket's burst this throws 429 RATE_LIMIT_EXCEEDED instead.
      if (limits) await chargeBucket(limits, 'global', { kind: 'address', ip: req.ip });
      throw err;
    }
  };
