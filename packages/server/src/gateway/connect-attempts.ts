import type { Db } from '../storage/db.js';
import { rawQuery } from '../storage/raw-sql.js';

/** D28: at least this long between a bot's connection attempts, on every node. */
export const MIN_ATTEMPT_GAP_MS = 1000;

/**
 * D72: D28 through the database, for when the shared limiter (Redis) cannot tell whether
 * another node accepted an attempt of this bot less than a second ago. One statement takes the
 * bot's slot atomically — PostgreSQL's row lock, SQLite's single writer — so two nodes cannot
 * both accept. Returns 0 when accepted, else the ms to wait.
 */
export async function takeConnectSlot(db: Db, botId: number, now: number): Promise<number> {
  const taken = await rawQuery<{ at: number }>(
    db,
    'insert into "gateway_connect_attempts" ("bot_id", "at") values (?, ?) ' +
      'on conflict ("bot_id") do update set "at" = excluded."at" ' +
      'where "gateway_connect_attempts"."at" <= ? returning "at"',
    [botId, now, now - MIN_ATTEMPT_GAP_MS],
  );
  if (taken.length > 0) return 0;
  const last = await db
    .selectFrom('gateway_connect_attempts')
    .select('at')
    .where('bot_id', '=', botId)
    .executeTakeFirst();
  return Math.max(1, Number(last?.at ?? now) + MIN_ATTEMPT_GAP_MS - now);
}
