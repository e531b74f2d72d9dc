import type { Db } from '../storage/db.js';
import type { CommittedEntry } from './outbox.js';
import { EntryKind, readStream, streamHeads, type StreamEntry } from './stream.js';

/**
 * A consumer of one bot's stream on this node (a gateway connection now; webhooks can follow
 * every bot through `onHead`). The dispatcher hands it committed entries strictly in stream
 * order, each exactly once, starting right after the cursor it subscribed with.
 */
export interface StreamSink {
  deliver(entries: readonly StreamEntry[]): void;
  /** entries after the cursor are gone (pruned): the sink cannot be served from here on */
  lost(): void;
  /** true while it cannot take more now (slow client): the dispatcher comes back shortly */
  busy(): boolean;
}

export interface Subscription {
  readonly botId: number;
  /** last position handed to the sink */
  readonly cursor: number;
  close(): void;
}

class Sub implements Subscription {
  running = false;
  dirty = false;
  closed = false;
  retry: NodeJS.Timeout | undefined;

  constructor(
    readonly botId: number,
    public cursor: number,
    readonly sink: StreamSink,
    private readonly onClose: (s: Sub) => void,
  ) {}

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.retry);
    this.onClose(this);
  }
}

export interface DispatcherOptions {
  /** how often subscribed bots' stream heads are checked in the database (safety net, ms) */
  pollMs: number;
  /** entries per database read */
  batch: number;
  onError(err: unknown): void;
}

/**
 * Reads committed stream entries in order and hands them to sinks. Three ways to learn that a
 * bot's stream grew: (1) in-process, right after a local commit, with the entries themselves —
 * delivered without touching the database when they follow the sink's cursor; (2) a signal from
 * another node (Redis) naming the new head; (3) a periodic look at the heads of every subscribed
 * bot, which also catches writes by other processes without Redis (the CLI) and lost signals.
 * Whatever the trigger, a sink is fed from its own cursor, so nothing is skipped or repeated.
 */
export class Dispatcher {
  private readonly byBot = new Map<number, Set<Sub>>();
  private readonly headListeners = new Set<(botId: number, seq: number) => void>();
  private poller: NodeJS.Timeout | undefined;
  private polling = false;

  constructor(
    private readonly db: Db,
    private readonly opts: DispatcherOptions,
  ) {}

  start(): void {
    if (this.poller) return;
    this.poller = setInterval(() => void this.poll(), this.opts.pollMs);
    this.poller.unref();
  }

  stop(): void {
    clearInterval(this.poller);
    this.poller = undefined;
    for (const subs of this.byBot.values()) for (const s of subs) s.close();
  }

  subscribe(botId: number, cursor: number, sink: StreamSink): Subscription {
    const sub = new Sub(botId, cursor, sink, (s) => {
      const set = this.byBot.get(s.botId);
      set?.delete(s);
      if (set?.size === 0) this.byBot.delete(s.botId);
    });
    let set = this.byBot.get(botId);
    if (!set) this.byBot.set(botId, (set = new Set()));
    set.add(sub);
    this.pump(sub);
    return sub;
  }

  /** For sinks that follow every bot (webhooks): told the new head of any bot's stream. */
  onHead(listener: (botId: number, seq: number) => void): () => void {
    this.headListeners.add(listener);
    return () => this.headListeners.delete(listener);
  }

  /** In-process: entries that were just committed (events/outbox.ts). */
  committed(list: readonly CommittedEntry[]): void {
    const byBot = new Map<number, StreamEntry[]>();
    for (const { botId, entry } of list) {
      const l = byBot.get(botId);
      if (l) l.push(entry);
      else byBot.set(botId, [entry]);
    }
    for (const [botId, entries] of byBot) {
      const last = entries[entries.length - 1];
      if (!last) continue;
      this.tellHead(botId, last.seq);
      for (const sub of this.byBot.get(botId) ?? []) this.offer(sub, entries);
    }
  }

  /** Another node committed entries for `botId` up to `seq`. */
  wake(botId: number, seq: number): void {
    this.tellHead(botId, seq);
    for (const sub of this.byBot.get(botId) ?? []) if (seq > sub.cursor) this.pump(sub);
  }

  private tellHead(botId: number, seq: number): void {
    for (const l of this.headListeners) {
      try {
        l(botId, seq);
      } catch (err) {
        this.opts.onError(err);
      }
    }
  }

  private offer(sub: Sub, entries: readonly StreamEntry[]): void {
    const first = entries[0];
    const last = entries[entries.length - 1];
    if (!first || !last || last.seq <= sub.cursor) return;
    // The fast path: the entries continue the sink's stream exactly and nothing is in flight.
    if (!sub.running && !sub.dirty && first.seq === sub.cursor + 1 && !sub.sink.busy()) {
      sub.cursor = last.seq;
      sub.sink.deliver(entries);
      return;
    }
    this.pump(sub);
  }

  private pump(sub: Sub): void {
    if (sub.closed) return;
    if (sub.running) {
      sub.dirty = true;
      return;
    }
    void this.drain(sub);
  }

  /** Read from the cursor until caught up; one drain per sink at a time. */
  private async drain(sub: Sub): Promise<void> {
    sub.running = true;
    try {
      for (;;) {
        sub.dirty = false;
        if (sub.closed) return;
        if (sub.sink.busy()) {
          this.later(sub, 25);
          return;
        }
        const entries = await readStream(this.db, sub.botId, sub.cursor, this.opts.batch);
        if (sub.closed) return;
        if (!contiguous(entries, sub.cursor)) {
          sub.close();
          sub.sink.lost();
          return;
        }
        const last = entries[entries.length - 1];
        if (last) {
          sub.cursor = last.seq;
          sub.sink.deliver(entries);
        }
        if (entries.length < this.opts.batch && !sub.dirty) return;
      }
    } catch (err) {
      this.opts.onError(err);
      this.later(sub, 500);
    } finally {
      sub.running = false;
    }
  }

  private later(sub: Sub, ms: number): void {
    clearTimeout(sub.retry);
    sub.retry = setTimeout(() => this.pump(sub), ms);
    sub.retry.unref();
  }

  private async poll(): Promise<void> {
    if (this.polling || this.byBot.size === 0) return;
    this.polling = true;
    try {
      const heads = await streamHeads(this.db, [...this.byBot.keys()]);
      for (const [botId, seq] of heads)
        for (const sub of this.byBot.get(botId) ?? []) if (seq > sub.cursor) this.pump(sub);
    } catch (err) {
      this.opts.onError(err);
    } finally {
      this.polling = false;
    }
  }
}

/** Stream positions have no holes; a hole means pruned rows (or an event row pruned under us). */
function contiguous(entries: readonly StreamEntry[], cursor: number): boolean {
  let expect = cursor + 1;
  for (const e of entries) {
    if (e.seq !== expect) return false;
    if (e.kind === EntryKind.EVENT && (e.type === null || e.data === null)) return false;
    expect++;
  }
  return true;
}
