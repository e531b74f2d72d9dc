import Database from 'better-sqlite3';
import { SnowflakeGenerator } from '../../packages/server/src/ids/snowflake.js';

/**
 * Bulk history written straight into a server's SQLite file: the `messages` table of
 * storage/migrations/0001-init.ts, ids from the server's own snowflake scheme (D3) on a clock
 * that walks forward through the past (one message per millisecond, ending a minute ago), so
 * the rows look like history the server wrote itself and every id stays below the ones it
 * issues. A running server may hold the file: WAL lets this connection write meanwhile.
 */
export interface SeedChannel {
  readonly channelId: number;
  readonly count: number;
}

export interface SeedResult {
  /** the ids written to each channel, oldest first */
  readonly ids: Map<number, Float64Array>;
  readonly seconds: number;
}

const FILLER =
  'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt.';

export function seedMessages(
  dbFile: string,
  opts: { guildId: number; authorId: number; channels: readonly SeedChannel[] },
): SeedResult {
  const started = performance.now();
  const total = opts.channels.reduce((n, c) => n + c.count, 0);
  // One message per millisecond, ending a minute ago.
  let t = Date.now() - total - 60_000;
  const ids = new SnowflakeGenerator(0, { now: () => t });
  const db = new Database(dbFile);
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 10000');
    // A one-off load: durability of each batch does not matter (this connection only).
    db.pragma('synchronous = OFF');
    const insert = db.prepare(
      `insert into messages (id, channel_id, guild_id, author_id, content, msg_type, created_at, edited_at)
       values (?, ?, ?, ?, ?, 0, ?, null)`,
    );
    const out = new Map<number, Float64Array>();
    // Channels interleaved in time, each in proportion to its size, as real history would be:
    // the next row goes to the channel that is furthest behind its share.
    const order = opts.channels.map((c) => {
      const written = new Float64Array(c.count);
      out.set(c.channelId, written);
      return { channelId: c.channelId, ids: written, step: total / c.count, next: 0, done: 0 };
    });
    const batch = db.transaction((from: number, to: number) => {
      for (let i = from; i < to; i++) {
        let pick: (typeof order)[number] | undefined;
        for (const c of order) {
          if (c.done < c.ids.length && (!pick || c.next < pick.next)) pick = c;
        }
        if (!pick) throw new Error('seed: nothing left to write');
        pick.next += pick.step;
        t += 1;
        const id = ids.next();
        pick.ids[pick.done++] = id;
        const content = `message ${i}: ${FILLER.slice(0, 20 + (i % 70))}`;
        insert.run(id, pick.channelId, opts.guildId, opts.authorId, content, t);
      }
    });
    const BATCH = 50_000;
    for (let from = 0; from < total; from += BATCH) batch(from, Math.min(total, from + BATCH));
    db.pragma('wal_checkpoint(TRUNCATE)');
    return { ids: out, seconds: (performance.now() - started) / 1000 };
  } finally {
    db.close();
  }
}
