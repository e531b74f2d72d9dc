import type { PushSubscriptionBody } from '@parley/protocol';
import { forbidden, invalid, notFound } from '../../errors/app-error.js';
import { checkTarget, UnsafeTargetError } from '../../webhooks/ssrf-guard.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';

/** RFC 8291: the browser's P-256 public key, uncompressed (0x04 ‖ x ‖ y). */
const P256DH_BYTES = 65;
/** RFC 8291: the auth secret. */
const AUTH_BYTES = 16;

function decodeKey(field: string, value: string, bytes: number): string {
  const raw = Buffer.from(value, 'base64url');
  if (raw.length !== bytes || (bytes === P256DH_BYTES && raw[0] !== 0x04))
    throw invalid(
      field,
      bytes === P256DH_BYTES
        ? 'must be an uncompressed P-256 public key (65 bytes, base64url)'
        : `must be ${bytes} bytes (base64url)`,
    );
  // Stored as the browser's PushSubscription.toJSON() gives them, without padding.
  return value.replace(/=+$/, '');
}

/**
 * D66 `POST /app/v1/push-subscriptions`: this device's subscription, tied to the session that
 * made it (it goes with that session). The endpoint is a URL the server will POST to, so it is
 * checked like a webhook address (D37: https, a public address; http and loopback only where the
 * operator allows insecure and private targets — development and tests), and checked again at
 * every delivery. The same endpoint again replaces its row (a browser re-subscribing, or another
 * person signing in on it): the newest session owns it.
 */
export async function subscribePush(
  d: Domain,
  p: Principal,
  body: PushSubscriptionBody,
): Promise<{ id: number }> {
  if (p.isBot || p.session === undefined)
    throw forbidden('Push subscriptions belong to a person signed in on a device');
  const session = p.session;
  const p256dh = decodeKey('keys.p256dh', body.keys.p256dh, P256DH_BYTES);
  const auth = decodeKey('keys.auth', body.keys.auth, AUTH_BYTES);
  try {
    await checkTarget(body.endpoint, {
      allowInsecure: d.config.webhookAllowInsecure,
      allowPrivate: d.config.webhookAllowPrivate,
    });
  } catch (err) {
    if (err instanceof UnsafeTargetError) throw invalid('endpoint', err.message);
    throw err;
  }
  const id = d.ids.next();
  await d.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('push_subscriptions').where('endpoint', '=', body.endpoint).execute();
    await trx
      .insertInto('push_subscriptions')
      .values({
        id,
        user_id: p.userId,
        session_hash: session.hash,
        endpoint: body.endpoint,
        p256dh,
        auth,
        created_at: d.clock.now(),
      })
      .execute();
  });
  d.push?.subscribed();
  return { id };
}

/** D66 `DELETE /app/v1/push-subscriptions/:id`: one's own only; anyone else's is 404. */
export async function unsubscribePush(d: Domain, p: Principal, id: number): Promise<void> {
  const res = await d.db
    .deleteFrom('push_subscriptions')
    .where('id', '=', id)
    .where('user_id', '=', p.userId)
    .executeTakeFirst();
  if (Number(res.numDeletedRows) === 0) throw notFound('push subscription');
}

/** A person's subscriptions, for the sender. */
export async function subscriptionsOf(d: Domain, userIds: readonly number[]) {
  if (userIds.length === 0) return [];
  return d.db
    .selectFrom('push_subscriptions')
    .select(['id', 'user_id', 'endpoint', 'p256dh', 'auth'])
    .where('user_id', 'in', [...userIds])
    .execute();
}

/** D66: the push service answered 404 or 410: the subscription is gone for good. */
export async function dropSubscription(d: Domain, id: number): Promise<void> {
  await d.db.deleteFrom('push_subscriptions').where('id', '=', id).execute();
}
