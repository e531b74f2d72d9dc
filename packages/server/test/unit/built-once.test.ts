import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/db.js';
import { builtOnce } from '../../src/storage/raw-sql.js';

// Issue 24: the reads of a reply and of its mentions are built with the query builder once per
// shape and then run with each call's values — never the first call's.
describe('builtOnce: a query built once, run with each call’s values', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-built-'));
  const h = openDatabase(`sqlite:${path.join(dir, 'built.db')}`);
  afterAll(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('binds the values of each call in the builder’s order, per shape', async () => {
    await sql`create table t (a integer, b integer)`.execute(h.db);
    await sql`insert into t (a, b) values (1, 10), (1, 20), (2, 30)`.execute(h.db);
    let built = 0;
    const byA = (a: number, bs: number[]) =>
      builtOnce<{ b: number }>(
        h.db,
        `test-t:${bs.length}`,
        () => {
          built++;
          return (h.db as unknown as Kysely<{ t: { a: number; b: number } }>)
            .selectFrom('t')
            .select('b')
            .where('a', '=', 0)
            .where(
              'b',
              'in',
              bs.map(() => 0),
            )
            .orderBy('b');
        },
        [a, ...bs],
      );
    expect(await byA(1, [10, 20, 30])).toEqual([{ b: 10 }, { b: 20 }]);
    expect(await byA(2, [10, 20, 30])).toEqual([{ b: 30 }]);
    expect(await byA(1, [20])).toEqual([{ b: 20 }]);
    expect(built).toBe(2); // one build per shape (3 values, 1 value)
  });

  it('a shape whose values do not match the call is refused, not run', async () => {
    await expect(
      builtOnce(h.db, 'test-mismatch', () => h.db.selectFrom('t' as never).selectAll(), [1]),
    ).rejects.toThrow(/0 values, 1 given/);
  });
});
