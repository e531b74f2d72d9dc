import { createHash, randomBytes } from 'node:crypto';

/**
 * D65: an interaction's token is its own secret (it authorizes the callback and follow-ups
 * without an Authorization header). Only its SHA-256 is stored; a look-up is an exact match on
 * the hash (no timing signal about the token).
 */
export const INTERACTION_TOKEN_PREFIX = 'pit_';

export function newInteractionToken(): string {
  return INTERACTION_TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function hashInteractionToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
