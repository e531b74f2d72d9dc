import type { Db } from '../storage/db.js';
import type { Signal } from '../events/bus.js';
import { DB_CHECK_MS, type EventsRuntime } from '../events/runtime.js';
import { Close } from './close-codes.js';
import type { GatewayConnection } from './connection.js';
import { heldSessions, tokenGenerations } from './session-store.js';

/** How long a shutdown waits for clients to answer op 7's close before cutting them off. */
const SHUTDOWN_WAIT_MS = 4000;

/**
 * This node's gateway connections, and the rules that span connections and nodes:
 *  - D29 one connection per bot, newest wins: a connection that takes a session announces the
 *    claim number (gateway_claims); any connection of that bot with a lower number, on any
 *    node, closes with 4010;
 *  - D8 token reset: connections whose token generation is no longer the bot's close with 4004.
 * Signals (in-process, and Redis between nodes) make both immediate; a check of the database
 * every DB_CHECK_MS makes them certain (a CLI reset without Redis, a lost signal).
 */
export class GatewayRegistry {
  private readonly byBot = new Map<number, Set<GatewayConnection>>();
  /** highest claim number per bot seen by this node (a late handshake may be older) */
  private readonly latestClaim = new Map<number, number>();
  private watcher: NodeJS.Timeout | undefined;
  private watching = false;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly db: Db,
    private readonly events: EventsRuntime,
    private readonly log: (err: unknown, msg: string) => void,
  ) {}

  start(): void {
    if (this.watcher) return;
    this.unsubscribe = this.events.onSignal((s) => this.onSignal(s));
    this.watcher = setInterval(() => void this.watch(), DB_CHECK_MS);
    this.watcher.unref();
  }

  stop(): void {
    clearInterval(this.watcher);
    this.watcher = undefined;
    this.unsubscribe?.();
  }

  get size(): number {
    let n = 0;
    for (const set of this.byBot.values()) n += set.size;
    return n;
  }

  add(conn: GatewayConnection): void {
    let set = this.byBot.get(conn.bot.botId);
    if (!set) this.byBot.set(conn.bot.botId, (set = new Set()));
    set.add(conn);
  }

  remove(conn: GatewayConnection): void {
    const set = this.byBot.get(conn.bot.botId);
    set?.delete(conn);
    if (set?.size === 0) {
      this.byBot.delete(conn.bot.botId);
      this.latestClaim.delete(conn.bot.botId);
    }
  }

  /** A connection took its bot's session: tell everyone (this node included). */
  claimed(conn: GatewayConnection): void {
    // A claim newer than this one was already heard (its handshake finished first): too late.
    if ((this.latestClaim.get(conn.bot.botId) ?? 0) > conn.claimN)
      conn.close(Close.SESSION_REPLACED, 'session replaced');
    this.events.publish({ k: 'claim', botId: conn.bot.botId, seq: conn.claimN });
  }

  private onSignal(s: Signal): void {
    if (s.k === 'claim') {
      // Only bots with a connection here matter (and the map stays as small as the registry).
      if (!this.byBot.has(s.botId)) return;
      const seen = this.latestClaim.get(s.botId) ?? 0;
      if (s.seq > seen) this.latestClaim.set(s.botId, s.seq);
      const newest = Math.max(seen, s.seq);
      for (const c of this.byBot.get(s.botId) ?? [])
        if (c.claimN > 0 && c.claimN < newest) c.close(Close.SESSION_REPLACED, 'session replaced');
    } else if (s.k === 'token') {
      void this.checkTokens([s.botId]);
    }
  }

  private async checkTokens(botIds: number[]): Promise<void> {
    try {
      const gens = await tokenGenerations(this.db, botIds);
      for (const botId of botIds)
        for (const c of this.byBot.get(botId) ?? [])
          if (gens.get(botId) !== c.bot.generation)
            c.close(Close.AUTHENTICATION_FAILED, 'token reset');
    } catch (err) {
      this.log(err, 'gateway token check failed');
    }
  }

  private async watch(): Promise<void> {
    if (this.watching || this.byBot.size === 0) return;
    this.watching = true;
    try {
      await this.checkTokens([...this.byBot.keys()]);
      const open: GatewayConnection[] = [];
      for (const set of this.byBot.values())
        for (const c of set) if (c.sessionId !== undefined && c.state !== 'closed') open.push(c);
      if (open.length === 0) return;
      const held = await heldSessions(
        this.db,
        open.map((c) => ({ sessionId: c.sessionId ?? '', connId: c.connId })),
      );
      const lost = open.filter(
        (c) => c.sessionId !== undefined && !held.has(c.sessionId) && c.state !== 'closed',
      );
      if (lost.length === 0) return;
      // A session gone because its bot was deleted or its token reset after the token check
      // above is a 4004 (D8), not a replacement: look at the tokens again for these.
      const gens = await tokenGenerations(this.db, [...new Set(lost.map((c) => c.bot.botId))]);
      for (const c of lost) {
        if (c.state === 'closed') continue;
        if (gens.get(c.bot.botId) !== c.bot.generation)
          c.close(Close.AUTHENTICATION_FAILED, 'token reset');
        else c.close(Close.SESSION_REPLACED, 'session replaced');
      }
    } catch (err) {
      this.log(err, 'gateway watch failed');
    } finally {
      this.watching = false;
    }
  }

  /** Graceful shutdown: op 7 to every client, close, and settle their sessions (resumable). */
  async shutdown(): Promise<void> {
    const all = [...this.byBot.values()].flatMap((set) => [...set]);
    for (const c of all) c.reconnect();
    const settled = Promise.all(all.map((c) => c.whenDone()));
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      settled,
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, SHUTDOWN_WAIT_MS);
      }),
    ]);
    clearTimeout(timer);
    this.stop();
  }
}
