import type { Config } from '../../config/config.js';
import type { Db } from '../../storage/db.js';
import { loadWebPush } from '../../lazy-modules.js';

const KEY = 'vapid_keys';

/** D66: the server's VAPID identity (RFC 8292): one P-256 key pair and a contact. */
export interface VapidKeys {
  /** base64url of the uncompressed P-256 point (65 bytes): the web app's applicationServerKey */
  readonly publicKey: string;
  /** base64url of the 32-byte private scalar. Never logged, never sent. */
  readonly privateKey: string;
  /** `mailto:` or `https:` (the JWT's `sub`) */
  readonly subject: string;
}

/**
 * D66: like the token secret (D8, domain/auth/secret.ts): configured
 * (PARLEY_VAPID_PUBLIC_KEY / PARLEY_VAPID_PRIVATE_KEY), or generated once and kept in the
 * database — shared by every node, and kept across restarts, because every browser's
 * subscription is bound to the public key it was made with (a new key would silently orphan
 * them all).
 */
export async function loadVapidKeys(db: Db, config: Config, origin: string): Promise<VapidKeys> {
  const subject = config.vapidSubject ?? defaultSubject(origin);
  if (config.vapidPublicKey !== undefined && config.vapidPrivateKey !== undefined)
    return { publicKey: config.vapidPublicKey, privateKey: config.vapidPrivateKey, subject };
  const stored = () => db.selectFrom('settings').select('value').where('key', '=', KEY);
  let row = await stored().executeTakeFirst();
  if (!row) {
    // The first start: made once (web-push is loaded for it only; lazy-modules.ts).
    const fresh = (await loadWebPush()).generateVAPIDKeys();
    // Two nodes starting at once: the first insert wins, both read the winner.
    await db
      .insertInto('settings')
      .values({ key: KEY, value: JSON.stringify(fresh) })
      .onConflict((oc) => oc.column('key').doNothing())
      .execute();
    row = await stored().executeTakeFirstOrThrow();
  }
  const kept = JSON.parse(row.value) as { publicKey: string; privateKey: string };
  return { publicKey: kept.publicKey, privateKey: kept.privateKey, subject };
}

/** The public URL when it is https (RFC 8292 allows it), else a mailto: at its host. */
export function defaultSubject(origin: string): string {
  const u = new URL(origin);
  if (u.protocol === 'https:' && u.hostname !== 'localhost') return u.origin;
  const host = u.hostname.replace(/^\[|\]$/g, '');
  return `mailto:operator@${/^[A-Za-z0-9.-]+$/.test(host) && host.includes('.') ? host : 'localhost.localdomain'}`;
}
