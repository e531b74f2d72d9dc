import { CompiledQuery } from 'kysely';
import type { Db } from './db.js';
import { directFor, type DirectRun } from './sqlite-direct.js';

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

  run<T>(cb: (trx: Db) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ cb, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running || this.inFlight >= (this.opts.maxInFlight ?? 1)) return;
    this.scheduled = true;
    // The next turn of the loop: requests that arrived in this one join the group.
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    if (this.pending.length === 0) return;
    this.running = true;
    this.inFlight++;
    const jobs = this.pending.splice(0, this.opts.maxGroup);
    const succeeded: Array<{ job: Job; value: unknown }> = [];
    let membersDone = false;
    const done = (): void => {
      if (membersDone) return;
      membersDone = true;
      this.running = false;
    };
    try {
      await this.db.transaction().execute(async (trx) => {
        const state: GroupState = {
          lastly: [],
          member: 0,
          batches: new Map(),
          memo: new Map(),
          direct: directFor(this.db),
        };
        const lastly = state.lastly;
        groupEnd.set(trx.getExecutor(), state);
        try {
          for (const [index, job] of jobs.entries()) {
            state.member = index;
            // No RELEASE: the next member's savepoint nests inside this one and ROLLBACK TO
            // names the innermost, so a release would be one more round trip for nothing.
            if (state.direct) state.direct(SAVEPOINT.sql, []);
            else await trx.executeQuery(SAVEPOINT);
            let value: unknown;
            try {
              value = await job.cb(trx);
            } catch (err) {
              // Undo this member's writes only; if even that fails, the whole group rolls back.
              await trx.executeQuery(ROLLBACK_TO);
              // ...and the rows it queued for the group's end (batchAtGroupEnd) with them.
              for (const batch of state.batches.values())
                batch.rows = batch.rows.filter((r) => r.member !== index);
              job.reject(err);
              continue;
            }
            succeeded.push({ job, value });
          }
          // After the last member, before COMMIT (atGroupEnd); a failure here fails the group.
          for (let fn = lastly.shift(); fn; fn = lastly.shift()) await fn(trx);
        } finally {
          groupEnd.delete(trx.getExecutor());
          if (this.opts.overlap) {
            done();
            if (this.pending.length > 0) this.schedule();
          }
        }
      });
      for (const { job, value } of succeeded) job.resolve(value);
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
}
interface GroupState {
  /** the work queued by atGroupEnd and batchAtGroupEnd, in the order it was queued */
  lastly: GroupEndWork[];
  /** the member running now (members run one after another) */
  member: number;
  /** batchAtGroupEnd's rows, by kind */
  batches: Map<string, Batch>;
  /** oncePerGroup's values, by key */
  memo: Map<string, unknown>;
  /** SQLite: statements run straight on the connection the group holds (storage/sqlite-direct.ts) */
  direct: DirectRun | undefined;
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
  return true;
}

/** The direct runner of the SQLite group `trx` belongs to (storage/sqlite-direct.ts), if any. */
export function directIn(trx: Db): DirectRun | undefined {
  return groupEnd.get(trx.getExecutor())?.direct;
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
): boolean {
  const state = groupEnd.get(trx.getExecutor());
  if (!state) return false;
  let batch = state.batches.get(kind);
  if (!batch) {
    const fresh: Batch = { rows: [] };
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
