import { randomBytes } from 'node:crypto';
import type { Db } from '../../storage/db.js';

const KEY = 'token_secret';

/**
 * D8: the HS256 key for bot tokens. Configured (PARLEY_TOKEN_SECRET), or generated once and kept
 * in the database — inside the data directory on SQLite, and shared by every node on PostgreSQL
 * (a key per node's data directory would make tokens fail on the other nodes). Never logged.
 */
export async function loadTokenSecret(db: Db, configured: string | undefined): Promise<Uint8Array> {
  if (configured !== undefined) return new TextEncoder().encode(configured);
  const fresh = randomBytes(32).toString('base64url');
  // Two nodes starting at once: the first insert wins, both read the winner.
  await db
    .insertInto('settings')
    .values({ key: KEY, value: fresh })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db
    .selectFrom('settings')
    .select('value')
    .where('key', '=', KEY)
    .executeTakeFirstOrThrow();
  return new TextEncoder().encode(row.value);
}
