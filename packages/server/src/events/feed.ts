import type { Db } from '../storage/db.js';
import {
  keyAfter,
  keyLess,
  parseRecipients,
  prunedBelow,
  readBotLog,
  readLog,
  logEnd,
  type LogKey,
  type LogRow,
} from './log.js';

/**
 * A consumer of one bot's events on this node: a gateway connection. It is handed that bot's
 * rows of the event log in log order, each once, from the key it subscribed at.
 */
export interface LogSink {
  readonly botId: number;
  /** every row of its bot below this key has been handed to it (or was before its session) */
  readonly position: LogKey;
  deliver(row: LogRow): void;
  /** every row of its bot below `end` has been handed to it */
  reached(end: LogKey): void;
  /** the end of a batch: what `deliver` gave it may be written out now, together */
  flush(): void;
  /** wants `reached` after each batch (a resumed session waiting to send RESUMED) */
  readonly waiting: boolean;
  /** true while it cannot take more now (slow client): it is fed from the database later */
  busy(): boolean;
  /** rows it still needs were pruned: it cannot be served */
  lost(): void;
}

export interface FeedSubscription {
  /** the key below which every row of the bot has been handed to the sink */
  position(): LogKey;
  close(): void;
}

interface Entry {
  readonly sink: LogSink;
  attached: boolean;
  /** given rows in the batch being handed out */
  touched: boolean;
  closed: boolean;
  running: boolean;
  retry: NodeJS.Timeout | undefined;
}

export interface FeedOptions {
  /** how often the log is read on a timer (safety net for lost signals, other processes), ms */
  pollMs: number;
  /** rows per database read */
  batch: number;
  onError(err: unknown): void;
  /**
   * D72: every row people may see (it has an audience), in log order, as the reader passes it;
   * then the end below which all were given.
   */
  people?: { row(r: LogRow): void; reached(end: LogKey): void };
}

/**
 * Fan-out on one node (issue 15). One reader follows the event log for the whole node: each row
 * is read once and handed to the local sessions of its recipient bots, found through an index
 * bot → attached sinks — the cost per event is one read per node (shared by a batch), not a row
 * per recipient. It learns that the log grew (1) right after a local commit — on SQLite, whose
 * commits are in log order, with the rows themselves: no read at all when they continue the log
 * exactly; (2) from another node's signal (Redis); (3) on a timer, which also covers writers
 * without Redis (the CLI) and lost signals.
 *
 * A sink that starts behind the reader (a resume, a slow client put aside) is first fed from the
 * database with its own bot's rows (`readBotLog`) until it has caught up with the reader's end,
 * and only then attached; nothing is skipped or repeated, whatever the interleaving.
 */
/**
 * Batching of wide fan-outs (SQLite's local commits). Each batch costs one socket write per
 * recipient session, and on loopback a write is mostly kernel time: 100 bots connected at 500
 * messages/s made about 35,000 writes a second, a third of the server's time (bench fanout (b)).
 * After a batch that went to WIDE_SOCKETS sockets or more, rows committed within COALESCE_MS
 * wait for that moment and go out together, one write per socket for all of them: the delay is
 * bounded by COALESCE_MS and paid only under wide, frequent fan-out; a narrow or occasional one
 * (a bot alone with its channel, bench fanout (a)) still goes out in the turn it committed.
 */
const WIDE_SOCKETS = 32;
const COALESCE_MS = 4;

export class Feed {
  private end: LogKey = { xid: 0, pos: 0 };
  private ready: Promise<void> | undefined;
  private readonly byBot = new Map<number, Set<Entry>>();
  private readonly watchers = new Set<Entry>();
  private poller: NodeJS.Timeout | undefined;
  private running = false;
  private dirty = false;
  private pending: LogRow[] = [];
  private flushQueued = false;
  /** the newest key this process committed: the reader retries until it has passed it */
  private committedTop: LogKey | undefined;
  private chase: NodeJS.Timeout | undefined;
  private readonly listeners = new Set<() => void>();
  private readonly touched: Entry[] = [];
  /** when a batch last went to at least WIDE_SOCKETS sockets (performance.now()) */
  private lastWide = -Infinity;

  constructor(
    private readonly db: Db,
    private readonly dialect: 'sqlite' | 'postgres',
    private readonly opts: FeedOptions,
  ) {}

  /** The reader starts at the log's end now: what came before belongs to sessions' catch-up. */
  init(): Promise<void> {
    this.ready ??= logEnd(this.db).then(
      (k) => {
        if (keyLess(this.end, k)) this.end = k;
      },
      (err: unknown) => {
        // D72: the database could not be read: the next advance tries again.
        this.ready = undefined;
        throw err;
      },
    );
    return this.ready;
  }

  start(): void {
    if (this.poller) return;
    this.poller = setInterval(() => this.poll(), this.opts.pollMs);
    this.poller.unref();
  }

  stop(): void {
    clearInterval(this.poller);
    clearTimeout(this.chase);
    this.poller = undefined;
    for (const set of this.byBot.values()) for (const e of set) this.drop(e);
  }

  /** Told after each batch the reader handed out (tests, metrics). */
  onAdvance(l: () => void): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  subscribe(sink: LogSink): FeedSubscription {
    const e: Entry = {
      sink,
      attached: false,
      touched: false,
      closed: false,
      running: false,
      retry: undefined,
    };
    void this.catchUp(e);
    return {
      position: () => (e.attached && keyLess(sink.position, this.end) ? this.end : sink.position),
      close: () => this.drop(e),
    };
  }

  /** In-process: rows this process just committed, in commit order within each call. */
  committed(rows: readonly LogRow[]): void {
    const last = rows[rows.length - 1];
    if (!last) return;
    if (!this.committedTop || keyLess(this.committedTop, last)) this.committedTop = last;
    if (this.dialect === 'postgres') {
      // Commit order is not log order there: only the reader, below the horizon, can tell.
      this.wake();
      return;
    }
    for (const r of rows) this.pending.push(r);
    if (this.flushQueued) return;
    this.flushQueued = true;
    // A wide fan-out that has just gone out: the next rows wait a moment and share its sockets'
    // writes (see WIDE_SOCKETS). A narrow one, or one a while ago, goes out in this turn.
    const wait = this.lastWide + COALESCE_MS - performance.now();
    if (wait > 0) setTimeout(() => this.flush(), wait);
    else queueMicrotask(() => this.flush());
  }

  /** Another node (or the timer): the log may have grown. */
  wake(): void {
    if (this.running) {
      this.dirty = true;
      return;
    }
    void this.advance();
  }

  private poll(): void {
    if (!this.running) void this.advance();
  }

  private flush(): void {
    this.flushQueued = false;
    const rows = this.pending.sort((a, b) => a.pos - b.pos);
    this.pending = [];
    if (this.running || !this.ready) return this.wake();
    let next = this.end.pos;
    const fresh: LogRow[] = [];
    for (const r of rows) {
      if (r.pos < next) continue;
      // A hole: another process wrote (or a group member rolled back): read the log instead.
      if (r.pos !== next) return this.wake();
      fresh.push(r);
      next++;
    }
    if (fresh.length > 0) this.hand(fresh, { xid: 0, pos: next });
  }

  private async advance(): Promise<void> {
    this.running = true;
    try {
      await this.init();
      for (;;) {
        this.dirty = false;
        const { rows, end } = await readLog(this.db, this.end, this.opts.batch);
        this.hand(rows, end);
        if (rows.length < this.opts.batch && !this.dirty) break;
      }
      // A local commit the horizon has not passed yet (PostgreSQL: an older transaction is still
      // running): look again shortly rather than at the next timer.
      const top = this.committedTop;
      if (top && keyLess(this.end, keyAfter(top))) {
        clearTimeout(this.chase);
        this.chase = setTimeout(() => this.wake(), 5);
        this.chase.unref();
      } else this.committedTop = undefined;
    } catch (err) {
      this.opts.onError(err);
    } finally {
      this.running = false;
    }
  }

  /** Rows from the reader's end on, and the new end: to every attached sink of their bots. */
  private hand(rows: readonly LogRow[], end: LogKey): void {
    const people = this.opts.people;
    if (people) {
      for (const r of rows) if (r.audience !== null) people.row(r);
      people.reached(end);
    }
    const touched = this.touched;
    if (this.byBot.size > 0)
      for (const r of rows) {
        for (const botId of parseRecipients(r.recipients)) {
          const set = this.byBot.get(botId);
          if (!set) continue;
          for (const e of set) {
            if (e.sink.busy()) {
              // A slow client: fed from the database once it has drained.
              e.sink.flush();
              this.detach(e);
              this.later(e, 25);
              continue;
            }
            e.sink.deliver(r);
            if (!e.touched) {
              e.touched = true;
              touched.push(e);
            }
          }
        }
      }
    // One write per socket for the whole batch.
    for (const e of touched) {
      e.touched = false;
      e.sink.flush();
    }
    if (touched.length >= WIDE_SOCKETS) this.lastWide = performance.now();
    touched.length = 0;
    if (keyLess(this.end, end)) this.end = end;
    for (const e of this.watchers) {
      if (!e.sink.waiting) this.watchers.delete(e);
      else e.sink.reached(this.end);
    }
    for (const l of this.listeners) l();
  }

  /** Feed the sink from the database until it has caught up with the reader, then attach it. */
  private async catchUp(e: Entry): Promise<void> {
    if (e.running || e.closed || e.attached) return;
    e.running = true;
    try {
      await this.init();
      for (;;) {
        if (e.closed) return;
        if (e.sink.busy()) {
          this.later(e, 25);
          return;
        }
        const to = this.end;
        if (!keyLess(e.sink.position, to)) {
          this.attach(e);
          return;
        }
        const from = e.sink.position;
        if (keyLess(from, await prunedBelow(this.db))) {
          this.drop(e);
          e.sink.lost();
          return;
        }
        const rows = await readBotLog(this.db, e.sink.botId, from, to, this.opts.batch);
        if (e.closed) return;
        for (const r of rows) e.sink.deliver(r);
        e.sink.flush();
        if (rows.length < this.opts.batch) e.sink.reached(to);
      }
    } catch (err) {
      this.opts.onError(err);
      this.later(e, 500);
    } finally {
      e.running = false;
    }
  }

  private attach(e: Entry): void {
    e.attached = true;
    let set = this.byBot.get(e.sink.botId);
    if (!set) this.byBot.set(e.sink.botId, (set = new Set()));
    set.add(e);
    if (e.sink.waiting) this.watchers.add(e);
    e.sink.reached(this.end);
  }

  private detach(e: Entry): void {
    if (!e.attached) return;
    e.attached = false;
    this.watchers.delete(e);
    const set = this.byBot.get(e.sink.botId);
    set?.delete(e);
    if (set?.size === 0) this.byBot.delete(e.sink.botId);
  }

  private drop(e: Entry): void {
    e.closed = true;
    clearTimeout(e.retry);
    this.detach(e);
  }

  private later(e: Entry, ms: number): void {
    clearTimeout(e.retry);
    e.retry = setTimeout(() => void this.catchUp(e), ms);
    e.retry.unref();
  }
}
