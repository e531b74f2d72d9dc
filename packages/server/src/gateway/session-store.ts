import { randomBytes } from 'node:crypto';
import type { Db } from '../storage/db.js';
import { appendMarker, countEntries, EntryKind } from '../events/stream.js';

/**
 * D29/D31: gateway sessions in the database, so any node can resume any session, also after a
 * restart. Taking a session (fresh or resumed) appends a marker to the bot's stream inside the
 * same transaction: the marker's position orders the take against every event (all of them lock
 * the bot's stream row), so "events after READY / after RESUMED" is exact, and the newest marker
 * names the connection that wins (D29: newest wins).
 */
export interface Claim {
  sessionId: string;
  /** position of the session's READY marker: s = position − readySeq + 1 */
  readySeq: number;
  /** position of this connection's marker (READY or RESUMED) */
  claimSeq: number;
  /** resume: position of the last entry the client processed; fresh: the READY marker */
  cursor: number;
}

export interface FreshClaim extends Claim {
  guildIds: number[];
}

export const newSessionId = (): string => randomBytes(16).toString('base64url');
export const newConnId = (): string => randomBytes(12).toString('base64url');

/** D31 fresh session: READY marker, previous sessions of the bot end (D29 replaced). */
export async function createSession(
  db: Db,
  o: { botId: number; botUserId: number; connId: string; nodeId: number; now: number },
): Promise<FreshClaim> {
  return db.transaction().execute(async (trx) => {
    const readySeq = await appendMarker(trx, o.botId, EntryKind.READY, o.now);
    await trx
      .updateTable('gateway_sessions')
      .set({ ended: 1, connected: 0 })
      .where('bot_id', '=', o.botId)
      .where('ended', '=', 0)
      .execute();
    const sessionId = newSessionId();
    await trx
      .insertInto('gateway_sessions')
      .values({
        id: sessionId,
        bot_id: o.botId,
        ready_seq: readySeq,
        conn_id: o.connId,
        node_id: o.nodeId,
        connected: 1,
        disconnected_at: null,
        ended: 0,
        created_at: o.now,
      })
      .execute();
    // READY's guild list and the stream after the marker are read under the same lock: every
    // membership change after READY arrives as an event.
    const guilds = await trx
      .selectFrom('members')
      .select('guild_id')
      .where('user_id', '=', o.botUserId)
      .orderBy('guild_id', 'asc')
      .execute();
    return {
      sessionId,
      readySeq,
      claimSeq: readySeq,
      cursor: readySeq,
      guildIds: guilds.map((g) => Number(g.guild_id)),
    };
  });
}

class CannotResume extends Error {}

/**
 * D31 resume: the session must be the bot's, not ended, and still resumable (held by a
 * connection — possibly a dead one — or dropped less than the window ago); `seq` must be a
 * position the session has reached, and every entry after it must still be stored. Returns null
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
      // Lock the stream first, like every writer: the session cannot change under us.
      const claimSeq = await appendMarker(trx, o.botId, EntryKind.RESUMED, o.now);
      const s = await trx
        .selectFrom('gateway_sessions')
        .selectAll()
        .where('id', '=', o.sessionId)
        .executeTakeFirst();
      if (!s || Number(s.bot_id) !== o.botId || s.ended) throw new CannotResume();
      if (!s.connected && (s.disconnected_at ?? 0) < o.now - o.windowMs) throw new CannotResume();
      const readySeq = Number(s.ready_seq);
      // The client processed s = seq, i.e. position readySeq + seq − 1; it cannot be ahead of
      // the last position before this marker.
      const cursor = readySeq + o.seq - 1;
      if (o.seq < 1 || cursor > claimSeq - 1) throw new CannotResume();
      const need = claimSeq - 1 - cursor;
      if ((await countEntries(trx, o.botId, cursor + 1, claimSeq - 1)) !== need)
        throw new CannotResume();
      await trx
        .updateTable('gateway_sessions')
        .set({ conn_id: o.connId, node_id: o.nodeId, connected: 1, disconnected_at: null })
        .where('id', '=', o.sessionId)
        .execute();
      return { sessionId: o.sessionId, readySeq, claimSeq, cursor };
    });
  } catch (err) {
    // Thrown inside the transaction so the marker's position is given back (no hole).
    if (err instanceof CannotResume) return null;
    throw err;
  }
}

/** The connection dropped: the session stays resumable for the window (if still ours). */
export async function releaseSession(
  db: Db,
  sessionId: string,
  connId: string,
  now: number,
): Promise<void> {
  await db
    .updateTable('gateway_sessions')
    .set({ connected: 0, disconnected_at: now })
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
