import { CompiledQuery } from 'kysely';
import type { Db } from './db.js';
import { HookedConnection } from './hooked-driver.js';
import { dollars, isPostgres } from './raw-sql.js';
import { directFor, type DirectRun } from './sqlite-direct.js';

/** the most turns of the loop a group waits for members (GroupCommit `schedule`) */
const GATHER_TURNS = 3;

/**
 * Group commit (issue 29: on PostgreSQL too). Transactions that arrive while the event loop is
 * busy are run one after another inside ONE database transaction, each in its own savepoint, and
 * committed together: under load the BEGIN/COMMIT (and, on SQLite, the pages a COMMIT writes)
 * are paid once per group instead of once per request; when idle a group has one member and
 * starts on the next turn of the loop.
 *
 * Nothing changes for the callers: a transaction's callback sees only its own writes plus those
 * of the group members before it (as if they had committed just before it, which they will);
 * one that throws is rolled back to its savepoint alone and rejects at once; the others resolve
 * only after the group's COMMIT — an answer is never sent for a write that is not durable
 * (D36), and if the COMMIT fails every member of the group fails with it.
 *
 * The event log's horizon rule (D36, docs/scaling.md) is untouched: on PostgreSQL the members of
 * a group write their log rows under one transaction id, which the horizon treats like any
 * other transaction's (its rows become readable when it has ended).
 *
 * `overlap` (PostgreSQL): the next group starts on another pooled connection as soon as the
 * previous one has run all its members and only waits for its COMMIT, so the commit's round trip
 * and WAL flush overlap the next group's statements. Two groups never wait for each other's locks
 * in a cycle: a group that holds locks and waits only for its COMMIT waits for nothing else.
 * Bounded to `maxInFlight` groups committing at once.
 */
export class GroupCommit {
  private pending: Job[] = [];
  private scheduled = false;
  private running = false;
  private inFlight = 0;

  constructor(
    private readonly db: Db,
    private readonly opts: {
      /** members per group: bounds how long the first waits for the last (on PostgreSQL also the
       * subtransactions one transaction holds: each member's savepoint is one) */
      maxGroup: number;
      /** start the next group while this one commits (PostgreSQL: a pool of connections) */
      overlap?: boolean;
      maxInFlight?: number;
    },
  ) {}

  /**
   * `committed`: called once the group has committed, just before this member's promise resolves
   * (never when it fails) — the caller's after-commit work without an async wrapper of its own
   * (issue 29: a promise less per send).
   */
  run<T>(cb: (trx: Db) => Promise<T>, committed?: () => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({
        cb,
        resolve: (committed
          ? (v: T) => {
              committed();
              resolve(v);
            }
          : resolve) as (v: unknown) => void,
        reject,
      });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running || this.inFlight >= (this.opts.maxInFlight ?? 1)) return;
    this.scheduled = true;
    // The next turn of the loop: requests that arrived in this one join the group. While each
    // turn brings more (a busy server: its clients' next requests arriving as it answers), the
    // group waits for the next one too, up to GATHER_TURNS turns: its BEGIN, COMMIT and search
    // index segment (D67) are then shared by more members (issue 29, bench/README.md "session
    // 24"). A transaction that came alone still starts on the next turn.
    let seen = this.pending.length;
    let turns = 1;
    const next = (): void => {
      const n = this.pending.length;
      if (n > seen && n < this.opts.maxGroup && turns < GATHER_TURNS) {
        seen = n;
        turns++;
        setImmediate(next);
        return;
      }
      void this.flush();
    };
    setImmediate(next);
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    this.running = true;
    this.inFlight++;
    const jobs = this.pending.splice(0, this.opts.maxGroup);
    const succeeded: Array<{ job: Job; value: unknown; member: number }> = [];
    /** members failed by their folded row at the group's end */
    const failed = new Set<number>();
    let membersDone = false;
    const done = (): void => {
      if (membersDone) return;
      membersDone = true;
      this.running = false;
    };
    try {
      await this.db.transaction().execute(async (trx) => {
        const state = await groupState(this.db, trx);
        const lastly = state.lastly;
        groupEnd.set(trx.getExecutor(), state);
        try {
          for (const [index, job] of jobs.entries()) {
            state.member = index;
            state.taken = false;
            // Issue 29: the savepoint is taken before the member's first statement, not before
            // the member: one whose writes all join the group's batches runs no statement at
            // all (on PostgreSQL, no round trip). Without a hooked connection, at once.
            if (state.lazy) state.arm();
            else await state.take();
            let value: unknown;
            try {
              value = await job.cb(trx);
            } catch (err) {
              state.disarm();
              // Undo this member's writes only (if it ran any); if even that fails, the whole
              // group rolls back.
              if (state.taken) {
                await trx.executeQuery(ROLLBACK_TO);
                state.release(RELEASE);
              }
              // ...and the rows it queued for the group's end (batchAtGroupEnd) with them.
              dropMember(state, index);
              job.reject(err);
              continue;
            }
            state.disarm();
            if (state.taken) state.release(RELEASE);
            succeeded.push({ job, value, member: index });
          }
          // PostgreSQL, no member ran a statement of its own: the group's rows in one statement
          // that commits by itself. Else (or if that statement fails) the folded rows first
          // (they may fail a member), then the rest of the group's end (atGroupEnd,
          // batchAtGroupEnd); a failure there fails the group.
          if (!(await writeInOneStatement(state, trx))) {
            await writeFolds(state, (member, err) => {
              dropMember(state, member);
              failed.add(member);
              jobs[member]?.reject(err);
            });
            for (let fn = lastly.shift(); fn; fn = lastly.shift()) await fn(trx);
          }
        } finally {
          state.disarm();
          groupEnd.delete(trx.getExecutor());
          if (this.opts.overlap) {
            done();
            if (this.pending.length > 0) this.schedule();
          }
        }
      });
      for (const { job, value, member } of succeeded) if (!failed.has(member)) job.resolve(value);
    } catch (err) {
      // Not committed: no member's write is durable, so none may be acknowledged (members that
      // already failed on their own keep their own error: a settled promise ignores this).
      for (const job of jobs) job.reject(err);
    } finally {
      done();
      this.inFlight--;
      if (this.pending.length > 0) this.schedule();
    }
  }
}

type GroupEndWork = (trx: Db) => Promise<void>;
interface Batch {
  rows: Array<{ member: number; row: unknown }>;
  write: (trx: Db, rows: unknown[]) => Promise<void>;
  /** `write` may be gathered into the group's one statement (see `Gatherable`) */
  gather: boolean;
}
interface GroupState {
  /** the work queued by atGroupEnd and batchAtGroupEnd, in the order it was queued */
  lastly: GroupEndWork[];
  /** how much of `lastly` atGroupEnd queued (work that is not a batch's rows) */
  plain: number;
  /** the member running now (members run one after another) */
  member: number;
  /** batchAtGroupEnd's rows, by kind */
  batches: Map<string, Batch>;
  /** foldAtGroupEnd's rows, by kind */
  folds: Map<string, Fold>;
  /** oncePerGroup's values, by key */
  memo: Map<string, unknown>;
  /** SQLite: statements run straight on the connection the group holds (storage/sqlite-direct.ts),
   * the member's savepoint taken first when it is due */
  direct: DirectRun | undefined;
  /** PostgreSQL, while the group's end is gathered into one statement: takes the statements */
  collect: CollectRun | undefined;
  /** the group's connection, when it is hooked (PostgreSQL: its BEGIN may still be due) */
  hooked: HookedConnection | undefined;
  pg: boolean;
  /** the group's connection without the hooks: savepoints and folded rows */
  run: FoldRun;
  /** the member's savepoint can wait for its first statement (the connection is hooked) */
  lazy: boolean;
  /** the running member has run no statement yet (on SQLite: no write): its savepoint is due */
  due: boolean;
  /** the running member has its savepoint */
  taken: boolean;
  /** the running member has a row in a fold (one at most) */
  holds: boolean;
  /** arm the member's savepoint for its first statement */
  arm: () => void;
  /** no savepoint is due (the member has ended) */
  disarm: () => void;
  /** before a statement of the member while its savepoint is due: take it if the statement needs it */
  before: (sql: string) => void | Promise<void>;
  /** take the member's savepoint now and write the row it folded, inside it */
  take: () => void | Promise<void>;
  /**
   * SQLite: close a savepoint whose work is done (kept, or rolled back to). While any savepoint
   * is open SQLite copies every page the transaction then changes into its statement journal —
   * for the group's end, its whole event log, index and count writes, spilled to a temporary
   * file once past 64 KiB (issue 29: a fifth of a send's SQLite time @50, bench/README.md).
   * PostgreSQL: nothing (a round trip; an open savepoint costs it nothing per row).
   */
  release: (sql: string) => void;
}

/** Runs one statement (written with `?`) on the group's connection: SQLite at once, PostgreSQL
 * a promise. */
export type FoldRun = (text: string, params: readonly unknown[]) => unknown;
interface Fold {
  rows: Array<{ member: number; row: unknown }>;
  write: (run: FoldRun, rows: unknown[]) => unknown;
  gather: boolean;
}

/**
 * `gather`: the writer hands exactly one INSERT to its runner (`run`, or rawQuery on the group's
 * handle) before it awaits anything, and runs nothing else — so on PostgreSQL it may be gathered
 * into the group's one statement (`writeInOneStatement`).
 */
export interface Gatherable {
  gather?: boolean;
}

async function groupState(db: Db, trx: Db): Promise<GroupState> {
  const raw = directFor(db);
  const conn = await trx.getExecutor().provideConnection(async (c) => c);
  const hooked = conn instanceof HookedConnection ? conn : undefined;
  const pg = isPostgres(trx);
  const run: FoldRun =
    raw ??
    (async (text, params) => {
      const query = CompiledQuery.raw(pg ? dollars(text) : text, [...params]);
      if (!hooked) return (await trx.executeQuery(query)).rows;
      // inside a hook the executor is busy with the statement that fired it: the connection
      // (the transaction's deferred BEGIN first)
      await hooked.begin();
      return (await hooked.inner.executeQuery(query)).rows;
    });
  const state: GroupState = {
    lastly: [],
    plain: 0,
    collect: undefined,
    hooked,
    pg,
    member: 0,
    batches: new Map(),
    folds: new Map(),
    memo: new Map(),
    direct:
      raw &&
      ((text, params) => {
        if (state.due) void state.before(text); // synchronous on SQLite
        return raw(text, params);
      }),
    run,
    release: (sql) => {
      if (raw) raw(sql, []);
    },
    lazy: hooked !== undefined,
    due: false,
    taken: false,
    holds: false,
    arm: () => {
      state.due = true;
      state.holds = false;
      if (hooked) hooked.beforeStatement = state.before;
    },
    disarm: () => {
      state.due = false;
      if (hooked) hooked.beforeStatement = undefined;
    },
    before: (sql) => {
      // SQLite: a read needs no savepoint before it (a failed read leaves the transaction as
      // it was, and there is nothing of the member's to undo yet), so a member that reads and
      // then folds its row still runs no write of its own (a reply's and a mention's reads) —
      // unless it holds a folded row, which a read of its own must find.
      if (raw && !state.holds && READ.test(sql)) return;
      return state.take();
    },
    take: () => {
      state.disarm();
      state.taken = true;
      const own: Array<{ fold: Fold; row: unknown }> = [];
      if (state.holds)
        for (const fold of state.folds.values()) {
          for (const r of fold.rows) if (r.member === state.member) own.push({ fold, row: r.row });
          fold.rows = fold.rows.filter((r) => r.member !== state.member);
        }
      state.holds = false;
      // SQLite: at once, so no other statement of the member can slip in before the savepoint.
      if (raw) {
        raw(SAVEPOINT.sql, []);
        for (const { fold, row } of own) fold.write(raw, [row]);
        return;
      }
      return (async () => {
        await run(SAVEPOINT.sql, []);
        for (const { fold, row } of own) await fold.write(run, [row]);
      })();
    },
  };
  return state;
}

/** A member's rows leave every batch and fold (it failed, or was rolled back). */
function dropMember(state: GroupState, member: number): void {
  for (const batch of state.batches.values())
    batch.rows = batch.rows.filter((r) => r.member !== member);
  for (const fold of state.folds.values()) fold.rows = fold.rows.filter((r) => r.member !== member);
}

/**
 * The folded rows, one statement per kind inside a savepoint of its own. If it fails, the rows
 * are written one by one to find whose fails: that member fails (`fail`) and the others stand.
 */
async function writeFolds(
  state: GroupState,
  fail: (member: number, err: unknown) => void,
): Promise<void> {
  for (const fold of state.folds.values()) {
    const rows = fold.rows;
    fold.rows = [];
    if (rows.length === 0) continue;
    await state.run(FOLD_SAVEPOINT, []);
    try {
      await fold.write(
        state.run,
        rows.map((r) => r.row),
      );
      state.release(FOLD_RELEASE);
      continue;
    } catch {
      await state.run(FOLD_ROLLBACK_TO, []);
      state.release(FOLD_RELEASE);
    }
    for (const r of rows) {
      await state.run(FOLD_SAVEPOINT, []);
      try {
        await fold.write(state.run, [r.row]);
      } catch (err) {
        await state.run(FOLD_ROLLBACK_TO, []);
        fail(r.member, err);
      }
      state.release(FOLD_RELEASE);
    }
  }
  state.folds.clear();
}

/** A statement of the group's end, gathered: settled once the group's one statement has run. */
interface Part {
  text: string;
  params: readonly unknown[];
  resolve: (rows: unknown[]) => void;
  reject: (err: unknown) => void;
}
type CollectRun = (text: string, params: readonly unknown[]) => Promise<unknown[]>;
/** a raw statement's runner inside a group (`runnerIn`) */
export type GroupRun = (text: string, params: readonly unknown[]) => unknown[] | Promise<unknown[]>;
/** the gathered statement could not be used: its writer's promise rejects with this, unseen */
const GATHER_FAILED = new Error('group end: written statement by statement');
const INSERT = /^\s*insert\s+into\s/i;
const RETURNING = /\breturning\b/i;

/**
 * Issue 29 (PostgreSQL): when no member of the group ran a statement of its own — plain sends,
 * whose rows all wait for the group's end (foldAtGroupEnd, batchAtGroupEnd) — the transaction
 * has not even begun (storage/hooked-driver.ts `lazyBegin`), and the group's end is written as ONE
 * statement that commits by itself: each writer's INSERT becomes a common table expression of
 * it (PostgreSQL runs every data-modifying one to completion, in one snapshot, as one
 * transaction: all or nothing, its rows under one transaction id like any group's). One round
 * trip for the group instead of BEGIN, a savepoint, three inserts and COMMIT.
 *
 * Each writer is called with a runner that only takes its statement (`collect`); a writer must
 * hand over exactly one INSERT before it awaits anything, and at most one of them may return
 * rows (the event log's keys) — it becomes the outer statement. Otherwise, or if the statement
 * fails (a folded row whose channel was deleted meanwhile), nothing was written: the writers are
 * told so (GATHER_FAILED) and false sends the group the usual way, with savepoints, where a
 * failing row fails its own member alone.
 */
async function writeInOneStatement(state: GroupState, trx: Db): Promise<boolean> {
  const hooked = state.hooked;
  if (!state.pg || !hooked?.beginPending() || state.plain > 0) return false;
  for (const w of [...state.folds.values(), ...state.batches.values()])
    if (w.rows.length > 0 && !w.gather) return false;
  const parts: Part[] = [];
  const collect: CollectRun = (text, params) =>
    new Promise<unknown[]>((resolve, reject) => parts.push({ text, params, resolve, reject }));
  const writes: Array<Promise<unknown>> = [];
  let usable = true;
  const gather = (write: () => unknown): void => {
    const before = parts.length;
    try {
      writes.push(Promise.resolve(write()));
    } catch {
      usable = false;
    }
    if (parts.length !== before + 1) usable = false;
  };
  state.collect = collect;
  try {
    // folds hand their statement to the runner they are given, batches through rawQuery on trx
    const writers = [
      ...[...state.folds.values()].map((f) => ({
        rows: f.rows,
        write: (rows: unknown[]) => f.write(collect, rows),
      })),
      ...[...state.batches.values()].map((b) => ({
        rows: b.rows,
        write: (rows: unknown[]) => b.write(trx, rows),
      })),
    ];
    for (const w of writers) if (w.rows.length > 0) gather(() => w.write(w.rows.map((r) => r.row)));
  } finally {
    state.collect = undefined;
  }
  const returning = parts.filter((p) => RETURNING.test(p.text));
  const main = returning[0] ?? parts[parts.length - 1];
  if (!usable || returning.length > 1 || !parts.every((p) => INSERT.test(p.text)))
    return gatherFailed(parts, writes);
  if (!main) return true; // nothing to write
  const ctes = parts.filter((p) => p !== main);
  const text =
    (ctes.length > 0 ? `with ${ctes.map((p, i) => `"g${i}" as (${p.text})`).join(', ')} ` : '') +
    main.text;
  const params = [...ctes.flatMap((p) => p.params), ...main.params];
  let rows: unknown[];
  try {
    rows = (await hooked.inner.executeQuery(CompiledQuery.raw(dollars(text), params))).rows;
  } catch {
    return gatherFailed(parts, writes);
  }
  for (const p of parts) p.resolve(p === main ? rows : []);
  // Committed now. A writer that still threw (the event log's keys not matching its rows, which
  // PostgreSQL's INSERT … RETURNING cannot do) would fail the members although their rows stand,
  // as a COMMIT whose answer is lost does.
  await Promise.all(writes);
  // written: nothing is left for the group's end
  state.folds.clear();
  state.batches.clear();
  state.lastly.length = 0;
  return true;
}

/** The gathered statement was not run: its writers learn it (unseen); the group's end is then
 * written statement by statement (false). */
function gatherFailed(parts: readonly Part[], writes: ReadonlyArray<Promise<unknown>>): false {
  for (const p of parts) p.reject(GATHER_FAILED);
  for (const w of writes) w.catch(() => {});
  return false;
}

/** the running group's state, by its executor (one per transaction) */
const groupEnd = new WeakMap<object, GroupState>();

/**
 * Run `fn` in the transaction of the group `trx` belongs to, once its last member has run and
 * just before its COMMIT — for writes that are cheaper once per group than once per member
 * (issue 26: SQLite's FTS5 writes its pending index data at every SAVEPOINT, so an index row
 * written inside each member's savepoint became one index segment per send). `fn` runs whatever
 * became of the member that queued it: it must check that what it indexes is still there (a
 * member rolled back to its savepoint leaves nothing). False when `trx` is no running group's:
 * the caller does the work itself, now.
 */
export function atGroupEnd(trx: Db, fn: GroupEndWork): boolean {
  const state = groupEnd.get(trx.getExecutor());
  if (!state) return false;
  state.lastly.push(fn);
  state.plain++;
  return true;
}

/** The direct runner of the SQLite group `trx` belongs to (storage/sqlite-direct.ts), if any. */
export function directIn(trx: Db): DirectRun | undefined {
  return groupEnd.get(trx.getExecutor())?.direct;
}

/**
 * How a raw statement (storage/raw-sql.ts) of the group `trx` belongs to runs, when not through
 * Kysely: SQLite's direct runner (storage/sqlite-direct.ts), or PostgreSQL's gathering of the
 * group's end into one statement (`writeInOneStatement`). Undefined: through Kysely.
 */
export function runnerIn(trx: Db): GroupRun | undefined {
  const state = groupEnd.get(trx.getExecutor());
  return state && (state.direct ?? state.collect);
}

/**
 * Issue 29: `row` is written at the group's end, in one statement with the other members' rows
 * of its `kind` (`write` runs it with `run`, on the group's connection), like batchAtGroupEnd —
 * but for a write that CAN fail on one member's input (the message row: its channel may have
 * been deleted since the access check). Then the rows are written one by one and only the member
 * whose row fails fails, with that error; the others stand. So that failing can undo everything
 * the member did, a member folds only while it has run no statement (on SQLite no write:
 * its savepoint not yet taken) and only one row: if it runs a statement afterwards, its savepoint is taken then and
 * the row written in it, before that statement (so the statement may read or reference it).
 * A plain send thus runs no statement of its own. Folded rows are written before every other
 * group-end work (the search index reads them). False when `trx` is no running group's, or the
 * member cannot fold: the caller writes now.
 */
export function foldAtGroupEnd<R>(
  trx: Db,
  kind: string,
  row: R,
  write: (run: FoldRun, rows: R[]) => unknown,
  opts: Gatherable = {},
): boolean {
  const state = groupEnd.get(trx.getExecutor());
  if (!state?.due || state.holds) return false;
  let fold = state.folds.get(kind);
  if (!fold) {
    fold = { rows: [], write: write as Fold['write'], gather: opts.gather === true };
    state.folds.set(kind, fold);
  }
  fold.rows.push({ member: state.member, row });
  state.holds = true;
  return true;
}

/**
 * Issue 29: `row` joins the group's batch of its `kind`, which `write` writes in one multi-row
 * statement once the last member has run (before COMMIT): one round trip per group instead of
 * one per member — on PostgreSQL each statement is a round trip to the server. A member that
 * fails and is rolled back to its savepoint takes its rows out of every batch. Only for writes
 * that no later statement of the group reads or references, and that cannot fail on one
 * member's input (values the server made, no constraint a request could break): a failure of
 * `write` fails the whole group, as a failed COMMIT does. False when `trx` is no running group's:
 * the caller writes now.
 */
export function batchAtGroupEnd<R>(
  trx: Db,
  kind: string,
  row: R,
  write: (trx: Db, rows: R[]) => Promise<void>,
  opts: Gatherable = {},
): boolean {
  const state = groupEnd.get(trx.getExecutor());
  if (!state) return false;
  let batch = state.batches.get(kind);
  if (!batch) {
    const fresh: Batch = { rows: [], write: write as Batch['write'], gather: opts.gather === true };
    state.batches.set(kind, fresh);
    state.lastly.push(async (t) => {
      state.batches.delete(kind);
      const rows = fresh.rows.map((r) => r.row as R);
      if (rows.length > 0) await write(t, rows);
    });
    batch = fresh;
  }
  batch.rows.push({ member: state.member, row });
  return true;
}

const SAVEPOINT = CompiledQuery.raw('savepoint grp');
const ROLLBACK_TO = CompiledQuery.raw('rollback to savepoint grp');
const RELEASE = 'release savepoint grp';
const FOLD_SAVEPOINT = 'savepoint grp_fold';
const FOLD_RELEASE = 'release savepoint grp_fold';
/** a statement that only reads (anything else counts as a write) */
const READ = /^\s*select\s/i;
const FOLD_ROLLBACK_TO = 'rollback to savepoint grp_fold';

interface Job {
  cb: (trx: Db) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * A value made once per group and shared by its members (the first member to ask makes it), or
 * made now outside a group. Issue 29: the derived cache's version, which must be read after a
 * lookup's request began — every member's request began before its group started, so one read
 * at the group's first lookup serves them all (on PostgreSQL a round trip per member less).
 */
export function oncePerGroup<T>(trx: Db, key: string, make: () => T): T {
  const state = groupEnd.get(trx.getExecutor());
  if (!state) return make();
  if (state.memo.has(key)) return state.memo.get(key) as T;
  const value = make();
  state.memo.set(key, value);
  return value;
}
