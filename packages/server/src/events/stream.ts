import type { Db } from '../storage/db.js';
import { rawQuery, tuples } from '../storage/raw-sql.js';

/**
 * Per-bot streams (storage/schema-events.ts). Positions are allocated by a guarded upsert on the
 * bot's `event_streams` row: the row stays locked until the transaction ends, so a bot's stream
 * is gapless and commit-ordered (a rolled-back transaction gives its positions back).
 */
export const EntryKind = { EVENT: 0, READY: 1, RESUMED: 2 } as const;
export type EntryKind = (typeof EntryKind)[keyof typeof EntryKind];

export interface StreamEntry {
  seq: number;
  kind: EntryKind;
  /** event type and JSON data; null for markers */
  type: string | null;
  data: string | null;
  createdAt: number;
}

/** SQLite allows 32766 bound values per statement; stay far below on both dialects. */
const CHUNK = 1000;

/**
 * Allocate the next position of each bot's stream, locking their rows in ascending id order
 * (the same order in every transaction: no deadlocks between concurrent writers).
 */
export async function allocatePositions(
  trx: Db,
  botIds: readonly number[],
): Promise<Map<number, number>> {
  const sorted = [...new Set(botIds)].sort((a, b) => a - b);
  const out = new Map<number, number>();
  for (let i = 0; i < sorted.length; i += CHUNK) {
    const chunk = sorted.slice(i, i + CHUNK);
    const rows = await rawQuery<{ bot_id: number; seq: number }>(
      trx,
      `insert into "event_streams" ("bot_id", "seq") values ${tuples(chunk.length, '(?, 1)')} ` +
        `on conflict ("bot_id") do update set "seq" = "event_streams"."seq" + 1 ` +
        `returning "bot_id", "seq"`,
      chunk,
    );
    for (const r of rows) out.set(Number(r.bot_id), Number(r.seq));
  }
  return out;
}

export async function insertEntries(
  trx: Db,
  rows: ReadonlyArray<{
    bot_id: number;
    seq: number;
    kind: EntryKind;
    event_id: number | null;
    created_at: number;
  }>,
): Promise<void> {
  for (let i = 0; i < rows.length; i += CHUNK) {
    const chunk = rows.slice(i, i + CHUNK);
    const params: unknown[] = [];
    for (const r of chunk) params.push(r.bot_id, r.seq, r.kind, r.event_id, r.created_at);
    await rawQuery(
      trx,
      `insert into "bot_events" ("bot_id", "seq", "kind", "event_id", "created_at") ` +
        `values ${tuples(chunk.length, '(?, ?, ?, ?, ?)')}`,
      params,
    );
  }
}

/**
 * The bots among `botIds` with a gateway session that a client holds or may still resume (D31):
 * not ended, and connected or dropped at or after `resumableSince` — the same rule as
 * gateway/session-store.ts `resumeSession`. Ascending.
 */
export async function botsWithSessions(
  trx: Db,
  botIds: readonly number[],
  resumableSince: number,
): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < botIds.length; i += CHUNK) {
    const chunk = botIds.slice(i, i + CHUNK);
    const rows = await rawQuery<{ bot_id: number }>(
      trx,
      `select distinct "bot_id" from "gateway_sessions" where "ended" = 0 ` +
        `and ("connected" = 1 or "disconnected_at" >= ?) and "bot_id" in (${tuples(chunk.length, '?')})`,
      [resumableSince, ...chunk],
    );
    for (const r of rows) out.push(Number(r.bot_id));
  }
  return out.sort((a, b) => a - b);
}

/** A gateway marker (READY / RESUMED) at the bot's next position; returns that position. */
export async function appendMarker(
  trx: Db,
  botId: number,
  kind: EntryKind,
  now: number,
): Promise<number> {
  const seq = (await allocatePositions(trx, [botId])).get(botId);
  if (seq === undefined) throw new Error('stream position not allocated');
  await insertEntries(trx, [{ bot_id: botId, seq, kind, event_id: null, created_at: now }]);
  return seq;
}

/** A bot's committed entries after `afterSeq`, in order. */
export async function readStream(
  db: Db,
  botId: number,
  afterSeq: number,
  limit: number,
): Promise<StreamEntry[]> {
  const rows = await db
    .selectFrom('bot_events as be')
    .leftJoin('events as e', 'e.id', 'be.event_id')
    .select(['be.seq', 'be.kind', 'be.created_at', 'e.type', 'e.data'])
    .where('be.bot_id', '=', botId)
    .where('be.seq', '>', afterSeq)
    .orderBy('be.seq', 'asc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    seq: Number(r.seq),
    kind: r.kind as EntryKind,
    type: r.type,
    data: r.data,
    createdAt: Number(r.created_at),
  }));
}

/** The last allocated (= committed) position of each bot's stream. */
export async function streamHeads(db: Db, botIds: readonly number[]): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (let i = 0; i < botIds.length; i += CHUNK) {
    const rows = await db
      .selectFrom('event_streams')
      .select(['bot_id', 'seq'])
      .where('bot_id', 'in', botIds.slice(i, i + CHUNK))
      .execute();
    for (const r of rows) out.set(Number(r.bot_id), Number(r.seq));
  }
  return out;
}

/** How many entries of [from, to] are still stored (a resume needs all of them). */
export async function countEntries(
  db: Db,
  botId: number,
  from: number,
  to: number,
): Promise<number> {
  if (to < from) return 0;
  const row = await db
    .selectFrom('bot_events')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('bot_id', '=', botId)
    .where('seq', '>=', from)
    .where('seq', '<=', to)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}
