import { randomBytes } from 'node:crypto';
import type { Db } from '../storage/db.js';
import { isPostgres, rawQuery } from '../storage/raw-sql.js';
import { keyLess, logEnd, prunedBelow, readBotLog, type LogKey } from '../events/log.js';
import {
  decodeMarks,
  encodeMarks,
  MarkKind,
  parseSnapshot,
  SessionCursor,
  withMark,
  type Mark,
  type ReadySnapshot,
} from './session-marks.js';

/**
 * D29/D31: gateway sessions in the database, so any node can resume any session, also after a
 * restart. A session's numbering lives in its marks (session-marks.ts) over the shared event log
 * (events/log.ts); taking a session — fresh or resumed — places a mark at the log's end as this
 * transaction sees it, so "events after READY / after RESUMED" is exact. Each take also gets the
 * bot's next claim number (gateway_claims): D29, the highest number wins.
 */
export interface Claim {
  sessionId: string;
  /** D29: this connection's claim number; a connection with a higher one replaces it */
  claimN: number;
  /** the session's marks, this take's included (the connection adds checkpoints) */
  marks: Mark[];
  snapshot: ReadySnapshot | undefined;
  /** where delivery starts: after READY, or after the `seq` a resuming client processed */
  cursor: SessionCursor;
  /** resume: the `s` of this connection's RESUMED dispatch */
  resumedS: number | undefined;
}

export interface FreshClaim extends Claim {
  guildIds: number[];
}

export const newSessionId = (): string => randomBytes(16).toString('base64url');
export const newConnId = (): string => randomBytes(12).toString('base64url');

/** D29: the bot's next claim number (a row lock held only by connections taking sessions). */
async function nextClaim(trx: Db, botId: number): Promise<number> {
  const [r] = await rawQuery<{ n: number }>(
    trx,
    'insert into "gateway_claims" ("bot_id", "n") values (?, 1) ' +
      'on conflict ("bot_id") do update set "n" = "gateway_claims"."n" + 1 returning "n"',
    [botId],
  );
  if (!r) throw new Error('claim number not allocated');
  return Number(r.n);
}

/**
 * READY's mark and guild list, seen at one instant: on PostgreSQL one statement (one snapshot),
 * whose xmin is the mark and whose snapshot says which rows above it READY already reflects.
 */
async function readyView(
  trx: Db,
  botUserId: number,
): Promise<{ key: LogKey; snapshot: string | null; guildIds: number[] }> {
  if (isPostgres(trx)) {
    const rows = await rawQuery<{ snap: string; guild_id: number | null }>(
      trx,
      'select pg_current_snapshot()::text as "snap", "m"."guild_id" from (select 1) as "one" ' +
        'left join "members" as "m" on "m"."user_id" = ? order by "m"."guild_id"',
      [botUserId],
    );
    const snapshot = rows[0]?.snap ?? '';
    const snap = parseSnapshot(snapshot);
    return {
      key: { xid: snap?.xmin ?? 0, pos: 0 },
      snapshot,
      guildIds: rows.flatMap((r) => (r.guild_id === null ? [] : [Number(r.guild_id)])),
    };
  }
  // SQLite: one writer at a time, so nothing can commit between these two reads.
  const key = await logEnd(trx);
  const guilds = await trx
    .selectFrom('members')
    .select('guild_id')
    .where('user_id', '=', botUserId)
    .orderBy('guild_id', 'asc')
    .execute();
  return { key, snapshot: null, guildIds: guilds.map((g) => Number(g.guild_id)) };
}

/** D31 fresh session: READY (s 1), previous sessions of the bot end (D29 replaced). */
export async function createSession(
  db: Db,
  o: { botId: number; botUserId: number; connId: string; nodeId: number; now: number },
): Promise<FreshClaim> {
  return db.transaction().execute(async (trx) => {
    const claimN = await nextClaim(trx, o.botId);
    await trx
      .updateTable('gateway_sessions')
      .set({ ended: 1, connected: 0 })
      .where('bot_id', '=', o.botId)
      .where('ended', '=', 0)
      .execute();
    const view = await readyView(trx, o.botUserId);
    const ready: Mark = { s: 1, xid: view.key.xid, pos: view.key.pos, k: MarkKind.READY };
    const marks = [ready];
    const sessionId = newSessionId();
    await trx
      .insertInto('gateway_sessions')
      .values({
        id: sessionId,
        bot_id: o.botId,
        claim_n: claimN,
        marks: encodeMarks(marks),
        ready_snapshot: view.snapshot,
        conn_id: o.connId,
        node_id: o.nodeId,
        connected: 1,
        disconnected_at: null,
        ended: 0,
        created_at: o.now,
      })
      .execute();
    const snapshot = parseSnapshot(view.snapshot);
    return {
      sessionId,
      claimN,
      marks,
      snapshot,
      cursor: new SessionCursor(1, view.key, [], snapshot),
      resumedS: undefined,
      guildIds: view.guildIds,
    };
  });
}

class CannotResume extends Error {}

/** Rows per read of a resume's scan (keys only). */
const SCAN_BATCH = 5000;

/**
 * D31 resume: the session must be the bot's, not ended, and still resumable (held by a
 * connection — possibly a dead one — or dropped less than the window ago); `seq` must be an `s`
 * the session has reached, counted from a mark it still keeps over rows not pruned. Returns null
 * when the resume cannot be served (the caller sends op 9 and a fresh READY); nothing changes then.
 */
export async function resumeSession(
  db: Db,
  o: {
    sessionId: string;
    botId: number;
    seq: number;
    connId: string;
    nodeId: number;
    now: number;
    windowMs: number;
  },
): Promise<Claim | null> {
  try {
    return await db.transaction().execute(async (trx) => {
      const row = await trx
        .selectFrom('gateway_sessions')
        .selectAll()
        .where('id', '=', o.sessionId)
        .executeTakeFirst();
      if (!row || Number(row.bot_id) !== o.botId || row.ended) throw new CannotResume();
      if (!row.connected && (row.disconnected_at ?? 0) < o.now - o.windowMs)
        throw new CannotResume();
      const claimN = await nextClaim(trx, o.botId);
      // The claim's lock is taken: the session cannot change under us from here.
      const again = await trx
        .selectFrom('gateway_sessions')
        .select(['marks', 'ended'])
        .where('id', '=', o.sessionId)
        .executeTakeFirstOrThrow();
      if (again.ended) throw new CannotResume();
      const marks = decodeMarks(again.marks);
      const snapshot = parseSnapshot(row.ready_snapshot);
      const end = await logEnd(trx);
      const found = await locate(trx, o.botId, marks, snapshot, o.seq, end);
      if (!found) throw new CannotResume();
      const resumed: Mark = { s: found.lastS + 1, xid: end.xid, pos: end.pos, k: MarkKind.RESUMED };
      const next = withMark(marks, resumed);
      await trx
        .updateTable('gateway_sessions')
        .set({
          conn_id: o.connId,
          node_id: o.nodeId,
          connected: 1,
          disconnected_at: null,
          claim_n: claimN,
          marks: encodeMarks(next),
        })
        .where('id', '=', o.sessionId)
        .execute();
      return {
        sessionId: o.sessionId,
        claimN,
        marks: next,
        snapshot,
        cursor: new SessionCursor(o.seq, found.key, [...found.ahead, resumed], snapshot),
        resumedS: resumed.s,
      };
    });
  } catch (err) {
    // Thrown inside the transaction so the claim number is given back.
    if (err instanceof CannotResume) return null;
    throw err;
  }
}

/**
 * Where dispatch `seq` of the session lies: from the last kept mark at or before it, count the
 * bot's rows and the later marks up to `end`. Undefined when no kept mark is at or before `seq`,
 * rows after it were pruned, or the session never reached `seq`.
 */
async function locate(
  trx: Db,
  botId: number,
  marks: readonly Mark[],
  snapshot: ReadySnapshot | undefined,
  seq: number,
  end: LogKey,
): Promise<{ key: LogKey; ahead: Mark[]; lastS: number } | undefined> {
  let i = -1;
  marks.forEach((m, j) => {
    if (m.s <= seq) i = j;
  });
  const base = marks[i];
  if (!base || seq < 1) return undefined;
  if (keyLess(base, await prunedBelow(trx))) return undefined;
  const cur = new SessionCursor(base.s, base, marks.slice(i + 1), snapshot);
  let found: { key: LogKey; ahead: Mark[] } | undefined;
  const at = (): void => {
    if (!found && cur.s === seq) found = { key: cur.key, ahead: [...cur.pendingMarks] };
  };
  at();
  for (;;) {
    const rows = await readBotLog(trx, botId, cur.key, end, SCAN_BATCH, 'keys');
    for (const r of rows) {
      cur.row(r, at);
      at();
    }
    if (rows.length < SCAN_BATCH) break;
  }
  cur.reach(end, at);
  if (!found) return undefined;
  return { ...found, lastS: cur.s };
}

/** A checkpoint (or any new marks) of the session held by this connection. */
export async function saveMarks(
  db: Db,
  sessionId: string,
  connId: string,
  marks: readonly Mark[],
): Promise<void> {
  await db
    .updateTable('gateway_sessions')
    .set({ marks: encodeMarks(marks) })
    .where('id', '=', sessionId)
    .where('conn_id', '=', connId)
    .where('ended', '=', 0)
    .execute();
}

/**
 * The connection dropped: the session stays resumable for the window (if still ours), with its
 * last checkpoint.
 */
export async function releaseSession(
  db: Db,
  sessionId: string,
  connId: string,
  now: number,
  marks: readonly Mark[],
): Promise<void> {
  await db
    .updateTable('gateway_sessions')
    .set({ connected: 0, disconnected_at: now, marks: encodeMarks(marks) })
    .where('id', '=', sessionId)
    .where('conn_id', '=', connId)
    .where('ended', '=', 0)
    .execute();
}

/** D31/D33: closed 1000/1001 by the client, or token reset: not resumable (if still ours). */
export async function endSession(db: Db, sessionId: string, connId: string): Promise<void> {
  await db
    .updateTable('gateway_sessions')
    .set({ ended: 1, connected: 0 })
    .where('id', '=', sessionId)
    .where('conn_id', '=', connId)
    .execute();
}

/**
 * A node starts: connections it held before a crash or restart are gone, so their sessions
 * become resumable from now (each node has its own PARLEY_NODE_ID).
 */
export async function releaseNode(db: Db, nodeId: number, now: number): Promise<void> {
  await db
    .updateTable('gateway_sessions')
    .set({ connected: 0, disconnected_at: now })
    .where('node_id', '=', nodeId)
    .where('connected', '=', 1)
    .execute();
}

/** Which of these sessions are still held by the given connections (the watch's check). */
export async function heldSessions(
  db: Db,
  sessions: ReadonlyArray<{ sessionId: string; connId: string }>,
): Promise<Set<string>> {
  const held = new Set<string>();
  for (let i = 0; i < sessions.length; i += 500) {
    const chunk = sessions.slice(i, i + 500);
    const rows = await db
      .selectFrom('gateway_sessions')
      .select(['id', 'conn_id', 'ended'])
      .where(
        'id',
        'in',
        chunk.map((s) => s.sessionId),
      )
      .execute();
    const want = new Map(chunk.map((s) => [s.sessionId, s.connId]));
    for (const r of rows) if (!r.ended && want.get(r.id) === r.conn_id) held.add(r.id);
  }
  return held;
}

/** Current token generations of these bots (D8: a reset bumps it). */
export async function tokenGenerations(
  db: Db,
  botIds: readonly number[],
): Promise<Map<number, number>> {
  const out = new Map<number, number>();
  for (let i = 0; i < botIds.length; i += 500) {
    const rows = await db
      .selectFrom('bots')
      .select(['id', 'token_generation'])
      .where('id', 'in', botIds.slice(i, i + 500))
      .execute();
    for (const r of rows) out.set(Number(r.id), Number(r.token_generation));
  }
  return out;
}
