import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/db.js';

// Two processes on one SQLite file (the CLI beside a running server, D52). A transaction that
// read first and writes later must not fail with "database is locked" because the other one
// committed in between: with a deferred BEGIN the upgrade from reader to writer fails at once
// (a stale snapshot never waits for the busy timeout). Seen as a flaky CLI test under load.
describe('SQLite write transactions take the write lock at BEGIN', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-begin-'));
  const file = path.join(dir, 'begin.db');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Another connection, in a thread of its own (its wait must not block this one). */
  const otherWriter = (): Promise<number> =>
    new Promise((resolve, reject) => {
      const w = new Worker(
        `const { parentPort, workerData } = require('node:worker_threads');
         const Database = require('better-sqlite3');
         const db = new Database(workerData);
         db.pragma('busy_timeout = 5000');
         const t = Date.now();
         db.prepare('insert into probe (x) values (1)').run();
         db.close();
         parentPort.postMessage(Date.now() - t);`,
        { eval: true, workerData: file },
      );
      w.once('message', (ms: number) => resolve(ms));
      w.once('error', reject);
    });

  it('a transaction that reads, lets another process try to write, then writes, commits', async () => {
    const h = openDatabase(`sqlite:${file}`);
    try {
      await sql`create table probe (x integer)`.execute(h.db);
      let other: Promise<number> | undefined;
      await h.db.transaction().execute(async (trx) => {
        await sql`select count(*) from probe`.execute(trx);
        other = otherWriter();
        await new Promise((r) => setTimeout(r, 200));
        await sql`insert into probe (x) values (2)`.execute(trx);
      });
      // The other writer waited for this commit, then wrote.
      expect(await other).toBeGreaterThanOrEqual(100);
      const rows = await sql<{ x: number }>`select x from probe order by rowid`.execute(h.db);
      expect(rows.rows.map((r) => r.x)).toEqual([2, 1]);
    } finally {
      await h.close();
    }
  });
});
