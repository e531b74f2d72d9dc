import { sql } from 'kysely';
import type { Db } from './db.js';

/**
 * Group commit for the SQLite connection. SQLite has one writer and a COMMIT costs about as much
 * as the writes it seals (every dirty page goes to the WAL: a message with 50 recipients dirties
 * ~50 stream-index pages). Transactions that arrive while the event loop is busy are run one
 * after another inside ONE database transaction, each in its own savepoint, and committed
 * together: under load the commit and the shared pages are paid once per group instead of once
 * per request; when idle a group has one member and starts on the next turn of the loop.
 *
 * Nothing changes for the callers: a transaction's callback sees only its own writes plus those
 * of the group members before it (as if they had committed just before it, which they will);
 * one that throws is rolled back to its savepoint alone and rejects at once; the others resolve
 * only after the group's COMMIT — an answer is never sent for a write that is not durable
 * (D36), and if the COMMIT fails every member of the group fails with it.
 *
 * Not used on PostgreSQL: there a pool runs transactions truly concurrently.
 */
export class GroupCommit {
  private pending: Job[] = [];
  private scheduled = false;
  private running = false;

  constructor(
    private readonly db: Db,
    /** members per group: bounds how long the first waits for the last */
    private readonly maxGroup = 64,
  ) {}

  run<T>(cb: (trx: Db) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ cb, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running) return;
    this.scheduled = true;
    // The next turn of the loop: requests that arrived in this one join the group.
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    this.running = true;
    const jobs = this.pending.splice(0, this.maxGroup);
    const succeeded: Array<{ job: Job; value: unknown }> = [];
    try {
      await this.db.transaction().execute(async (trx) => {
        for (const job of jobs) {
          await sql`savepoint grp`.execute(trx);
          let value: unknown;
          try {
            value = await job.cb(trx);
          } catch (err) {
            // Undo this member's writes only; if even that fails, the whole group rolls back.
            await sql`rollback to grp`.execute(trx);
            await sql`release grp`.execute(trx);
            job.reject(err);
            continue;
          }
          await sql`release grp`.execute(trx);
          succeeded.push({ job, value });
        }
      });
      for (const { job, value } of succeeded) job.resolve(value);
    } catch (err) {
      // Not committed: no member's write is durable, so none may be acknowledged (members that
      // already failed on their own keep their own error: a settled promise ignores this).
      for (const job of jobs) job.reject(err);
    } finally {
      this.running = false;
      if (this.pending.length > 0) this.schedule();
    }
  }
}

interface Job {
  cb: (trx: Db) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}
