import type { FastifyRequest } from 'fastify';
import {
  actorOf,
  operator,
  type CallerActor,
  type OperatorActor,
} from '../../domain/guilds/actor.js';
import { invalid } from '../../errors/app-error.js';
import { principalOf } from './auth.js';

/** D59: at most this many characters of X-Audit-Log-Reason (after URL-decoding). */
export const MAX_REASON = 512;

/**
 * D59/D60: the X-Audit-Log-Reason of a mutating request — URL-encoded, at most 512 characters
 * once decoded (400 otherwise); absent or empty: no reason.
 */
export function auditReason(req: FastifyRequest): string | null {
  const raw = req.headers['x-audit-log-reason'];
  if (raw === undefined) return null;
  const text = Array.isArray(raw) ? raw.join(',') : raw;
  let reason: string;
  try {
    reason = decodeURIComponent(text);
  } catch {
    throw invalid('X-Audit-Log-Reason', 'must be URL-encoded (D59)');
  }
  if ([...reason].length > MAX_REASON)
    throw invalid('X-Audit-Log-Reason', `must be at most ${MAX_REASON} characters (D59)`);
  return reason === '' ? null : reason;
}

/** The person or bot calling /api/v1 or /app/v1, with the request's reason. */
export const actorOfRequest = (req: FastifyRequest): CallerActor =>
  actorOf(principalOf(req), auditReason(req));

/** The operator calling /admin/v1, with the request's reason. */
export const operatorOfRequest = (req: FastifyRequest): OperatorActor => operator(auditReason(req));
