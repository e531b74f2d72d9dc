import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { openDatabase, sql } from '../../src/storage/db.js';
import { IdleCheckpoints } from '../../src/storage/sqlite-checkpoints.js';

// storage/db.ts IdleCheckpoints: the WAL is copied into the database file when the connection
// is quiet, not inside the COMMIT of whichever request crosses SQLite's automatic threshold.
describe('SQLite WAL checkpoints in quiet moments', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-ckpt-'));
  const file = path.join(dir, 'parley.db');
  const h = openDatabase(`sqlite:${file}`);

  afterAll(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a commit stays in the WAL; a moment later it is in the database file', async () => {
    await sql`create table blobs (id integer primary key, b blob)`.execute(h.db);
    await new Promise((r) => setTimeout(r, 300)); // the table's own checkpoint
    const before = statSync(file).size;
    await h.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 64; i++)
        await sql`insert into blobs (b) values (${Buffer.alloc(8192, i)})`.execute(trx);
    });
    // Committed, but far below the automatic threshold: the database file has not grown yet …
    expect(statSync(file).size).toBe(before);
    // … until the connection has been quiet for a moment.
    const deadline = Date.now() + 2000;
    while (statSync(file).size === before && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(statSync(file).size).toBeGreaterThan(before + 64 * 8192);
  });

  it('runs on a connection of its own: the WAL is copied while this connection holds a transaction', async () => {
    // Issue 29 (storage/sqlite-checkpoints.ts WalCheckpointer): a checkpoint on the event loop's
    // own connection has to wait for its transactions to end; the worker thread's does not.
    await new Promise((r) => setTimeout(r, 300));
    const before = statSync(file).size;
    await h.db.transaction().execute(async (trx) => {
      for (let i = 0; i < 64; i++)
        await sql`insert into blobs (b) values (${Buffer.alloc(8192, i)})`.execute(trx);
    });
    expect(statSync(file).size).toBe(before);
    let grew = false;
    await h.db.transaction().execute(async (trx) => {
      await sql`insert into blobs (b) values (${Buffer.alloc(16, 1)})`.execute(trx);
      const deadline = Date.now() + 2000;
      while (!(grew = statSync(file).size > before + 64 * 8192) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
    });
    expect(grew).toBe(true);
  });
});

describe('closing a SQLite database', () => {
  it('closes the checkpoint thread first, so the last connection folds the WAL in and removes it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'parley-ckpt-close-'));
    const file = path.join(dir, 'parley.db');
    try {
      const h = openDatabase(`sqlite:${file}`);
      await sql`create table t (x integer)`.execute(h.db);
      await sql`insert into t (x) values (1)`.execute(h.db);
      expect(existsSync(`${file}-wal`)).toBe(true);
      await h.close();
      expect(existsSync(`${file}-wal`)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('when checkpoints run under load (the clock mocked)', () => {
  it('a pause ends busy mode even when no checkpoint could start in it (a transaction was open)', () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'performance'] });
    try {
      const ran: number[] = [];
      const sqlite = {
        inTransaction: false,
        pragma(text: string) {
          if (text.startsWith('wal_checkpoint')) ran.push(performance.now());
        },
      };
      const clock = { lastCommit: 0, committedSinceCheckpoint: false };
      // ':memory:': no worker thread, so the checkpoints are the pragma calls on `sqlite`
      const c = new IdleCheckpoints(sqlite as never, clock, ':memory:');
      const load = (ms: number) => {
        for (let t = 0; t < ms; t += 10) {
          clock.lastCommit = performance.now();
          clock.committedSinceCheckpoint = true;
          vi.advanceTimersByTime(10);
        }
      };
      // Load that never pauses: after 2 s, a small checkpoint every 250 ms.
      load(3000);
      expect(ran.length).toBeGreaterThanOrEqual(3);
      // A pause of 200 ms, all of it inside a transaction of this connection: nothing can run …
      sqlite.inTransaction = true;
      vi.advanceTimersByTime(200);
      sqlite.inTransaction = false;
      const before = ran.length;
      // … but it was a pause: a burst after it waits for its own quiet moment (busy mode again
      // only after 2 s more), as it would after any pause.
      load(1800);
      expect(ran.length).toBe(before);
      // and the quiet moment after the burst checkpoints it
      vi.advanceTimersByTime(200);
      expect(ran.length).toBe(before + 1);
      void c.stop();
    } finally {
      vi.useRealTimers();
    }
  });
});
