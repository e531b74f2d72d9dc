import type { Transaction } from 'kysely';
import type { UploadQuota } from '@parley/protocol';
import type { Config } from '../../config/config.js';
import { AppError } from '../../errors/app-error.js';
import { iso } from '../../ids/clock.js';
import { sql, type Db } from '../../storage/db.js';
import { batchAtGroupEnd } from '../../storage/group-commit.js';
import { rawQuery, tuples } from '../../storage/raw-sql.js';
import type { Database } from '../../storage/schema.js';

/**
 * D24 upload quota: per user (bots and people alike, D10), counted in durable rows — bytes per UTC
 * day and per UTC month, and messages sent per UTC day (each raises that day's limit).
 */
export interface QuotaLimits {
  readonly dailyBase: number;
  readonly perMessage: number;
  readonly monthly: number;
}

export const quotaLimits = (c: Config): QuotaLimits => ({
  dailyBase: c.quotaDailyBytes,
  perMessage: c.quotaPerMessageBytes,
  monthly: c.quotaMonthlyBytes,
});

const DAY_MS = 86_400_000;

/** The counters an instant falls in: days and months since the epoch, UTC. */
export interface QuotaPeriod {
  readonly day: number;
  readonly month: number;
}

export function periodOf(ms: number): QuotaPeriod {
  const d = new Date(ms);
  return { day: Math.floor(ms / DAY_MS), month: d.getUTCFullYear() * 12 + d.getUTCMonth() };
}

/** D24: daily counters reset at 00:00 UTC … */
export const nextDailyReset = (ms: number): number => (Math.floor(ms / DAY_MS) + 1) * DAY_MS;

/** … monthly ones at 00:00 UTC on the 1st. */
export function nextMonthlyReset(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** D24: base + per-message bonus × messages sent today (capped to stay an exact JSON number). */
export const dailyLimitOf = (l: QuotaLimits, messagesSent: number): number =>
  Math.min(Number.MAX_SAFE_INTEGER, l.dailyBase + l.perMessage * messagesSent);

/** Parameters as bigint on both dialects (PostgreSQL would otherwise infer int4 and overflow). */
const big = (n: number) => sql<number>`cast(${n} as bigint)`;

async function ensureRows(trx: Transaction<Database>, userId: number, p: QuotaPeriod) {
  await trx
    .insertInto('upload_usage_daily')
    .values({ user_id: userId, day: p.day, bytes_used: 0, messages_sent: 0 })
    .onConflict((oc) => oc.columns(['user_id', 'day']).doNothing())
    .execute();
  await trx
    .insertInto('upload_usage_monthly')
    .values({ user_id: userId, month: p.month, bytes_used: 0 })
    .onConflict((oc) => oc.columns(['user_id', 'month']).doNothing())
    .execute();
}

/**
 * Charge `size` bytes to the user's counters inside the caller's transaction, or throw 429
 * QUOTA_EXCEEDED. Each counter moves by one guarded UPDATE (`used + size <= limit`, the limit
 * computed from the same row): PostgreSQL re-checks the guard under the row lock after a
 * concurrent commit, SQLite runs one write transaction at a time — so uploads racing each other
 * can never pass a limit together. Reaching the limit exactly is allowed (D24).
 */
export async function reserveQuota(
  trx: Transaction<Database>,
  limits: QuotaLimits,
  userId: number,
  size: number,
  now: number,
): Promise<QuotaPeriod> {
  const p = periodOf(now);
  await ensureRows(trx, userId, p);
  const daily = await trx
    .updateTable('upload_usage_daily')
    .set((eb) => ({ bytes_used: eb('bytes_used', '+', size) }))
    .where('user_id', '=', userId)
    .where('day', '=', p.day)
    .where(
      sql<boolean>`bytes_used + ${big(size)} <= ${big(limits.dailyBase)} + ${big(limits.perMessage)} * messages_sent`,
    )
    .executeTakeFirst();
  const monthly = await trx
    .updateTable('upload_usage_monthly')
    .set((eb) => ({ bytes_used: eb('bytes_used', '+', size) }))
    .where('user_id', '=', userId)
    .where('month', '=', p.month)
    .where(sql<boolean>`bytes_used + ${big(size)} <= ${big(limits.monthly)}`)
    .executeTakeFirst();
  const dailyHit = daily.numUpdatedRows === 0n;
  const monthlyHit = monthly.numUpdatedRows === 0n;
  if (dailyHit || monthlyHit) {
    // D24: resetAt is the reset of the limit that was hit; when both were, the later one (the
    // upload cannot pass before then).
    const resetAt = monthlyHit ? nextMonthlyReset(now) : nextDailyReset(now);
    const which = dailyHit && monthlyHit ? 'daily and monthly' : dailyHit ? 'daily' : 'monthly';
    throw new AppError('QUOTA_EXCEEDED', `This upload would exceed the ${which} upload quota`, {
      resetAt: iso(resetAt),
    });
  }
  return p;
}

/**
 * D24: a message sent raises today's limit. Called inside the send transaction, so the message
 * and its count commit together. In a group commit, counted at the group's end: no promise.
 */
export function countMessageForQuota(
  trx: Transaction<Database>,
  userId: number,
  now: number,
): void | Promise<void> {
  const day = periodOf(now).day;
  // Issue 29: one statement for the whole group commit at its end (the count is read only by an
  // upload's limit check, which may then miss this group's messages — it errs by a few messages
  // towards the stricter limit, never past it).
  if (batchAtGroupEnd(trx, 'messages_sent', { userId, day }, countMessages, { gather: true }))
    return;
  return countMessages(trx, [{ userId, day }]);
}

const byUserAndDay = (a: { userId: number; day: number }, b: { userId: number; day: number }) =>
  a.userId - b.userId || a.day - b.day;

/** Fixed SQL: runs with every message (storage/raw-sql.ts). */
async function countMessages(
  trx: Db,
  sends: ReadonlyArray<{ userId: number; day: number }>,
): Promise<void> {
  // One row per author and day (a statement may not touch a row twice), in key order: two
  // groups committing at once then lock the rows they share in the same order. Sorted, then
  // counted in runs: no key string, row copy or flatMap per send (issue 29, bench/README.md
  // "session 22").
  const sorted = sends.length > 1 ? [...sends].sort(byUserAndDay) : sends;
  const params: number[] = [];
  for (let i = 0; i < sorted.length;) {
    const s = sorted[i] as { userId: number; day: number };
    let n = 1;
    for (
      let next = sorted[i + n];
      next?.userId === s.userId && next.day === s.day;
      next = sorted[i + n]
    )
      n++;
    params.push(s.userId, s.day, n);
    i += n;
  }
  await rawQuery(
    trx,
    'insert into "upload_usage_daily" ("user_id", "day", "bytes_used", "messages_sent") ' +
      `values ${tuples(params.length / 3, '(?, ?, 0, ?)')} on conflict ("user_id", "day") do update set ` +
      '"messages_sent" = "upload_usage_daily"."messages_sent" + "excluded"."messages_sent"',
    params,
  );
}

/** GET /files/quota: the current day's and month's counters. */
export async function quotaUsage(
  db: Db,
  limits: QuotaLimits,
  userId: number,
  now: number,
): Promise<UploadQuota> {
  const p = periodOf(now);
  const day = await db
    .selectFrom('upload_usage_daily')
    .select(['bytes_used', 'messages_sent'])
    .where('user_id', '=', userId)
    .where('day', '=', p.day)
    .executeTakeFirst();
  const month = await db
    .selectFrom('upload_usage_monthly')
    .select('bytes_used')
    .where('user_id', '=', userId)
    .where('month', '=', p.month)
    .executeTakeFirst();
  return {
    dailyUsed: Number(day?.bytes_used ?? 0),
    dailyLimit: dailyLimitOf(limits, Number(day?.messages_sent ?? 0)),
    monthlyUsed: Number(month?.bytes_used ?? 0),
    monthlyLimit: limits.monthly,
  };
}
