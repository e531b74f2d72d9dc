import { dependencyState, type DependencyName } from '../metrics/metrics.js';
import { isDatabaseUnreachable, isRedisUnavailable } from '../storage/unreachable.js';

/** Where outage lines go: the server's logger once it exists, stderr before. */
export type HealthLog = (fields: Record<string, unknown>, msg: string) => void;

const stderrLog: HealthLog = (fields, msg) => {
  process.stderr.write(`parley: ${msg} ${JSON.stringify(fields)}\n`);
};

const reasonOf = (err: unknown): string => {
  if (typeof err !== 'object' || err === null) return String(err);
  const e = err as { code?: unknown; message?: unknown; errors?: unknown };
  const message =
    typeof e.message === 'string' && e.message !== ''
      ? e.message
      : Array.isArray(e.errors) && e.errors.length > 0
        ? reasonOf(e.errors[0])
        : 'unknown error';
  return typeof e.code === 'string' && !message.includes(e.code)
    ? `${e.code}: ${message}`
    : message;
};

/**
 * D72: one dependency's outages, as this node sees them. Each outage is logged once when it
 * begins and once when it ends (with how long it lasted), and shown in /metrics
 * (`parley_dependency_up`, `parley_dependency_outages_total`) — never a line per failed request
 * or per retry of a background loop.
 */
class Outages {
  private downSince: number | undefined;
  private reason = '';

  constructor(
    private readonly name: DependencyName,
    private readonly log: () => HealthLog,
    private readonly effect: string,
  ) {
    dependencyState(name, true);
  }

  get isDown(): boolean {
    return this.downSince !== undefined;
  }

  /** An outage begins (nothing happens if one is under way). True when it began now. */
  begin(err: unknown): boolean {
    if (this.downSince !== undefined) return false;
    this.downSince = performance.now();
    this.reason = reasonOf(err);
    dependencyState(this.name, false);
    this.log()(
      { dependency: this.name, reason: this.reason },
      `${this.name} unavailable: ${this.effect}`,
    );
    return true;
  }

  /** The dependency answers again. True when an outage ended now. */
  end(): boolean {
    if (this.downSince === undefined) return false;
    const outageS = Math.round((performance.now() - this.downSince) / 100) / 10;
    this.downSince = undefined;
    dependencyState(this.name, true);
    this.log()(
      { dependency: this.name, outageS, reason: this.reason },
      `${this.name} available again after ${outageS} s`,
    );
    return true;
  }
}

/**
 * The database as the pool sees it (storage/db.ts reports to it). A failed connection attempt,
 * or a connection lost under the pool, begins an outage; a successful connection (or /readyz's
 * probe) ends it. A connection opened before the last recovery that fails afterwards is a
 * leftover of the same outage (terminating every backend breaks each idle connection in turn,
 * some only when next used), not a new one: each connection carries the epoch it was opened in.
 */
export class DatabaseHealth {
  private readonly outages: Outages;
  private epoch = 0;

  constructor(log: () => HealthLog) {
    this.outages = new Outages(
      'database',
      log,
      'requests answer 503 with Retry-After until it is back; the pool reconnects by itself',
    );
  }

  get isDown(): boolean {
    return this.outages.isDown;
  }

  /** A connection was opened: returns its epoch. */
  connected(): number {
    this.reachable();
    return this.epoch;
  }

  /** The database answered (a new connection, or a probe). */
  reachable(): void {
    if (this.outages.end()) this.epoch++;
  }

  /** Opening a connection failed. */
  connectFailed(err: unknown): void {
    this.outages.begin(err);
  }

  /** A connection opened in `epoch` failed under the pool (terminated, reset). */
  lost(err: unknown, epoch: number): void {
    if (epoch < this.epoch) return;
    this.outages.begin(err);
  }
}

/**
 * D72: how soon an ioredis client tries again after losing Redis: quickly at first, then once a
 * second (ioredis's default grows to 2 s), so a node sees Redis back within a second of its
 * return. Every long-lived client uses it.
 */
export const redisRetry = (times: number): number => Math.min(times * 100, 1000);

/**
 * D72: the options of every long-lived ioredis client that carries hints (signals, presence,
 * visibility, rate-limit buckets): while the connection is down a command fails at once (no
 * offline queue, no retries per request; a command timeout for one sent just before the
 * connection died) instead of piling up in memory, and ioredis reconnects on its own.
 */
export const FAIL_FAST_REDIS = {
  lazyConnect: true,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  commandTimeout: 1000,
  connectTimeout: 2000,
  retryStrategy: redisRetry,
} as const;

/** What health watches on an ioredis client (kept structural: ioredis loads lazily). */
export interface RedisEvents {
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'close' | 'ready', listener: () => void): unknown;
}

/**
 * Redis as this node's clients see it (D72: a hint, not a dependency). Every long-lived client
 * is watched; Redis is down from the moment one of them loses its connection (or fails to open
 * it) until every one that lost it is back ('ready'). ioredis retries on its own; each retry's
 * error is absorbed here, so an outage makes two log lines, not one per attempt or command.
 */
export class RedisHealth {
  private readonly outages: Outages;
  private readonly failing = new Set<object>();
  private readonly watched = new WeakSet<object>();
  private readonly lastError = new WeakMap<object, Error>();

  constructor(log: () => HealthLog) {
    this.outages = new Outages(
      'redis',
      log,
      'serving without it: rate limits per node, events between nodes by polling the database (within 250 ms), typing and presence stay on their node',
    );
  }

  get isDown(): boolean {
    return this.outages.isDown;
  }

  watch(client: RedisEvents): void {
    if (this.watched.has(client)) return;
    this.watched.add(client);
    client.on('error', (err) => {
      this.lastError.set(client, err);
    });
    client.on('close', () => {
      if (!this.watched.has(client)) return; // closed by us (unwatch first)
      this.failing.add(client);
      this.outages.begin(this.lastError.get(client) ?? new Error('connection closed'));
    });
    client.on('ready', () => {
      if (!this.watched.has(client)) return;
      this.lastError.delete(client);
      this.failing.delete(client);
      if (this.failing.size === 0) this.outages.end();
    });
  }

  /** Before closing a client on purpose (shutdown): its close is not an outage. */
  unwatch(client: object): void {
    this.watched.delete(client);
    this.failing.delete(client);
  }
}

/**
 * D72: how this node's dependencies fare, and the one filter every background loop's error log
 * goes through: an error that belongs to an outage already logged (or about to be, by the pool
 * or a Redis client) is not logged again.
 */
export class Health {
  private log: HealthLog = stderrLog;
  readonly database = new DatabaseHealth(() => this.log);
  /** undefined without PARLEY_REDIS_URL */
  readonly redis: RedisHealth | undefined;

  constructor(o: { redis: boolean }) {
    this.redis = o.redis ? new RedisHealth(() => this.log) : undefined;
  }

  setLog(log: HealthLog): void {
    this.log = log;
  }

  /** True when `err` is an outage's (counted there, logged once), so the caller logs nothing. */
  quiet(err: unknown): boolean {
    return isDatabaseUnreachable(err) || isRedisUnavailable(err);
  }
}
