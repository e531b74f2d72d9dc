import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * D38: `X-Service-Signature: sha256=<hex HMAC-SHA256(secret, exact body bytes)>`, the same
 * scheme GitHub uses — the body is serialized once and those exact bytes are signed and sent.
 */
export function sign(secret: string, body: string | Buffer): string {
  return 'sha256=' + createHmac('sha256', secret).update(body).digest('hex');
}

/** Constant-time check of a received signature (what a receiver does; our SDK and tests use it). */
export function verify(secret: string, body: string | Buffer, signature: string): boolean {
  const expected = Buffer.from(sign(secret, body));
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
