import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { RateSpec } from '../config/config.js';
import { getBot } from '../domain/bots/bots.service.js';
import type { Domain } from '../domain/context.js';
import type { Dispatcher, StreamSink, Subscription } from '../events/dispatcher.js';
import { dispatchFrame } from '../events/serialize.js';
import { EntryKind, type StreamEntry } from '../events/stream.js';
import { Close, keepsSession } from './close-codes.js';
import { INVALID_SESSION_FRAME, readyFrame, RECONNECT_FRAME, resumedFrame } from './frames.js';
import {
  createSession,
  endSession,
  newConnId,
  releaseSession,
  resumeSession,
  type Claim,
} from './session-store.js';
import { SocketLink } from './socket-link.js';

/**
 * One gateway connection as an explicit state machine (ARCHITECTURE habit 4):
 *
 *   handshake ──fresh READY──────────────▶ live ──▶ closed
 *       │                                   ▲
 *       └──resume accepted──▶ replaying ────┘ (its RESUMED marker reached)
 *   (any state ──▶ closed)
 *
 * HELLO goes out at once; there is no identify step (D31). The session is taken in the database
 * (gateway/session-store.ts), then the connection subscribes to its bot's stream from the
 * session's cursor: replayed and live dispatches come through the same ordered path, and every
 * dispatch's `s` is its stream position minus the READY marker's, plus one.
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
  readonly dispatcher: Dispatcher;
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

export class GatewayConnection implements StreamSink {
  readonly connId = newConnId();
  private stateValue: ConnState = 'handshake';
  sessionId: string | undefined;
  private readySeq = 0;
  /** position of this connection's READY / RESUMED marker (0 until the session is taken) */
  claimSeq = 0;
  private sub: Subscription | undefined;
  private replayed = 0;
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
    this.sub = this.deps.dispatcher.subscribe(this.bot.botId, claim.cursor, this);
  }

  private take(claim: Claim): void {
    this.sessionId = claim.sessionId;
    this.readySeq = claim.readySeq;
    this.claimSeq = claim.claimSeq;
    this.deps.claimed(this);
  }

  // StreamSink

  deliver(entries: readonly StreamEntry[]): void {
    for (const e of entries) {
      if (this.stateValue === 'closed') return;
      const s = e.seq - this.readySeq + 1;
      if (e.kind === EntryKind.EVENT) {
        if (e.type === null || e.data === null) continue;
        if (this.stateValue === 'replaying') this.replayed++;
        this.send(dispatchFrame(e.type, s, e.data));
      } else if (e.seq === this.claimSeq) {
        // Our own RESUMED marker: the replay is complete (D31).
        if (e.kind === EntryKind.RESUMED && this.sessionId !== undefined) {
          this.send(resumedFrame(s, { sessionId: this.sessionId, replayed: this.replayed }));
          this.to('live');
        }
      } else if (e.seq > this.claimSeq) {
        // A newer READY or RESUMED of this bot: another connection took over (D29).
        this.close(Close.SESSION_REPLACED, 'session replaced');
      }
      // Older markers (earlier resumes of this session) are not dispatches to replay.
    }
  }

  lost(): void {
    this.close(Close.UNKNOWN_ERROR, 'events no longer available');
  }

  busy(): boolean {
    return this.link.bufferedAmount > MAX_BUFFERED_BYTES;
  }

  private send(frame: string): void {
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
    if (this.stateValue !== 'closed') this.to('closed');
    this.link.stopTimers();
    this.sub?.close();
  }

  private onSocketClose(effective: number): void {
    this.stop();
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
    if (keepsSession(code))
      await releaseSession(db, this.sessionId, this.connId, this.deps.domain.clock.now());
    else await endSession(db, this.sessionId, this.connId);
  }
}
