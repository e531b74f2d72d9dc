import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { Domain } from '../domain/context.js';
import type { Signal } from '../events/bus.js';
import type { EventsRuntime } from '../events/runtime.js';
import { connectionClosed, connectionOpened, watchPeopleMemory } from '../metrics/metrics.js';
import { Close } from './close-codes.js';
import { PeopleHub } from './people-hub.js';
import { PersonConnection, type PersonIdentity } from './person-connection.js';
import type { PresenceTracker } from './presence.js';
import type { VisibilityTracker } from '../push/visibility.js';

/** D47: how often every connected person's session is looked up again (idle expiry, missed signals). */
export const SESSION_CHECK_MS = 60_000;
const SHUTDOWN_WAIT_MS = 4000;
/**
 * D70: a person's connections on one node. The 17th closes the oldest with 4011
 * TOO_MANY_CONNECTIONS (not resumable; the client must not reconnect by itself): tabs and devices
 * fit, a script opening sockets by the hundred does not make the node hold hundreds of sessions.
 */
export const MAX_CONNECTIONS_PER_PERSON = 16;

/**
 * This node's people on the gateway (D51): their connections, the fan-out hub fed by
 * `events.onPeople`, presence, and D47's rule that an ended session's connections close with
 * 4004 — at once on the signal `{k:'user'}` (logout, a session ended, password changed,
 * disabled: from any node through Redis), and every SESSION_CHECK_MS for everyone (idle expiry,
 * a change made without Redis).
 */
export class PeopleGateway {
  readonly hub: PeopleHub;
  private readonly conns = new Set<PersonConnection>();
  /** each person's connections here, oldest first (D70's bound) */
  private readonly byUser = new Map<number, Set<PersonConnection>>();
  private readonly unsubscribe: Array<() => void> = [];
  private checker: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(
    private readonly domain: Domain,
    private readonly events: EventsRuntime,
    private readonly presence: PresenceTracker,
    private readonly log: (err: unknown, msg: string) => void,
    private readonly info: (fields: Record<string, unknown>, msg: string) => void = () => {},
    /** D66: who has a visible tab (op 3), for Web Push */
    private readonly visibility?: VisibilityTracker,
  ) {
    this.hub = new PeopleHub({ db: domain.db, log });
  }

  get size(): number {
    return this.conns.size;
  }

  start(): void {
    if (this.checker) return;
    this.unsubscribe.push(
      this.events.onPeople((e) => this.hub.dispatch(e)),
      this.events.onSignal((s) => this.onSignal(s)),
      watchPeopleMemory(() => ({ unsent: this.unsentBytes(), replay: this.hub.events.bytes })),
    );
    this.checker = setInterval(() => void this.checkSessions(undefined), SESSION_CHECK_MS);
    this.checker.unref();
  }

  accept(
    ws: WebSocket,
    person: PersonIdentity,
    resume: { sessionId: string; seq: number } | undefined,
    socket: Duplex,
  ): void {
    const c = this.domain.config;
    const conn = new PersonConnection(
      ws,
      person,
      {
        domain: this.domain,
        hub: this.hub,
        heartbeatMs: c.heartbeatMs,
        resumeWindowS: c.resumeWindowS,
        rate: c.rateGateway,
        ...(this.visibility ? { visibility: this.visibility } : {}),
        presence: this.presence,
        finished: (x) => {
          this.conns.delete(x);
          const mine = this.byUser.get(x.userId);
          mine?.delete(x);
          if (mine?.size === 0) this.byUser.delete(x.userId);
          this.presence.down(x.userId);
          // D53 / issue #13: the gauge, and one info line per connection closed.
          const code = x.endCode ?? 1006;
          connectionClosed('person', code);
          this.info({ kind: 'person', userId: x.userId, code }, 'gateway connection closed');
        },
        log: this.log,
      },
      resume,
      socket,
    );
    this.closeOldestBeyond(person.userId, MAX_CONNECTIONS_PER_PERSON - 1);
    this.conns.add(conn);
    let mine = this.byUser.get(person.userId);
    if (!mine) this.byUser.set(person.userId, (mine = new Set()));
    mine.add(conn);
    this.presence.up(person.userId);
    conn.start();
    connectionOpened('person');
    this.info({ kind: 'person', userId: person.userId }, 'gateway connection opened');
  }

  /** D70: leave the person at most `keep` open connections here, closing the oldest (4011). */
  private closeOldestBeyond(userId: number, keep: number): void {
    // The set keeps insertion order: the first ones are the oldest.
    const open = [...(this.byUser.get(userId) ?? [])].filter((c) => !c.isClosed);
    for (const c of open.slice(0, Math.max(0, open.length - keep)))
      c.close(Close.TOO_MANY_CONNECTIONS, 'too many connections');
  }

  /** D70: bytes queued for people's sockets on this node and not yet sent (metrics). */
  unsentBytes(): number {
    let n = 0;
    for (const c of this.conns) n += c.unsentBytes;
    return n;
  }

  private onSignal(s: Signal): void {
    if (s.k !== 'user') return;
    if (this.hub.sessionsOf(s.userId).length > 0) void this.checkSessions(s.userId);
  }

  /**
   * D47: sessions (of one user, or all) whose token no longer opens a session — logged out,
   * ended, expired, or the person disabled — end, and their connections close with 4004.
   */
  async checkSessions(userId: number | undefined): Promise<void> {
    if (userId === undefined && this.checking) return;
    if (userId === undefined) this.checking = true;
    try {
      const sessions =
        userId === undefined ? [...this.hub.sessions.values()] : this.hub.sessionsOf(userId);
      const hashes = [...new Set(sessions.map((s) => s.tokenHash))];
      const alive = new Set<string>();
      for (let i = 0; i < hashes.length; i += 500) {
        // On SQLite each query runs synchronously and the awaits resolve as microtasks: without
        // this, 10,000 sessions' checks would hold the loop (and every fan-out) for 100+ ms.
        if (i > 0) await new Promise<void>((resolve) => setImmediate(resolve));
        const rows = await this.domain.db
          .selectFrom('user_sessions as s')
          .innerJoin('users as u', 'u.id', 's.user_id')
          .select('s.token_hash')
          .where('s.token_hash', 'in', hashes.slice(i, i + 500))
          .where('u.disabled', '=', 0)
          .execute();
        for (const r of rows) alive.add(r.token_hash);
      }
      for (const s of sessions) {
        if (alive.has(s.tokenHash) || s.ended) continue;
        this.hub.flush(s);
        const sink = s.sink;
        s.sink = undefined;
        sink?.close(Close.AUTHENTICATION_FAILED, 'session ended');
        this.hub.end(s);
      }
    } catch (err) {
      this.log(err, "people's gateway: session check failed");
    } finally {
      if (userId === undefined) this.checking = false;
    }
  }

  /** Graceful shutdown: op 7 to every person, then close. */
  async shutdown(): Promise<void> {
    for (const u of this.unsubscribe.splice(0)) u();
    clearInterval(this.checker);
    const all = [...this.conns];
    for (const c of all) c.reconnect();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(all.map((c) => c.whenDone())),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, SHUTDOWN_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    for (const s of [...this.hub.sessions.values()]) this.hub.end(s);
  }
}
