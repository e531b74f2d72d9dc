import { dispatched } from '../metrics/metrics.js';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { RateSpec } from '../config/config.js';
import { getBot } from '../domain/bots/bots.service.js';
import type { Domain } from '../domain/context.js';
import type { Feed, FeedSubscription, LogSink } from '../events/feed.js';
import { keyLess, type LogKey, type LogRow } from '../events/log.js';
import { frameInto, frameLength, frameOf, frameParts, type FrameParts } from './frame-template.js';
import { Close, keepsSession } from './close-codes.js';
import { INVALID_SESSION_FRAME, readyFrame, RECONNECT_FRAME, resumedFrame } from './frames.js';
import {
  createSession,
  endSession,
  newConnId,
  releaseSession,
  resumeSession,
  saveMarks,
  type Claim,
} from './session-store.js';
import { MarkKind, withMark, type Mark } from './session-marks.js';
import { SocketLink } from './socket-link.js';

/**
 * One gateway connection as an explicit state machine (docs/architecture.md#habit-4):
 *
 *   handshake ──fresh READY──────────────▶ live ──▶ closed
 *       │                                   ▲
 *       └──resume accepted──▶ replaying ────┘ (its RESUMED marker reached)
 *   (any state ──▶ closed)
 *
 * HELLO goes out at once; there is no identify step (D31). The session is taken in the database
 * (gateway/session-store.ts), then the connection subscribes to the node's feed of the event log
 * from the session's cursor: replayed and live dispatches come through the same ordered path, and
 * every dispatch's `s` is counted by the session's cursor (session-marks.ts). At each client
 * heartbeat (D30: every 30 s) the connection checkpoints where the session stands (a mark), when
 * it has moved, so a resume after a drop or a crash counts from there, not from READY.
 */
export type ConnState = 'handshake' | 'replaying' | 'live' | 'closed';

const TRANSITIONS: Readonly<Record<ConnState, readonly ConnState[]>> = {
  handshake: ['replaying', 'live', 'closed'],
  replaying: ['live', 'closed'],
  live: ['closed'],
  closed: [],
};

/** A slow reader: stop feeding it until the socket has drained below this. */
const MAX_BUFFERED_BYTES = 1 << 20;

export interface ConnectionDeps {
  readonly domain: Domain;
  readonly feed: Feed;
  readonly nodeId: number;
  readonly heartbeatMs: number;
  readonly resumeWindowS: number;
  readonly rate: RateSpec | null;
  /** a session was taken by this connection (the registry closes older ones: D29) */
  claimed(conn: GatewayConnection): void;
  /** the connection has closed and its session is settled */
  finished(conn: GatewayConnection): void;
  log(err: unknown, msg: string): void;
}

export interface BotIdentity {
  readonly botId: number;
  readonly userId: number;
  /** D8: the token generation it connected with */
  readonly generation: number;
}

/** Per event on this node: its frame template, and the object the lag metric is kept by. */
const prepared = new WeakMap<LogRow, { parts: FrameParts; live: { committedAt: number } }>();
function preparedOf(row: LogRow): { parts: FrameParts; live: { committedAt: number } } {
  let p = prepared.get(row);
  if (p === undefined)
    prepared.set(
      row,
      (p = { parts: frameParts(row.type, row.data), live: { committedAt: row.createdAt } }),
    );
  return p;
}

export class GatewayConnection implements LogSink {
  readonly connId = newConnId();
  private stateValue: ConnState = 'handshake';
  sessionId: string | undefined;
  /** D29: this connection's claim number (0 until the session is taken) */
  claimN = 0;
  private claim: Claim | undefined;
  private sub: FeedSubscription | undefined;
  private replayed = 0;
  /** the last mark written: a checkpoint is due when the session has moved past it */
  private lastMark: { s: number; key: LogKey } | undefined;
  private saving: Promise<void> = Promise.resolve();
  /** dispatches of the current batch, not written yet (flush) */
  private readonly outParts: FrameParts[] = [];
  private readonly outS: number[] = [];
  private outBytes = 0;
  /** HELLO, heartbeats, frame limits, close codes and batched writes (D30–D33) */
  private readonly link: SocketLink;
  private established: Promise<void> = Promise.resolve();
  private markDone: () => void = () => {};
  private readonly done = new Promise<void>((resolve) => {
    this.markDone = resolve;
  });

  constructor(
    ws: WebSocket,
    readonly bot: BotIdentity,
    private readonly deps: ConnectionDeps,
    private readonly resume: { sessionId: string; seq: number } | undefined,
    /** the upgraded TCP socket under `ws`, to batch writes */
    socket?: Duplex,
  ) {
    this.link = new SocketLink(ws, socket, {
      heartbeatMs: deps.heartbeatMs,
      rate: deps.rate,
      clock: deps.domain.clock,
      closing: () => this.stop(),
      closed: (code) => this.onSocketClose(code),
      // Issue 15: the session's numbering is checkpointed as the client heartbeats.
      heartbeat: () => this.checkpoint(),
    });
  }

  /** resolves once the socket has closed and the session is settled in the database */
  whenDone(): Promise<void> {
    return this.done;
  }

  /** not narrowed by TypeScript: awaits in between may have closed the connection */
  private isClosed(): boolean {
    return this.stateValue === 'closed';
  }

  get state(): ConnState {
    return this.stateValue;
  }

  private to(next: ConnState): void {
    if (!TRANSITIONS[this.stateValue].includes(next))
      throw new Error(`gateway connection: ${this.stateValue} → ${next} is not a transition`);
    this.stateValue = next;
  }

  start(): void {
    this.link.start();
    this.established = this.establish().catch((err: unknown) => {
      this.deps.log(err, 'gateway session could not be established');
      this.close(Close.UNKNOWN_ERROR, 'internal error');
    });
  }

  private async establish(): Promise<void> {
    const d = this.deps.domain;
    let claim: Claim | null = null;
    if (this.resume) {
      claim = await resumeSession(d.db, {
        sessionId: this.resume.sessionId,
        botId: this.bot.botId,
        seq: this.resume.seq,
        connId: this.connId,
        nodeId: this.deps.nodeId,
        now: d.clock.now(),
        windowMs: this.deps.resumeWindowS * 1000,
      });
      // D31: a resume that cannot be served gets op 9, then a fresh session.
      if (!claim && !this.isClosed()) this.send(INVALID_SESSION_FRAME);
    }
    if (claim) {
      this.take(claim);
      if (this.isClosed()) return;
      this.to('replaying');
    } else {
      if (this.isClosed()) return;
      const bot = await getBot(d, this.bot.botId);
      const fresh = await createSession(d.db, {
        botId: this.bot.botId,
        botUserId: this.bot.userId,
        connId: this.connId,
        nodeId: this.deps.nodeId,
        now: d.clock.now(),
      });
      this.take(fresh);
      if (this.isClosed()) return;
      this.send(
        readyFrame({
          sessionId: fresh.sessionId,
          bot,
          user: bot.botUser,
          guilds: fresh.guildIds.map((id) => ({ id })),
          resumeWindowS: this.deps.resumeWindowS,
        }),
      );
      this.to('live');
      claim = fresh;
    }
    if (this.isClosed()) return;
    this.sub = this.deps.feed.subscribe(this);
    this.lastMark = { s: claim.cursor.s, key: claim.cursor.key };
  }

  private take(claim: Claim): void {
    this.sessionId = claim.sessionId;
    this.claim = claim;
    this.claimN = claim.claimN;
    this.deps.claimed(this);
  }

  // LogSink

  get botId(): number {
    return this.bot.botId;
  }

  get position(): LogKey {
    return this.claim?.cursor.key ?? { xid: 0, pos: 0 };
  }

  /** still to send its RESUMED (D31) */
  get waiting(): boolean {
    return this.stateValue === 'replaying';
  }

  deliver(row: LogRow): void {
    const cursor = this.claim?.cursor;
    if (!cursor || this.stateValue === 'closed') return;
    const s = cursor.row(row, this.passed);
    if (s === undefined || this.isClosed()) return;
    const replaying = this.stateValue === 'replaying';
    if (replaying) this.replayed++;
    // One frame template per event, shared by every session on this node (issue 15); the
    // frames of one batch leave in one buffer (flush).
    const p = preparedOf(row);
    this.outParts.push(p.parts);
    this.outS.push(s);
    this.outBytes += frameLength(p.parts, s);
    dispatched('bot', replaying ? undefined : p.live); // D53
  }

  /** The feed handed out a batch: its frames for this socket go out as one buffer. */
  flush(): void {
    const n = this.outS.length;
    if (n === 0) return;
    if (n === 1)
      this.link.sendFrame(frameOf(this.outParts[0] as FrameParts, this.outS[0] as number));
    else {
      const buf = Buffer.allocUnsafe(this.outBytes);
      let at = 0;
      for (let i = 0; i < n; i++)
        at = frameInto(this.outParts[i] as FrameParts, this.outS[i] as number, buf, at);
      this.link.sendFrame(buf);
    }
    this.outParts.length = 0;
    this.outS.length = 0;
    this.outBytes = 0;
  }

  reached(end: LogKey): void {
    if (this.stateValue === 'closed') return;
    this.claim?.cursor.reach(end, this.passed);
  }

  /** A counted mark the session's numbering passes: this connection's RESUMED is sent (D31). */
  private readonly passed = (m: Mark): void => {
    // Older marks (earlier READY / RESUMEDs of this session) keep their `s` but are not replayed.
    if (m.k !== MarkKind.RESUMED || m.s !== this.claim?.resumedS) return;
    if (this.sessionId === undefined || this.stateValue !== 'replaying') return;
    this.send(resumedFrame(m.s, { sessionId: this.sessionId, replayed: this.replayed }));
    this.to('live');
  };

  /** Record where the session stands, when it has moved (at each heartbeat, and at release). */
  private checkpoint(): void {
    const claim = this.claim;
    const sub = this.sub;
    if (!claim || !sub || this.sessionId === undefined || this.stateValue !== 'live') return;
    claim.cursor.reach(sub.position(), this.passed);
    const { s, key } = claim.cursor;
    const last = this.lastMark;
    if (last && last.s === s && !keyLess(last.key, key)) return;
    this.lastMark = { s, key };
    claim.marks = withMark(claim.marks, { s, xid: key.xid, pos: key.pos, k: MarkKind.CHECKPOINT });
    const marks = claim.marks;
    const sessionId = this.sessionId;
    this.saving = this.saving
      .then(() => saveMarks(this.deps.domain.db, sessionId, this.connId, marks))
      .catch((err: unknown) => this.deps.log(err, 'gateway checkpoint failed'));
  }

  lost(): void {
    this.close(Close.UNKNOWN_ERROR, 'events no longer available');
  }

  busy(): boolean {
    return this.link.bufferedAmount > MAX_BUFFERED_BYTES;
  }

  private send(frame: string): void {
    // Dispatches already counted go first: frames leave in `s` order.
    this.flush();
    this.link.send(frame);
  }

  // Ending

  /** Close with a D33 code; the session's fate follows the close-code table. */
  close(code: number, reason: string): void {
    if (this.stateValue === 'closed') return;
    this.link.close(code, reason); // → stop()
  }

  /** Node shutdown: op 7, then close; the session stays resumable on any node. */
  reconnect(): void {
    if (this.stateValue === 'closed') return;
    this.send(RECONNECT_FRAME);
    this.close(Close.SERVICE_RESTART, 'server restarting');
  }

  private stop(): void {
    // The last checkpoint while the cursor is still live (the release writes it).
    if (this.stateValue === 'live') this.checkpoint();
    if (this.stateValue !== 'closed') this.to('closed');
    this.link.stopTimers();
    this.sub?.close();
  }

  /** the close code the connection ended with (ours, or the client's) */
  endCode: number | undefined;

  private onSocketClose(effective: number): void {
    this.stop();
    this.endCode = effective;
    void (async () => {
      // The handshake may still be taking the session: settle it once it has.
      await this.established;
      this.sub?.close();
      await this.settle(effective);
    })()
      .catch((err: unknown) => this.deps.log(err, 'gateway session could not be released'))
      .finally(() => {
        this.deps.finished(this);
        this.markDone();
      });
  }

  private async settle(code: number): Promise<void> {
    if (this.sessionId === undefined) return;
    const db = this.deps.domain.db;
    // 4010: the session (or its connection) belongs to someone else now — leave it alone.
    if (code === Close.SESSION_REPLACED) return;
    await this.saving;
    if (keepsSession(code))
      await releaseSession(
        db,
        this.sessionId,
        this.connId,
        this.deps.domain.clock.now(),
        this.claim?.marks ?? [],
      );
    else await endSession(db, this.sessionId, this.connId);
  }
}
