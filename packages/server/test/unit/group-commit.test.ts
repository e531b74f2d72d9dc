import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { CommitHooks } from '../../src/events/commit-hooks.js';
import {
  atGroupEnd,
  batchAtGroupEnd,
  directIn,
  foldAtGroupEnd,
  oncePerGroup,
  type FoldRun,
} from '../../src/storage/group-commit.js';
import { appendEvents, type LogKey } from '../../src/events/log.js';
import { HookedConnection } from '../../src/storage/hooked-driver.js';
import { builtOnce, rawQuery, tuples } from '../../src/storage/raw-sql.js';
import { migrate, openDatabase, sql, type DatabaseHandle, type Db } from '../../src/storage/db.js';
import { PG_URL, postgresAvailable } from '../helpers/harness.js';

const pgOk = await postgresAvailable();

// storage/group-commit.ts through the Domain's transaction wrapper (events/commit-hooks.ts), on
// a real database with a second connection standing for anyone else reading it: SQLite (a file)
// and PostgreSQL (issue 29: a fresh schema), with the settings the server uses for each
// (events/runtime.ts).
/** The server's group settings for each database (events/runtime.ts). */
const GROUP = {
  sqlite: { maxGroup: 64 },
  postgres: { maxGroup: 32, overlap: true, maxInFlight: 2 },
} as const;

interface GroupDb {
  /** the database, unwrapped */
  h: DatabaseHandle;
  /** a second connection standing for anyone else reading it */
  other: DatabaseHandle;
  hooks: CommitHooks;
  /** the Domain's transaction wrapper with group commit */
  db: Db;
}

/**
 * A fresh migrated database for a describe block — a SQLite file, or a PostgreSQL schema of its
 * own (nothing when PostgreSQL is unavailable) — filled in before its tests, dropped after.
 */
function groupDatabase(dialect: 'sqlite' | 'postgres'): GroupDb {
  const pgDb = dialect === 'postgres';
  const dir = mkdtempSync(path.join(tmpdir(), 'parley-group-'));
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const url = pgDb ? PG_URL : `sqlite:${path.join(dir, 'parley.db')}`;
  const g = {} as GroupDb;
  let admin: pg.Client | undefined;
  beforeAll(async () => {
    if (pgDb) {
      if (!pgOk) return;
      admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      await admin.query(`create schema ${schema}`);
    }
    const opts = pgDb ? { schema } : {};
    g.h = openDatabase(url, opts);
    await migrate(g.h.db, dialect);
    g.other = openDatabase(url, opts);
    g.hooks = new CommitHooks((err) => {
      throw err;
    });
    g.db = g.hooks.wrap(g.h.db, { group: GROUP[dialect] });
  });
  afterAll(async () => {
    await g.h?.close();
    await g.other?.close();
    if (admin) {
      await admin.query(`drop schema ${schema} cascade`);
      await admin.end();
    }
    rmSync(dir, { recursive: true, force: true });
  });
  return g;
}

describe.each(['sqlite' as const, 'postgres' as const])('group commit (%s)', (dialect) => {
  const pgDb = dialect === 'postgres';
  const group = GROUP[dialect];
  const g = groupDatabase(dialect);
  let h: DatabaseHandle;
  let other: DatabaseHandle;
  let hooks: CommitHooks;
  let db: Db;
  let nextId = 1;

  beforeAll(async () => {
    if (pgDb && !pgOk) return;
    ({ h, other, hooks, db } = g);
    if (pgDb)
      await sql`create table poison (user_id bigint references users (id) deferrable initially deferred)`.execute(
        h.db,
      );
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

  it.skipIf(pgDb && !pgOk)(
    'concurrent transactions share one COMMIT; each resolves only once it is durable',
    async () => {
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
    },
  );

  it.skipIf(pgDb && !pgOk)(
    'while each turn of the loop brings members, the group waits for the next turn too (session 24)',
    async () => {
      const [a, b, c] = [nextId++, nextId++, nextId++];
      const run = (id: number) =>
        db.transaction().execute(async (trx) => {
          await addEvent(trx, id);
          // what another connection sees now: nothing of the group is committed while it runs
          return stored([a, b, c]);
        });
      // a and b arrive in one turn; c in the next, as a busy server's next request does
      const first = [run(a), run(b)];
      const late = new Promise<number[]>((resolve) => setImmediate(() => resolve(run(c))));
      const seen = await Promise.all([...first, late]);
      // one group: c ran before a and b were committed (alone, it would have found them)
      expect(seen).toEqual([[], [], []]);
      expect(await stored([a, b, c])).toEqual([a, b, c]);
    },
  );

  it.skipIf(pgDb && !pgOk)(
    'a transaction that comes alone starts on the next turn of the loop, without waiting for more',
    async () => {
      const id = nextId++;
      const marks: string[] = [];
      // PostgreSQL: a pooled connection is idle (a new one would take turns of the loop to open)
      await db.transaction().execute(async () => {});
      const done = db.transaction().execute(async (trx) => {
        marks.push('member');
        await addEvent(trx, id);
      });
      setImmediate(() => {
        marks.push('next turn');
        setImmediate(() => marks.push('turn after'));
      });
      await done;
      await new Promise((r) => setImmediate(() => setImmediate(r)));
      // the group started in the first turn after it (its callback before the marker queued
      // after it), not one turn later
      expect(marks.slice(0, 2)).toEqual(['member', 'next turn']);
      expect(await stored([id])).toEqual([id]);
    },
  );

  it.skipIf(pgDb && !pgOk)(
    'atGroupEnd (issue 26): work queued by members runs once, after the last member, before COMMIT',
    async () => {
      const [a, b, c] = [nextId++, nextId++, nextId++];
      const order: string[] = [];
      const run = (id: number, fail: boolean) =>
        db.transaction().execute(async (trx) => {
          await addEvent(trx, id);
          order.push(`member ${id}`);
          const queued = atGroupEnd(trx, async (t) => {
            // every member has run; nothing is committed yet; the failed member's row is gone
            const seen = await t
              .selectFrom('event_log')
              .select('pos')
              .where('pos', 'in', [a, b, c])
              .execute();
            order.push(`end ${id}: ${seen.map((r) => r.pos).join(',')}`);
            expect(await stored([a, b, c])).toEqual([]);
          });
          expect(queued).toBe(true);
          if (fail) throw new Error('no');
          return id;
        });
      const settled = await Promise.allSettled([run(a, false), run(b, true), run(c, false)]);
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(order).toEqual([
        `member ${a}`,
        `member ${b}`,
        `member ${c}`,
        `end ${a}: ${a},${c}`,
        `end ${b}: ${a},${c}`,
        `end ${c}: ${a},${c}`,
      ]);
      expect(await stored([a, b, c])).toEqual([a, c]);
      // outside a group there is no group end: the caller does the work itself
      expect(atGroupEnd(h.db, async () => {})).toBe(false);
    },
  );

  it.skipIf(pgDb && !pgOk)(
    'a member that throws is rolled back alone; its hooks never run; the others commit',
    async () => {
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
    },
  );

  it.skipIf(pgDb && !pgOk)(
    'a member whose statement fails in the database rolls back alone (issue 29); the others commit',
    async () => {
      // On PostgreSQL a failed statement aborts the whole transaction until ROLLBACK TO: the
      // members after it must still run and commit, and the one before must not be undone.
      const [a, c] = [nextId++, nextId++];
      const ran: number[] = [];
      await db.transaction().execute((trx) => addEvent(trx, a)); // `a` exists: b collides
      const d = nextId++;
      const run = (id: number, dup: boolean) =>
        db.transaction().execute(async (trx) => {
          if (!dup) await addEvent(trx, id);
          hooks.afterCommit(trx, () => ran.push(id));
          if (dup) {
            await addEvent(trx, d); // a write of its own, undone with it
            await addEvent(trx, a); // primary key violation
          }
          return id;
        });
      const [x, y] = [nextId++, nextId++];
      const settled = await Promise.allSettled([run(x, false), run(c, true), run(y, false)]);
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(await stored([x, y, d])).toEqual([x, y]);
      expect(ran).toEqual([x, y]);
    },
  );

  it.skipIf(pgDb && !pgOk)(
    'more members than one group holds: every one commits, each answered after its COMMIT',
    async () => {
      const ids = Array.from({ length: group.maxGroup * 3 + 5 }, () => nextId++);
      const committedWhenAnswered = await Promise.all(
        ids.map((id) =>
          db
            .transaction()
            .execute((trx) => addEvent(trx, id))
            .then(async () => (await stored([id])).length),
        ),
      );
      expect(committedWhenAnswered.every((n) => n === 1)).toBe(true);
      expect((await stored(ids)).length).toBe(ids.length);
    },
  );

  it.skipIf(pgDb && !pgOk)(
    'batchAtGroupEnd (issue 29): members’ rows in one write at the group’s end, a failed member’s left out; oncePerGroup made once',
    async () => {
      const [a, b, c] = [nextId++, nextId++, nextId++];
      const writes: number[][] = [];
      let made = 0;
      const shared: number[] = [];
      const run = (id: number, fail: boolean) =>
        db.transaction().execute(async (trx) => {
          shared.push(oncePerGroup(trx, 'k', () => ++made));
          const queued = batchAtGroupEnd(trx, 'events', id, async (t, rows) => {
            writes.push(rows);
            // one multi-row write, before COMMIT
            expect(await stored(rows)).toEqual([]);
            for (const r of rows) await addEvent(t, r);
          });
          expect(queued).toBe(true);
          if (fail) throw new Error('no');
          return id;
        });
      const settled = await Promise.allSettled([run(a, false), run(b, true), run(c, false)]);
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(writes).toEqual([[a, c]]);
      expect(await stored([a, b, c])).toEqual([a, c]);
      expect(made).toBe(1);
      expect(shared).toEqual([1, 1, 1]);
      // outside a group: no batch (the caller writes now), and a value made each time
      expect(batchAtGroupEnd(h.db, 'events', 0, async () => {})).toBe(false);
      expect(oncePerGroup(h.db, 'k', () => ++made)).toBe(2);
      expect(oncePerGroup(h.db, 'k', () => ++made)).toBe(3);
    },
  );

  it.skipIf(pgDb && !pgOk)(
    'when the COMMIT itself fails, no member is acknowledged and nothing is stored',
    async () => {
      const [a, b] = [nextId++, nextId++];
      const ran: number[] = [];
      const good = db.transaction().execute(async (trx) => {
        await addEvent(trx, a);
        hooks.afterCommit(trx, () => ran.push(a));
        return a;
      });
      // A deferred foreign-key violation is only detected at COMMIT time.
      const poison = db.transaction().execute(async (trx) => {
        await addEvent(trx, b);
        if (pgDb) {
          // PostgreSQL defers only constraints declared deferrable (the test's own table).
          await sql`insert into poison (user_id) values (999999)`.execute(trx);
          return b;
        }
        await sql`pragma defer_foreign_keys = on`.execute(trx);
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
    },
  );
  it.skipIf(pgDb && !pgOk)(
    "SQLite runs a member's fixed statements straight on the connection, inside its savepoint",
    async () => {
      const [a, b, c] = [nextId++, nextId++, nextId++];
      const insert = (trx: Db, id: number) =>
        rawQuery(
          trx,
          'insert into "event_log" ("pos", "xid", "type", "data", "recipients", "created_at") ' +
            "values (?, 0, 'T', '{}', 0, 0)",
          [id],
        );
      const seen: number[][] = [];
      const run = (id: number, fail: 'throw' | 'constraint' | false) =>
        db.transaction().execute(async (trx) => {
          // storage/sqlite-direct.ts: SQLite only (PostgreSQL's statements are round trips)
          expect(directIn(trx) !== undefined).toBe(!pgDb);
          await insert(trx, id);
          // the member reads its own write (and those of the members before it)
          const rows = await builtOnce<{ pos: number }>(
            trx,
            'test-direct-read:3',
            () =>
              trx
                .selectFrom('event_log')
                .select('pos')
                .where('pos', 'in', [0, 0, 0])
                .orderBy('pos'),
            [a, b, c],
          );
          seen.push(rows.map((r) => Number(r.pos)));
          if (fail === 'constraint') await insert(trx, a); // a's row: a duplicate key
          if (fail === 'throw') throw new Error('no');
          return id;
        });
      const settled = await Promise.allSettled([
        run(a, false),
        run(b, 'constraint'),
        run(c, 'throw'),
      ]);
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
      expect(seen).toEqual([[a], [a, b], [a, c]]); // b's row went with its savepoint
      expect(await stored([a, b, c])).toEqual([a]);
      // outside a group (nothing holds the connection) statements go through Kysely
      expect(directIn(h.db)).toBeUndefined();
      expect(await rawQuery(h.db, 'select 1 as one', [])).toEqual([{ one: 1 }]);
    },
  );
});

// Issue 29: rows folded into one statement at the group's end, and savepoints taken only before
// a member's first statement (storage/group-commit.ts foldAtGroupEnd, storage/hooked-driver.ts).
describe.each(['sqlite' as const, 'postgres' as const])('folded rows (%s)', (dialect) => {
  const pgDb = dialect === 'postgres';
  const g = groupDatabase(dialect);
  let h: DatabaseHandle;
  let hooks: CommitHooks;
  let db: Db;
  let nextId = 1;

  beforeAll(() => {
    ({ h, hooks, db } = g);
  });

  const INSERT =
    'insert into "event_log" ("pos", "xid", "type", "data", "recipients", "created_at") values ';
  const writeRows = (run: FoldRun, rows: number[]) =>
    run(INSERT + tuples(rows.length, "(?, 0, 'T', '{}', 0, 0)"), rows);
  const stored = async (ids: number[]) =>
    (await h.db.selectFrom('event_log').select('pos').where('pos', 'in', ids).execute())
      .map((r) => Number(r.pos))
      .sort((x, y) => x - y);

  /** Every SQL text sent to the database while `fn` runs (pg's client, or SQLite's statements). */
  async function statementsDuring<T>(fn: () => Promise<T>): Promise<{ out: T; sqls: string[] }> {
    const sqls: string[] = [];
    const spies: Array<{ mockRestore(): void }> = [];
    if (pgDb) {
      // every statement reaches the driver's connection (storage/hooked-driver.ts wraps it)
      const conn = await h.db.getExecutor().provideConnection(async (c) => c);
      expect(conn).toBeInstanceOf(HookedConnection);
      const proto = Object.getPrototypeOf((conn as HookedConnection).inner) as Record<
        string,
        (...a: unknown[]) => unknown
      >;
      const original = proto['executeQuery'] as (...a: unknown[]) => unknown;
      spies.push(
        vi.spyOn(proto, 'executeQuery').mockImplementation(function (
          this: unknown,
          ...args: unknown[]
        ) {
          sqls.push((args[0] as { sql: string }).sql);
          return original.apply(this, args);
        }),
      );
    } else {
      const probe = new SQLite(':memory:');
      const proto = Object.getPrototypeOf(probe.prepare('select 1')) as Record<
        string,
        (...a: unknown[]) => unknown
      >;
      probe.close();
      for (const method of ['run', 'all', 'get'] as const) {
        const original = proto[method] as (...a: unknown[]) => unknown;
        spies.push(
          vi.spyOn(proto, method).mockImplementation(function (
            this: { source: string },
            ...args: unknown[]
          ) {
            sqls.push(this.source);
            return original.apply(this, args);
          }),
        );
      }
    }
    try {
      return { out: await fn(), sqls };
    } finally {
      for (const s of spies) s.mockRestore();
    }
  }

  const [SP, RB, REL] = ['savepoint', 'rollback to savepoint', 'release savepoint'].map(
    (s) => `${s} grp_fold`,
  );
  it.skipIf(pgDb && !pgOk)(
    'members that run no statement take no savepoint; their rows go in one statement; a row that fails fails its member alone',
    async () => {
      const [a, b, c, taken] = [nextId++, nextId++, nextId++, nextId++];
      await db
        .transaction()
        .execute((trx) => rawQuery(trx, INSERT + "(?, 0, 'T', '{}', 0, 0)", [taken]));
      const writes: number[][] = [];
      const batched: number[][] = [];
      const ran: number[] = [];
      const run = (id: number, row: number) =>
        db.transaction().execute(async (trx) => {
          const folded = foldAtGroupEnd(trx, 'rows', row, (r, rows) => {
            writes.push(rows);
            return writeRows(r, rows);
          });
          expect(folded).toBe(true);
          // a second row of the same member is not folded: its caller writes it now
          expect(foldAtGroupEnd(trx, 'rows', row, () => undefined)).toBe(false);
          // the member's other group-end rows and its hooks share its fate
          batchAtGroupEnd(trx, 'other', id, async (_t, rows) => {
            batched.push(rows);
          });
          hooks.afterCommit(trx, () => ran.push(id));
          return id;
        });
      const { out: settled, sqls } = await statementsDuring(() =>
        Promise.allSettled([run(a, a), run(b, taken), run(c, c)]),
      );
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      // b's own error: the duplicate key of its row
      expect(String((settled[1] as PromiseRejectedResult).reason)).toMatch(/unique|duplicate/i);
      expect(await stored([a, b, c])).toEqual([a, c]);
      // one statement for the three, then one by one to find the failing row
      expect(writes).toEqual([[a, taken, c], [a], [taken], [c]]);
      expect(batched).toEqual([[a, c]]);
      expect(ran).toEqual([a, c]);
      // no member took a savepoint of its own: only the fold's
      expect(sqls.filter((q) => /savepoint grp$/.test(q))).toEqual([]);
      expect(sqls.filter((q) => /^savepoint grp_fold$/.test(q)).length).toBe(4);
      // Issue 29, SQLite: each fold savepoint is released once its rows are written (or rolled
      // back to), before the next statement: none stays open over the group's other writes
      const folds = sqls.filter((q) => /grp_fold$/.test(q));
      expect(folds).toEqual(
        pgDb ? [SP, RB, SP, SP, RB, SP] : [SP, RB, REL, SP, REL, SP, RB, REL, SP, REL],
      );
      // outside a group: nothing folds
      expect(foldAtGroupEnd(h.db, 'rows', 0, () => undefined)).toBe(false);
    },
  );

  it.skipIf(pgDb && !pgOk)(
    'reads before the fold: SQLite takes no savepoint for them, PostgreSQL does (a failed read aborts its transaction)',
    async () => {
      const [a, b, c] = [nextId++, nextId++, nextId++];
      const run = (id: number, failRead: boolean) =>
        db.transaction().execute(async (trx) => {
          // a read of the query builder's and a fixed one (SQLite: straight on the connection)
          await trx.selectFrom('event_log').select('pos').where('pos', '=', id).execute();
          await rawQuery(trx, 'select "pos" from "event_log" where "pos" = ?', [id]);
          if (failRead) await rawQuery(trx, 'select "no_such_column" from "event_log"', []);
          // PostgreSQL: the savepoint is taken, so the row is written now
          const folded = foldAtGroupEnd(trx, 'rows', id, writeRows);
          expect(folded).toBe(!pgDb);
          if (!folded) await rawQuery(trx, INSERT + "(?, 0, 'T', '{}', 0, 0)", [id]);
          return id;
        });
      const { out: settled, sqls } = await statementsDuring(() =>
        Promise.allSettled([run(a, false), run(b, true), run(c, false)]),
      );
      // b's read failed: b alone fails (on PostgreSQL its savepoint undoes the aborted state)
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(await stored([a, b, c])).toEqual([a, c]);
      expect(sqls.filter((q) => /savepoint grp$/.test(q)).length).toBe(pgDb ? 4 : 0);
    },
  );

  it.skipIf(pgDb && !pgOk)(
    'a member that runs a statement after folding writes its row first, inside its savepoint',
    async () => {
      const [a, b, c] = [nextId++, nextId++, nextId++];
      const run = (id: number, fail: boolean) =>
        db.transaction().execute(async (trx) => {
          expect(foldAtGroupEnd(trx, 'rows', id, writeRows)).toBe(true);
          // the statement finds the row: it was written before it ran
          const seen = await trx
            .selectFrom('event_log')
            .select('pos')
            .where('pos', '=', id)
            .execute();
          expect(seen.length).toBe(1);
          // its savepoint is taken: nothing more folds
          expect(foldAtGroupEnd(trx, 'rows', id, writeRows)).toBe(false);
          if (fail) throw new Error('no');
          return id;
        });
      const { out: settled, sqls } = await statementsDuring(() =>
        Promise.allSettled([run(a, false), run(b, true), run(c, false)]),
      );
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(await stored([a, b, c])).toEqual([a, c]); // b's row went with its savepoint
      const count = (re: RegExp) => sqls.filter((q) => re.test(q)).length;
      expect(count(/^savepoint grp$/)).toBe(3);
      expect(count(/^rollback to savepoint grp$/)).toBe(1); // b's
      // Issue 29, SQLite: each member's savepoint is closed once its work is done (kept or rolled
      // back to), so the statements after it do not fill SQLite's statement journal
      expect(count(/^release savepoint grp$/)).toBe(pgDb ? 0 : 3);
      expect(sqls.filter((q) => /grp_fold/.test(q))).toEqual([]); // nothing left to fold
    },
  );

  // Issue 29 (PostgreSQL): a group whose members ran no statement of their own has not begun its
  // transaction (storage/hooked-driver.ts lazyBegin); its end is written as ONE statement that
  // commits by itself (storage/group-commit.ts writeInOneStatement). SQLite writes it inside its
  // transaction as before.
  const KEYS = (n: number) => INSERT + tuples(n, "(?, 0, 'K', '{}', 0, 0)") + ' returning "pos"';
  /** A member that folds a row and batches a key row (both gatherable), then maybe fails. */
  function member(
    id: number,
    row: number,
    opts: { fail?: boolean; keys: number[][]; ran: number[] },
  ) {
    return db.transaction().execute(async (trx) => {
      expect(foldAtGroupEnd(trx, 'rows', row, writeRows, { gather: true })).toBe(true);
      batchAtGroupEnd(
        trx,
        'keys',
        id + 1000,
        async (t, rows) => {
          const r = await rawQuery<{ pos: number }>(t, KEYS(rows.length), rows);
          opts.keys.push(r.map((x) => Number(x.pos)).sort((x, y) => x - y));
        },
        { gather: true },
      );
      hooks.afterCommit(trx, () => opts.ran.push(id));
      if (opts.fail === true) throw new Error('no');
      return id;
    });
  }

  it.skipIf(pgDb && !pgOk)(
    'members that ran no statement: the group’s end is one statement (PostgreSQL: no BEGIN, savepoint or COMMIT), its rows and returned keys right',
    async () => {
      const [a, b, c] = [nextId++, nextId++, nextId++];
      const keys: number[][] = [];
      const ran: number[] = [];
      const { out: settled, sqls } = await statementsDuring(() =>
        Promise.allSettled([
          member(a, a, { keys, ran }),
          member(b, b, { keys, ran, fail: true }),
          member(c, c, { keys, ran }),
        ]),
      );
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(await stored([a, b, c, a + 1000, b + 1000, c + 1000])).toEqual([
        a,
        c,
        a + 1000,
        c + 1000,
      ]);
      expect(keys).toEqual([[a + 1000, c + 1000]]); // the returned rows reach their writer
      expect(ran).toEqual([a, c]);
      if (pgDb)
        expect(sqls).toEqual([
          expect.stringMatching(
            /^with "g0" as \(insert into "event_log" .*\) insert into "event_log" .* returning "pos"$/,
          ),
        ]);
      else expect(sqls.filter((q) => /^\s*with\b/i.test(q))).toEqual([]);
    },
  );

  it.skipIf(pgDb && !pgOk)(
    'the one statement fails on one member’s row: nothing of it stays, the group is written the usual way and that member alone fails',
    async () => {
      const [a, b, c, taken] = [nextId++, nextId++, nextId++, nextId++];
      await db
        .transaction()
        .execute((trx) => rawQuery(trx, INSERT + "(?, 0, 'T', '{}', 0, 0)", [taken]));
      const keys: number[][] = [];
      const ran: number[] = [];
      const { out: settled, sqls } = await statementsDuring(() =>
        Promise.allSettled([
          member(a, a, { keys, ran }),
          member(b, taken, { keys, ran }),
          member(c, c, { keys, ran }),
        ]),
      );
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(String((settled[1] as PromiseRejectedResult).reason)).toMatch(/unique|duplicate/i);
      // each row once (a second write of a key would have failed the group), b's key not at all
      expect(await stored([a, b, c, a + 1000, b + 1000, c + 1000])).toEqual([
        a,
        c,
        a + 1000,
        c + 1000,
      ]);
      expect(keys).toEqual([[a + 1000, c + 1000]]);
      expect(ran).toEqual([a, c]);
      if (pgDb) {
        expect(sqls[0]).toMatch(/^with /);
        expect(sqls[1]).toBe('begin');
        expect(sqls.at(-1)).toBe('commit');
      } else expect(sqls.filter((q) => /^\s*with\b/i.test(q))).toEqual([]);
    },
  );

  it.skipIf(pgDb && !pgOk)(
    'a member that runs a statement of its own begins the transaction before it; the group’s end is then written in it',
    async () => {
      const [a, b] = [nextId++, nextId++];
      const keys: number[][] = [];
      const ran: number[] = [];
      const reader = db.transaction().execute(async (trx) => {
        await rawQuery(trx, 'select "pos" from "event_log" where "pos" = ?', [b]);
        return 0;
      });
      const { sqls } = await statementsDuring(() =>
        Promise.all([member(a, a, { keys, ran }), reader]),
      );
      expect(await stored([a, a + 1000])).toEqual([a, a + 1000]);
      expect(sqls.filter((q) => /^\s*with\b/i.test(q))).toEqual([]);
      if (pgDb) {
        expect(sqls[0]).toBe('begin');
        expect(sqls.at(-1)).toBe('commit');
      }
    },
  );

  it.skipIf(pgDb && !pgOk)(
    'a transaction that runs nothing sends nothing (PostgreSQL); savepoints through Kysely begin it first',
    async () => {
      const { sqls } = await statementsDuring(() => h.db.transaction().execute(async () => 1));
      if (pgDb) expect(sqls).toEqual([]);
      else expect(sqls.some((q) => /^begin/i.test(q))).toBe(true);
      const id = nextId++;
      const trx = await h.db.startTransaction().execute();
      const sp = await trx.savepoint('sp').execute();
      await rawQuery(sp, INSERT + "(?, 0, 'T', '{}', 0, 0)", [id]);
      await sp.rollbackToSavepoint('sp').execute();
      await rawQuery(trx, INSERT + "(?, 0, 'T', '{}', 0, 0)", [id + 1]);
      await trx.commit().execute();
      expect(await stored([id, id + 1])).toEqual([id + 1]);
    },
  );
});

describe.each(['sqlite' as const, 'postgres' as const])(
  'the event log keys of a group (%s)',
  (dialect) => {
    const pgDb = dialect === 'postgres';
    const g = groupDatabase(dialect);
    const events = (tag: string, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        type: 'T',
        data: `{"tag":"${tag}","n":${i}}`,
        recipientSet: 0,
        now: 1,
        audience: null,
      }));
    /** pos → data, as another connection reads the committed log */
    const committed = async () =>
      new Map(
        (await g.other.db.selectFrom('event_log').select(['pos', 'data']).execute()).map((r) => [
          Number(r.pos),
          r.data,
        ]),
      );

    it.skipIf(pgDb && !pgOk)(
      "issue 29: appendEvents' keys name the rows it wrote, in order — with rows deleted before them (SQLite: without RETURNING)",
      async () => {
        const keys: LogKey[][] = [];
        // one group of three members, each with its events written at the group's end
        await Promise.all(
          [3, 1, 2].map((n, m) =>
            g.db.transaction().execute(async (trx) => {
              const queued = atGroupEnd(trx, async (t) => {
                keys[m] = await appendEvents(t, events(`a${m}`, n));
              });
              expect(queued).toBe(true);
            }),
          ),
        );
        // The last rows deleted: SQLite's AUTOINCREMENT (and PostgreSQL's sequence) never reuses
        // their positions, so the next keys must not be computed from what is left in the table.
        const before = await committed();
        const top = Math.max(...before.keys());
        await g.h.db
          .deleteFrom('event_log')
          .where('pos', '>', top - 2)
          .execute();
        await g.db.transaction().execute(async (trx) => {
          atGroupEnd(trx, async (t) => {
            keys[3] = await appendEvents(t, events('b', 4));
          });
        });
        // outside any group too (the Domain's own transaction, Kysely's executor)
        await g.h.db.transaction().execute(async (trx) => {
          keys[4] = await appendEvents(trx, events('c', 2));
        });
        const rows = await committed();
        const tags = ['a0', 'a1', 'a2', 'b', 'c'];
        const sizes = [3, 1, 2, 4, 2];
        tags.forEach((tag, m) => {
          const k = keys[m] ?? [];
          expect(k).toHaveLength(sizes[m] ?? -1);
          k.forEach((key, i) => {
            // the first group's rows as they were before the last two were deleted
            expect((m < 3 ? before : rows).get(key.pos)).toBe(`{"tag":"${tag}","n":${i}}`);
            if (!pgDb) expect(key.xid).toBe(0);
          });
          // in log order
          expect(k.map((x) => x.pos)).toEqual([...k.map((x) => x.pos)].sort((a, b) => a - b));
        });
        expect(Math.min(...(keys[3] ?? []).map((x) => x.pos))).toBeGreaterThan(top);
        // one group's members wrote under one transaction id (D36's horizon treats it as one)
        if (pgDb)
          expect(
            new Set(
              keys
                .slice(0, 3)
                .flat()
                .map((x) => x.xid),
            ).size,
          ).toBe(1);
      },
    );
  },
);
