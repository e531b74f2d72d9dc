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

/**
 * D68: the Standard Webhooks key is the bytes the secret encodes: `whsec_` + base64. Secrets made
 * before D68 are base64url; Node's decoder reads both alphabets, so their key is their
 * base64url-decoded bytes, as D68 says.
 */
export function standardKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}

/** D68: `v1,<base64 HMAC-SHA256(key, id + "." + timestamp + "." + body)>`. */
export function standardSignature(
  secret: string,
  id: string,
  timestampS: number,
  body: string | Buffer,
): string {
  const mac = createHmac('sha256', standardKey(secret))
    .update(`${id}.${timestampS}.`)
    .update(body)
    .digest('base64');
  return `v1,${mac}`;
}

/**
 * The signing headers of one delivery: D38's (`X-Service-Signature`, `-Delivery`, `-Timestamp`,
 * unchanged) and D68's Standard Webhooks three (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`), which sign the id and the time too so neither can be replayed altered.
 */
export function signatureHeaders(
  secret: string,
  body: string | Buffer,
  deliveryId: string,
  timestampS: number,
): Record<string, string> {
  return {
    'x-service-signature': sign(secret, body),
    'x-service-delivery': deliveryId,
    'x-service-timestamp': String(timestampS),
    'webhook-id': deliveryId,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': standardSignature(secret, deliveryId, timestampS, body),
  };
}
