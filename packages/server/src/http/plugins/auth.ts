import { timingSafeEqual, createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authenticate, bearerToken, unauthorized } from '../../domain/auth/authenticate.js';
import type { Principal } from '../../domain/auth/principal.js';
import { AppError } from '../../errors/app-error.js';
import type { AppDeps } from '../app.js';

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

/** D8–D10: every /api/v1 request authenticates before anything else happens to it. */
export const botAuth =
  (deps: AppDeps) =>
  async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    const token = bearerToken(req.headers.authorization);
    req.principal = await authenticate(deps.domain, deps.codec, token);
  };

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
 * exist); with one, the bearer is compared in constant time (hashes of equal length).
 */
export const adminAuth =
  (adminToken: string | undefined) =>
  async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    if (adminToken === undefined)
      throw new AppError('NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0] ?? ''}`);
    const given = bearerToken(req.headers.authorization);
    if (!timingSafeEqual(digest(given), digest(adminToken)))
      throw unauthorized('Invalid admin token');
  };
