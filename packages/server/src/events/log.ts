import { createHash } from 'node:crypto';
import type { Db } from '../storage/db.js';
import { flatRows, isPostgres, rawQuery, tuples } from '../storage/raw-sql.js';

/**
 * The event log (issue 15): every event once, with its recipient bots, in one commit-ordered
 * sequence that every node reads. Recording an event costs one row whatever the number of
 * recipients; a gateway session's `s` is derived when it is dispatched (gateway/session-marks.ts).
 *
 * Order. A row's key is (xid, pos). On SQLite writers are serialized, so `pos` (AUTOINCREMENT)
 * grows in commit order and xid is always 0. On PostgreSQL `pos` comes from a sequence and is
 * allocated out of commit order, so each row also stores its transaction's id, and the log is
 * read only below the *horizon*: the oldest transaction still running anywhere in the cluster
 * (`pg_snapshot_xmin(pg_current_snapshot())`). Every transaction below it has finished, and every
 * transaction that starts later gets a larger id, so the rows below the horizon never change
 * again and ordering them by (xid, pos) gives every node and every replay the same sequence: a
 * reader that has seen everything below key K never sees a new row below K. Causal order holds:
 * a transaction that starts after another committed has a larger id. This is the
 * transaction-snapshot technique of transactional-outbox relays; its cost is that a long
 * transaction anywhere holds back delivery (not recording) until it ends.
 */
export interface LogKey {
  readonly xid: number;
  readonly pos: number;
}

export interface LogRow extends LogKey {
  readonly type: string;
  /** the event's `data`, JSON text serialized once */
  readonly data: string;
  /** `,1,5,9,` (stored once per distinct set: recipient_sets); `,` for none */
  readonly recipients: string;
  readonly createdAt: number;
  /** D72: who among people may see it (a D51 audience, JSON); null: bots only */
  readonly audience: string | null;
}

export const ZERO_KEY: LogKey = { xid: 0, pos: 0 };

export const keyLess = (a: LogKey, b: LogKey): boolean =>
  a.xid < b.xid || (a.xid === b.xid && a.pos < b.pos);

export const keyMax = (a: LogKey, b: LogKey): LogKey => (keyLess(a, b) ? b : a);

/** The smallest key after `k` (keys are exclusive bounds: "everything below"). */
export const keyAfter = (k: LogKey): LogKey => ({ xid: k.xid, pos: k.pos + 1 });

/**
 * Recipient ids as stored: `,1,5,9,` (ascending), so `like '%,5,%'` finds bot 5's rows; `,` for
 * none (a people's event no bot receives).
 */
export const recipientsText = (botIds: readonly number[]): string =>
  botIds.length === 0 ? ',' : `,${botIds.join(',')},`;

/** Recipient ids of a stored row. */
export function parseRecipients(text: string): number[] {
  const out: number[] = [];
  let n = 0;
  for (let i = 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 44) {
      out.push(n);
      n = 0;
    } else n = n * 10 + (c - 48);
  }
  return out;
}

/**
 * The id of the recipient set `bots` (`,1,5,9,`), written if new, inside the writer's
 * transaction (a rollback takes a new set with it: remember an id only after commit).
 */
export async function recipientSet(trx: Db, bots: string): Promise<number> {
  const hash = createHash('sha256').update(bots).digest('hex');
  await rawQuery(
    trx,
    'insert into "recipient_sets" ("hash", "bots") values (?, ?) on conflict ("hash") do nothing',
    [hash, bots],
  );
  const [r] = await rawQuery<{ id: number }>(
    trx,
    'select "id" from "recipient_sets" where "hash" = ?',
    [hash],
  );
  if (!r) throw new Error('recipient set not written');
  return Number(r.id);
}

/** Append an event inside the writer's transaction; returns its key. */
export async function appendEvent(
  trx: Db,
  e: { type: string; data: string; recipientSet: number; now: number; audience: string | null },
): Promise<LogKey> {
  const rows = await rawQuery<{ pos: number; xid: number }>(
    trx,
    isPostgres(trx)
      ? 'insert into "event_log" ("xid", "type", "data", "recipients", "created_at", "audience") ' +
          'values (pg_current_xact_id()::text::bigint, ?, ?, ?, ?, ?) returning "pos", "xid"'
      : 'insert into "event_log" ("xid", "type", "data", "recipients", "created_at", "audience") ' +
          'values (0, ?, ?, ?, ?, ?) returning "pos", "xid"',
    [e.type, e.data, e.recipientSet, e.now, e.audience],
  );
  const r = rows[0];
  if (!r) throw new Error('event_log insert returned nothing');
  return { xid: Number(r.xid), pos: Number(r.pos) };
}

/**
 * Issue 29: the events of one group commit in one statement, their keys in the order given. The
 * rows are inserted in the order of the VALUES, and `pos` grows with each (PostgreSQL: drawn from
 * its sequence row by row; SQLite: AUTOINCREMENT), so the keys sorted by `pos` are the events'
 * keys in order — whatever order RETURNING lists them in.
 *
 * SQLite without RETURNING: one statement's rows take consecutive rowids (AUTOINCREMENT gives each
 * the largest so far plus one, and only this connection writes while it holds the transaction),
 * so the last one's `last_insert_rowid()` names them all, and `xid` is 0 on SQLite. RETURNING
 * made SQLite keep the rows in a temporary table and hand them back one by one: a third of the
 * insert's cost (bench/README.md, session 18).
 */
export async function appendEvents(
  trx: Db,
  events: ReadonlyArray<{
    type: string;
    data: string;
    recipientSet: number;
    now: number;
    audience: string | null;
  }>,
): Promise<LogKey[]> {
  const params = flatRows(events, (e, out) => {
    out.push(e.type, e.data, e.recipientSet, e.now, e.audience);
  });
  const insert =
    'insert into "event_log" ("xid", "type", "data", "recipients", "created_at", "audience") ';
  if (!isPostgres(trx)) {
    await rawQuery(trx, `${insert}values ${tuples(events.length, '(0, ?, ?, ?, ?, ?)')}`, params);
    const [r] = await rawQuery<{ last: number }>(trx, 'select last_insert_rowid() as "last"', []);
    const last = Number(r?.last);
    if (!Number.isSafeInteger(last) || last < events.length)
      throw new Error('event_log insert left no rowid');
    return events.map((_, n) => ({ xid: 0, pos: last - events.length + 1 + n }));
  }
  const rows = await rawQuery<{ pos: number; xid: number }>(
    trx,
    `${insert}values ${tuples(events.length, '(pg_current_xact_id()::text::bigint, ?, ?, ?, ?, ?)')} returning "pos", "xid"`,
    params,
  );
  if (rows.length !== events.length) throw new Error('event_log insert returned too few rows');
  return rows
    .map((r) => ({ xid: Number(r.xid), pos: Number(r.pos) }))
    .sort((a, b) => a.pos - b.pos);
}

interface RawRow {
  pos: number;
  xid: number;
  type: string;
  data: string;
  recipients: string;
  created_at: number;
  audience: string | null;
}

const toRow = (r: RawRow): LogRow => ({
  xid: Number(r.xid),
  pos: Number(r.pos),
  type: r.type,
  data: r.data,
  recipients: r.recipients,
  createdAt: Number(r.created_at),
  audience: r.audience,
});

/**
 * The key below which the log is complete now: SQLite, after the newest committed row;
 * PostgreSQL, the horizon. Taken inside a transaction it is that transaction's view (a claim's
 * marker: gateway/session-store.ts).
 */
export async function logEnd(db: Db): Promise<LogKey> {
  if (isPostgres(db)) {
    const [r] = await rawQuery<{ h: number }>(
      db,
      'select pg_snapshot_xmin(pg_current_snapshot())::text::bigint as "h"',
      [],
    );
    return { xid: Number(r?.h ?? 0), pos: 0 };
  }
  const [r] = await rawQuery<{ m: number | null }>(
    db,
    'select max("pos") as "m" from "event_log"',
    [],
  );
  return { xid: 0, pos: Number(r?.m ?? 0) + 1 };
}

/**
 * The rows from `from` on, in log order, at most `limit`, and the new end: every row below it
 * has been returned (with `from` as the start). Rows of transactions still running are never
 * returned on PostgreSQL (the horizon), so nothing can later appear below the end.
 */
export async function readLog(
  db: Db,
  from: LogKey,
  limit: number,
): Promise<{ rows: LogRow[]; end: LogKey }> {
  if (isPostgres(db)) {
    const raw = await rawQuery<RawRow & { h: number }>(
      db,
      'with "h" as (select pg_snapshot_xmin(pg_current_snapshot())::text::bigint as "h") ' +
        'select "h"."h", "e".* from "h" left join lateral (' +
        'select "l"."pos", "l"."xid", "l"."type", "l"."data", "r"."bots" as "recipients", ' +
        '"l"."created_at", "l"."audience" from "event_log" as "l" ' +
        'join "recipient_sets" as "r" on "r"."id" = "l"."recipients" ' +
        'where ("l"."xid", "l"."pos") >= (?, ?) and "l"."xid" < "h"."h" ' +
        'order by "l"."xid", "l"."pos" limit ?' +
        ') "e" on true',
      [from.xid, from.pos, limit],
    );
    const h = Number(raw[0]?.h ?? 0);
    const rows = raw.filter((r) => r.pos !== null).map(toRow);
    const last = rows[rows.length - 1];
    if (last && rows.length >= limit) return { rows, end: keyAfter(last) };
    return { rows, end: keyMax(from, { xid: h, pos: 0 }) };
  }
  const raw = await rawQuery<RawRow>(
    db,
    'select "l"."pos", "l"."xid", "l"."type", "l"."data", "r"."bots" as "recipients", ' +
      '"l"."created_at", "l"."audience" from "event_log" as "l" ' +
      'join "recipient_sets" as "r" on "r"."id" = "l"."recipients" ' +
      'where "l"."pos" >= ? order by "l"."pos" limit ?',
    [from.pos, limit],
  );
  const rows = raw.map(toRow);
  const last = rows[rows.length - 1];
  return { rows, end: last ? keyAfter(last) : from };
}

/** One bot's rows with from ≤ key < to, in log order, at most `limit`. */
export async function readBotLog(
  db: Db,
  botId: number,
  from: LogKey,
  to: LogKey,
  limit: number,
  cols: 'keys' | 'rows' = 'rows',
): Promise<LogRow[]> {
  const select =
    cols === 'keys'
      ? `select "l"."pos", "l"."xid", '' as "type", '' as "data", '' as "recipients", 0 as "created_at", null as "audience"`
      : 'select "l"."pos", "l"."xid", "l"."type", "l"."data", "r"."bots" as "recipients", "l"."created_at", "l"."audience"';
  // The bot's sets: few, and scanned once per read.
  const from_ =
    'from "event_log" as "l" join "recipient_sets" as "r" on "r"."id" = "l"."recipients" ' +
    'and "r"."bots" like ?';
  const like = `%,${botId},%`;
  const raw = isPostgres(db)
    ? await rawQuery<RawRow>(
        db,
        `${select} ${from_} where ("l"."xid", "l"."pos") >= (?, ?) and ("l"."xid", "l"."pos") < (?, ?) ` +
          'order by "l"."xid", "l"."pos" limit ?',
        [like, from.xid, from.pos, to.xid, to.pos, limit],
      )
    : await rawQuery<RawRow>(
        db,
        `${select} ${from_} where "l"."pos" >= ? and "l"."pos" < ? order by "l"."pos" limit ?`,
        [like, from.pos, to.pos, limit],
      );
  return raw.map(toRow);
}

/** Rows below this key may have been pruned. */
export async function prunedBelow(db: Db): Promise<LogKey> {
  const r = await db
    .selectFrom('event_log_pruned')
    .select(['xid', 'pos'])
    .where('id', '=', 1)
    .executeTakeFirst();
  return { xid: Number(r?.xid ?? 0), pos: Number(r?.pos ?? 0) };
}

/** Delete rows created before `cutoff`, moving the watermark above every deleted row. */
export async function pruneLog(db: Db, cutoff: number): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const top = await trx
      .selectFrom('event_log')
      .select(['xid', 'pos'])
      .where('created_at', '<', cutoff)
      .orderBy('xid', 'desc')
      .orderBy('pos', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (!top) return 0;
    const mark = keyMax(
      await prunedBelow(trx),
      keyAfter({ xid: Number(top.xid), pos: Number(top.pos) }),
    );
    const res = await trx
      .deleteFrom('event_log')
      .where('created_at', '<', cutoff)
      .executeTakeFirst();
    await trx
      .updateTable('event_log_pruned')
      .set({ xid: mark.xid, pos: mark.pos })
      .where('id', '=', 1)
      .execute();
    return Number(res.numDeletedRows);
  });
}
