import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, openDatabase, type DatabaseHandle } from '../../src/storage/db.js';
import type { PgCacheVersion } from '../../src/storage/pg-version.js';
import { PG_URL, postgresAvailable } from '../helpers/harness.js';

const pgOk = await postgresAvailable();

// storage/pg-version.ts: the derived cache's version on PostgreSQL is read after a lookup began,
// and concurrent lookups share a read (issue 29: the requests of one turn of the loop share one).
describe.skipIf(!pgOk)('the cache version on PostgreSQL (storage/pg-version.ts)', () => {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  let admin: pg.Client;
  let h: DatabaseHandle;
  let version: PgCacheVersion;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    h = openDatabase(PG_URL, { schema });
    await migrate(h.db, 'postgres');
    version = h.version as PgCacheVersion;
  });
  afterAll(async () => {
    await h?.close();
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  });

  it('the reads asked in one turn of the loop share one query', async () => {
    await version.read(); // the reading connection is open
    const before = version.sent;
    const read = await Promise.all([version.read(), version.read(), version.read()]);
    expect(version.sent - before).toBe(1);
    expect(read.every((v) => Number.isFinite(v) && v === read[0])).toBe(true);
  });

  it('a read asked while one is under way waits for the next: one sent after it was asked', async () => {
    const before = version.sent;
    const first = version.read();
    await new Promise((resolve) => setImmediate(resolve)); // the first is sent
    expect(version.sent - before).toBe(1);
    // a write of derived data (no row needs to change) commits and moves the version while the
    // first read is under way: the reads asked after it must see it
    await h.db.updateTable('users').set({ name: 'nobody' }).where('id', '=', -1).execute();
    const later = [version.read(), version.read()];
    const [a, b, c] = await Promise.all([first, ...later]);
    expect(version.sent - before).toBe(2);
    expect(b).toBe(c);
    expect(b as number).toBeGreaterThan(a);
  });
});
