import { TransactionBuilder } from 'kysely';
import type { Database } from '../storage/schema.js';
import type { Db } from '../storage/db.js';
import { GroupCommit } from '../storage/group-commit.js';

/**
 * After-commit callbacks for transactions (docs/architecture.md#habit-3: only what committed is
 * published). Kysely has no commit hook, so the Domain's `db` is wrapped: `transaction().execute`
 * remembers each transaction object while it runs, `afterCommit(trx, fn)` queues `fn` on it, and
 * the queue runs once `execute` has resolved — i.e. after COMMIT. A transaction that throws rolls
 * back and its queue is dropped, so a rolled-back write never wakes anyone.
 */
export class CommitHooks {
  private readonly queues = new WeakMap<object, Array<() => void>>();
  /** work to do inside a transaction once its callback is done, before COMMIT */
  private readonly lastly = new WeakMap<object, Array<(trx: Db) => Promise<void>>>();

  constructor(private readonly onError: (err: unknown) => void) {}

  /**
   * Queue `fn` for after `trx` commits. Outside a transaction the write is already committed, so
   * `fn` runs now. A transaction not started through `wrap` cannot be followed: returns false
   * (the dispatcher's periodic check still finds what it committed).
   */
  afterCommit(trx: Db, fn: () => void): boolean {
    if (!trx.isTransaction) {
      this.run([fn]);
      return true;
    }
    const queue = this.queues.get(trx);
    if (!queue) return false;
    queue.push(fn);
    return true;
  }

  /**
   * Run `fn` inside `trx` after the transaction's own work, just before it commits (a write
   * that must share its fate, queued by code that cannot await: events/outbox.ts `people`).
   * Outside a transaction `fn` runs now, on its own. False when `trx` cannot be followed.
   */
  beforeCommit(trx: Db, fn: (trx: Db) => Promise<void>): boolean {
    if (!trx.isTransaction) {
      fn(trx).catch(this.onError);
      return true;
    }
    const queue = this.lastly.get(trx);
    if (!queue) return false;
    queue.push(fn);
    return true;
  }

  /** Nothing queued (a send in a group commit: its rows go at the group's end): no promise. */
  private finish(trx: Db): void | Promise<void> {
    const queue = this.lastly.get(trx);
    if (queue === undefined || queue.length === 0) return;
    return this.drain(trx, queue);
  }

  private async drain(trx: Db, queue: Array<(trx: Db) => Promise<void>>): Promise<void> {
    // Queued work may queue more (it runs in order until none is left).
    for (let fn = queue.shift(); fn; fn = queue.shift()) await fn(trx);
  }

  /**
   * `group`: run transactions through group commit (storage/group-commit.ts). Members of a group
   * share one database transaction, so each gets its own handle on it — the key of its own
   * after-commit queue, dropped with its savepoint when it fails.
   */
  wrap(db: Db, opts: { group?: ConstructorParameters<typeof GroupCommit>[1] } = {}): Db {
    const group = opts.group ? new GroupCommit(db, opts.group) : undefined;
    const wrapBuilder = (builder: TransactionBuilder<Database>): TransactionBuilder<Database> =>
      new Proxy(builder, {
        get: (target, prop) => {
          if (prop === 'execute')
            return <T>(cb: (trx: Db) => Promise<T>): Promise<T> => {
              const queue: Array<() => void> = [];
              // In a group the queue runs as the group resolves this member: the promise is the
              // group's own, no async wrapper around it (issue 29).
              if (group)
                return group.run(
                  (shared) => this.inside(bound(shared), cb, queue),
                  () => this.run(queue),
                );
              return this.alone(target, cb, queue);
            };
          const value: unknown = Reflect.get(target, prop, target);
          if (typeof value !== 'function') return value;
          // setAccessMode / setIsolationLevel return new builders: keep them wrapped.
          return (...args: unknown[]) => {
            const out: unknown = (value as (...a: unknown[]) => unknown).apply(target, args);
            return out instanceof TransactionBuilder
              ? wrapBuilder(out as TransactionBuilder<Database>)
              : out;
          };
        },
      });
    return new Proxy(db, {
      get: (target, prop) => {
        if (prop === 'transaction') return () => wrapBuilder(target.transaction());
        return forward(target, prop);
      },
    });
  }

  /** A transaction of its own (no group commit): the queue runs once it has committed. */
  private async alone<T>(
    builder: TransactionBuilder<Database>,
    cb: (trx: Db) => Promise<T>,
    queue: Array<() => void>,
  ): Promise<T> {
    const result = await builder.execute((trx) => this.inside(trx, cb, queue));
    this.run(queue);
    return result;
  }

  /** `cb` on its handle `trx`, its after-commit `queue` kept; the work queued for before COMMIT
   * runs once `cb` is done. */
  private async inside<T>(
    trx: Db,
    cb: (trx: Db) => Promise<T>,
    queue: Array<() => void>,
  ): Promise<T> {
    this.queues.set(trx, queue);
    this.lastly.set(trx, []);
    const out = await cb(trx);
    const finished = this.finish(trx);
    if (finished) await finished;
    return out;
  }

  private run(queue: ReadonlyArray<() => void>): void {
    for (const fn of queue) {
      try {
        fn();
      } catch (err) {
        this.onError(err);
      }
    }
  }
}

/**
 * Kysely keeps its state in #private fields: methods must run on the real instance. Bound once
 * per instance and method (issue 29: a send asks its transaction's handle for `getExecutor` five
 * times and `isTransaction` twice; a bind each was garbage each time).
 */
function forward(target: Db, prop: string | symbol): unknown {
  const value: unknown = Reflect.get(target, prop, target);
  if (typeof value !== 'function') return value;
  let methods = boundMethods.get(target);
  if (methods === undefined) boundMethods.set(target, (methods = new Map()));
  let fn = methods.get(prop);
  if (fn === undefined || fn.of !== value) {
    fn = { of: value, bound: (value as () => unknown).bind(target) };
    methods.set(prop, fn);
  }
  return fn.bound;
}
const boundMethods = new WeakMap<object, Map<string | symbol, { of: unknown; bound: unknown }>>();

/** A distinct handle on the same transaction (an identity for its after-commit queue). */
const bound = (trx: Db): Db => new Proxy(trx, { get: forward });
