import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommitHooks } from '../../src/events/commit-hooks.js';
import { migrate, openDatabase, sql, type DatabaseHandle, type Db } from '../../src/storage/db.js';

// storage/group-commit.ts through the Domain's transaction wrapper (events/commit-hooks.ts), on
// a real SQLite file with a second connection standing for anyone else reading it.
describe('group commit (SQLite)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-group-'));
  const url = `sqlite:${path.join(dir, 'parley.db')}`;
  let h: DatabaseHandle;
  let other: DatabaseHandle;
  let hooks: CommitHooks;
  let db: Db;
  let nextId = 1;

  beforeAll(async () => {
    h = openDatabase(url);
    await migrate(h.db, 'sqlite');
    other = openDatabase(url);
    hooks = new CommitHooks((err) => {
      throw err;
    });
    db = hooks.wrap(h.db, { group: true });
  });

  afterAll(async () => {
    await h.close();
    await other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const addEvent = (trx: Db, id: number) =>
    trx
      .insertInto('event_log')
      .values({ pos: id, xid: 0, type: 'T', data: '{}', recipients: 0, created_at: 0 })
      .execute();
  const stored = async (ids: number[]) =>
    (
      await other.db.selectFrom('event_log').select('pos as id').where('pos', 'in', ids).execute()
    ).map((r) => r.id);

  it('concurrent transactions share one COMMIT; each resolves only once it is durable', async () => {
    const ids = [nextId++, nextId++, nextId++];
    const seenAtHook: number[][] = [];
    const results = await Promise.all(
      ids.map((id) =>
        db.transaction().execute(async (trx) => {
          await addEvent(trx, id);
          // Members see the writes of the members before them, as if those had committed.
          const before = await trx
            .selectFrom('event_log')
            .select('pos')
            .where('pos', 'in', ids)
            .execute();
          hooks.afterCommit(trx, () => {
            seenAtHook.push([id]);
          });
          // … yet nothing is committed while the group runs: one transaction, not three.
          expect(await stored(ids)).toEqual([]);
          return before.length;
        }),
      ),
    );
    expect(results).toEqual([1, 2, 3]); // one group, run in arrival order
    expect(await stored(ids)).toEqual(ids); // visible to another connection: committed
    expect(seenAtHook).toEqual(ids.map((id) => [id])); // hooks after commit, in order
  });

  it('a member that throws is rolled back alone; its hooks never run; the others commit', async () => {
    const [a, b, c] = [nextId++, nextId++, nextId++];
    const ran: number[] = [];
    const run = (id: number, fail: boolean) =>
      db.transaction().execute(async (trx) => {
        await addEvent(trx, id);
        hooks.afterCommit(trx, () => ran.push(id));
        if (fail) throw new Error(`member ${id} failed`);
        return id;
      });
    const settled = await Promise.allSettled([run(a, false), run(b, true), run(c, false)]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((settled[1] as PromiseRejectedResult).reason).toMatchObject({
      message: `member ${b} failed`,
    });
    expect(await stored([a, b, c])).toEqual([a, c]);
    expect(ran).toEqual([a, c]);
  });

  it('when the COMMIT itself fails, no member is acknowledged and nothing is stored', async () => {
    const [a, b] = [nextId++, nextId++];
    const ran: number[] = [];
    const good = db.transaction().execute(async (trx) => {
      await addEvent(trx, a);
      hooks.afterCommit(trx, () => ran.push(a));
      return a;
    });
    // A deferred foreign-key violation is only detected at COMMIT time.
    const poison = db.transaction().execute(async (trx) => {
      await sql`pragma defer_foreign_keys = on`.execute(trx);
      await addEvent(trx, b);
      await trx
        .insertInto('user_sessions')
        .values({
          token_hash: `orphan-${b}`,
          user_id: 999_999,
          created_at: 0,
          id: `orphan-${b}`,
          last_used_at: 0,
          user_agent: '',
        })
        .execute();
      return b;
    });
    const settled = await Promise.allSettled([good, poison]);
    expect(settled.map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect(await stored([a, b])).toEqual([]);
    expect(ran).toEqual([]);
    // The connection is usable afterwards.
    const c = nextId++;
    await db.transaction().execute((trx) => addEvent(trx, c));
    expect(await stored([c])).toEqual([c]);
  });
});
