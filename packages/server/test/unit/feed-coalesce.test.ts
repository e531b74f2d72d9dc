import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Feed, type LogSink } from '../../src/events/feed.js';
import { logEnd, type LogKey, type LogRow } from '../../src/events/log.js';
import { migrate, openDatabase, type DatabaseHandle } from '../../src/storage/db.js';

/**
 * Issue 15, bench fanout (b): after a batch that went to 32 sockets or more, SQLite's next local
 * commits wait up to 4 ms and leave together, one write (flush) per socket; a narrow fan-out is
 * never held back. setTimeout and performance.now are faked, so the 4 ms are exact.
 */
class Sink implements LogSink {
  readonly delivered: number[] = [];
  /** rows per flush that carried any */
  readonly writes: number[] = [];
  private pendingRows = 0;
  attached = false;
  readonly waiting = false;
  constructor(
    readonly botId: number,
    public position: LogKey,
  ) {}
  deliver(row: LogRow): void {
    this.delivered.push(row.pos);
    this.pendingRows++;
    this.position = { xid: 0, pos: row.pos + 1 };
  }
  reached(): void {
    this.attached = true;
  }
  flush(): void {
    if (this.pendingRows > 0) this.writes.push(this.pendingRows);
    this.pendingRows = 0;
  }
  busy(): boolean {
    return false;
  }
  lost(): void {
    throw new Error('lost');
  }
}

const turn = () => new Promise<void>((r) => setImmediate(r));

describe('feed: wide fan-outs share writes (issue 15)', () => {
  let h: DatabaseHandle;
  let feed: Feed;
  let end: LogKey;
  let pos: number;

  beforeEach(async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    h = openDatabase('sqlite::memory:');
    await migrate(h.db, 'sqlite');
    end = await logEnd(h.db);
    pos = end.pos;
    feed = new Feed(h.db, 'sqlite', {
      pollMs: 60_000,
      batch: 1024,
      onError: (e) => {
        throw e;
      },
    });
    await feed.init();
  });
  afterEach(async () => {
    feed.stop();
    vi.useRealTimers();
    await h.close();
  });

  const attach = async (count: number): Promise<Sink[]> => {
    const sinks = Array.from({ length: count }, (_, i) => new Sink(i + 1, end));
    for (const s of sinks) feed.subscribe(s);
    while (!sinks.every((s) => s.attached)) await turn();
    return sinks;
  };
  const row = (bots: number): LogRow => ({
    xid: 0,
    pos: pos++,
    type: 'MESSAGE_CREATE',
    data: '{}',
    recipients: `,${Array.from({ length: bots }, (_, i) => i + 1).join(',')},`,
    createdAt: 0,
    audience: null,
  });

  it('40 sockets: the rows after a wide batch wait ≤ 4 ms and go out in one write each', async () => {
    const sinks = await attach(40);
    feed.committed([row(40)]);
    await turn();
    expect(sinks.every((s) => s.writes.length === 1)).toBe(true);
    // Two more commits right after: held back, not lost.
    feed.committed([row(40)]);
    await turn();
    feed.committed([row(40)]);
    await turn();
    expect(sinks[0]?.delivered).toHaveLength(1);
    vi.advanceTimersByTime(3);
    await turn();
    expect(sinks[0]?.delivered).toHaveLength(1);
    vi.advanceTimersByTime(1);
    await turn();
    for (const s of sinks) {
      expect(s.delivered).toEqual([end.pos, end.pos + 1, end.pos + 2]);
      expect(s.writes).toEqual([1, 2]);
    }
    // Once the moment has passed, the next commit goes out in its own turn again.
    vi.advanceTimersByTime(10);
    feed.committed([row(40)]);
    await turn();
    expect(sinks[0]?.writes).toEqual([1, 2, 1]);
  });

  it('a narrow fan-out (2 sockets) is never held back', async () => {
    const sinks = await attach(2);
    for (let i = 0; i < 3; i++) {
      feed.committed([row(2)]);
      await turn();
      expect(sinks.every((s) => s.delivered.length === i + 1)).toBe(true);
    }
    expect(sinks[1]?.writes).toEqual([1, 1, 1]);
  });
});
