import { createHash, randomBytes } from 'node:crypto';

/**
 * D41: a human user's session token is opaque (no dots, so it can never be mistaken for a bot
 * JWT). Only its SHA-256 is stored: a database leak does not leak usable tokens, and the lookup
 * by hash is an exact-match index probe (no timing signal about the token's value).
 */
export const SESSION_PREFIX = 'pus_';

export function newSessionToken(): string {
  return SESSION_PREFIX + randomBytes(32).toString('base64url');
}

export function hashSessionToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** D47: a session's public id (listing and ending sessions); never the token. */
export function newSessionId(): string {
  return randomBytes(12).toString('base64url');
}
