import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase, sql } from '../../src/storage/db.js';

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
