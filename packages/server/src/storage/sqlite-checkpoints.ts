import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type SQLite from 'better-sqlite3';

/** What IdleCheckpoints reads of the connection's commits (storage/db.ts WriteCounter). */
export interface CommitClock {
  /** when the connection last committed (ms, monotonic) */
  lastCommit: number;
  committedSinceCheckpoint: boolean;
}

/**
 * WAL checkpoints away from requests. SQLite's automatic checkpoint runs inside the COMMIT that
 * crosses the threshold: that request then waits for the copy into the database file and two
 * fsyncs (bench fanout (a): POST p99 8 ms with it, 3 ms without). Here the checkpoint runs when
 * the connection has been quiet for a moment (PASSIVE: it never waits for anyone), and the
 * automatic one stays as a backstop for load that never pauses, at a 40 MiB WAL instead of 4.
 * Durability is unchanged: a committed transaction is in the WAL either way.
 *
 * Issue 29: a database file is checkpointed by a second connection on a worker thread
 * (`WalCheckpointer`), so the copy and its fsyncs no longer hold the event loop: under steady
 * load they cost the loop about 9 µs of every send @10 (bench/README.md, session 17). WAL lets a
 * checkpoint run beside the writer; PASSIVE copies only frames no reader still needs and never
 * blocks the writer. An in-memory database has no WAL and gets no thread.
 */
export class IdleCheckpoints {
  private static readonly QUIET_MS = 50;
  private static readonly BUSY_EVERY_MS = 250;
  private static readonly BUSY_AFTER_MS = 2000;
  private lastQuiet = 0;
  private lastRun = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly thread: WalCheckpointer | undefined;

  constructor(
    private readonly sqlite: SQLite.Database,
    private readonly writes: CommitClock,
    file: string,
  ) {
    sqlite.pragma('wal_autocheckpoint = 10000');
    // The WAL file keeps its largest size unless told otherwise.
    sqlite.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
    this.thread = file === ':memory:' || file === '' ? undefined : new WalCheckpointer(file);
    this.timer = setInterval(() => this.tick(), 100);
    this.timer.unref();
  }

  private tick(): void {
    const w = this.writes;
    const now = performance.now();
    // A quiet moment counts even when no checkpoint can start in it (one still running on the
    // worker, a transaction open here): else a pause seen only then would not end busy mode.
    const quiet = now - w.lastCommit >= IdleCheckpoints.QUIET_MS;
    if (quiet) this.lastQuiet = now;
    // On this thread a checkpoint waits for no transaction of its own connection to end; the
    // worker's connection does not need to.
    if (!this.thread?.ready && this.sqlite.inTransaction) return;
    if (this.thread?.running) return;
    // Under load that has not paused for BUSY_AFTER_MS, a small checkpoint every BUSY_EVERY_MS
    // instead of the automatic one's 40 MiB copy inside some request's COMMIT (bench fanout (b):
    // p99 80 ms). Short bursts (fanout (a)) still wait for their quiet moment.
    if (
      !quiet &&
      (now - this.lastQuiet < IdleCheckpoints.BUSY_AFTER_MS ||
        now - this.lastRun < IdleCheckpoints.BUSY_EVERY_MS)
    )
      return;
    // After a transaction committed; and once a second anyway, for writes made outside explicit
    // transactions (a checkpoint with nothing to copy returns at once).
    if (!w.committedSinceCheckpoint && now - this.lastRun < 1000) return;
    w.committedSinceCheckpoint = false;
    this.lastRun = now;
    const failed = (): void => {
      // Busy or closing: the next quiet moment (or the automatic checkpoint) does it.
      w.committedSinceCheckpoint = true;
    };
    if (this.thread?.ready) {
      this.thread.checkpoint(failed);
      return;
    }
    try {
      this.sqlite.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      failed();
    }
  }

  /** Stops the timer and closes the worker's connection (before the main one closes). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.thread?.close();
  }
}

/**
 * The worker thread's program: its own connection to the file, one PASSIVE checkpoint per
 * message, `true` back when it ran. CommonJS (an `eval` worker); the driver is passed by path so
 * that it resolves from this package wherever the process was started.
 */
const PROGRAM = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.file, { fileMustExist: true });
db.pragma('cache_size = -256');
parentPort.on('message', (m) => {
  if (m === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  let ok = true;
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    ok = false;
  }
  parentPort.postMessage(ok);
});
parentPort.postMessage('ready');
`;

/** A second connection on a worker thread that runs the checkpoints, one at a time. */
class WalCheckpointer {
  /** the worker has opened its connection (until then, and if it fails, the caller checkpoints) */
  ready = false;
  running = false;
  private readonly worker: Worker;
  private onDone: ((ok: boolean) => void) | undefined;
  private readonly exited: Promise<void>;

  constructor(file: string) {
    this.worker = new Worker(PROGRAM, {
      eval: true,
      workerData: { file, driver: createRequire(import.meta.url).resolve('better-sqlite3') },
      // Its heap holds one connection's objects; the defaults would reserve far more.
      resourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 2 },
    });
    this.worker.unref();
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.on('message', (m: unknown) => {
      if (m === 'ready') {
        this.ready = true;
        return;
      }
      this.running = false;
      const done = this.onDone;
      this.onDone = undefined;
      done?.(m === true);
    });
    this.worker.on('error', () => this.fail());
    this.worker.on('exit', () => this.fail());
  }

  private fail(): void {
    this.ready = false;
    this.running = false;
    const done = this.onDone;
    this.onDone = undefined;
    done?.(false);
  }

  checkpoint(failed: () => void): void {
    this.running = true;
    this.onDone = (ok) => {
      if (!ok) failed();
    };
    this.worker.postMessage('run');
  }

  async close(): Promise<void> {
    this.worker.postMessage('close');
    // A worker that never started, or hangs, is stopped; its connection goes with its thread.
    const timer = setTimeout(() => void this.worker.terminate(), 2000);
    await this.exited;
    clearTimeout(timer);
  }
}
