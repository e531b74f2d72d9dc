import type { Config } from '../config/config.js';
import type { EventRecorder, PeopleDispatch, PeopleRecorder } from '../domain/events/recorder.js';
import type { DerivedCache } from '../domain/derived-cache.js';
import type { Health } from '../health/health.js';
import type { Clock } from '../ids/clock.js';
import type { SnowflakeGenerator } from '../ids/snowflake.js';
import type { Db, Dialect } from '../storage/db.js';
import { isAudience, noBus, type Signal, type SignalBus } from './bus.js';
import { CommitHooks } from './commit-hooks.js';
import { Feed } from './feed.js';
import { LocalRows } from './local-rows.js';
import type { LogRow } from './log.js';
import { OutboxRecorder } from './outbox.js';
import { pruneEvents } from './pruner.js';
import { RedisBus } from './redis-bus.js';
import { enqueueDeliveries } from '../webhooks/webhooks.service.js';

/** How often each node looks at the database on its own (safety net for lost signals), ms. */
export const DB_CHECK_MS = 250;
const PRUNE_EVERY_MS = 60_000;
/**
 * Group commit (storage/group-commit.ts) on both dialects (issue 29). SQLite: one connection
 * serializes all writes anyway. PostgreSQL: a group's members share one BEGIN/COMMIT, and a
 * second group runs while the first commits; a group stays under the 64 subtransactions a
 * backend tracks in shared memory (each member's savepoint is one; beyond 64 every snapshot in
 * the cluster must consult pg_subtrans), and two groups leave the rest of the pool of 10 to
 * reads, the feed and the webhook worker.
 */
const GROUP_COMMIT = {
  sqlite: { maxGroup: 64 },
  postgres: { maxGroup: 32, overlap: true, maxInFlight: 2 },
} as const;

/**
 * The events area as the rest of the server sees it: the recorder the domain writes through,
 * the feed gateway connections subscribe to, and the signals between nodes. Opened with the services
 * (the CLI records events too); `start()` adds what only a serving node does (listening to other
 * nodes, the periodic checks, pruning).
 */
export interface EventsRuntime {
  /** the database handle whose transactions tell the outbox when they commit */
  readonly db: Db;
  readonly recorder: EventRecorder & PeopleRecorder;
  readonly feed: Feed;
  /** claim / token signals, from this process and from other nodes */
  onSignal(listener: (signal: Signal) => void): () => void;
  /** tell this process's listeners and every other node */
  publish(signal: Signal): void;
  setErrorLog(log: (err: unknown) => void): void;
  /** called after a transaction that enqueued webhook deliveries commits (wakes the worker) */
  onWebhooks(listener: () => void): () => void;
  /**
   * D51: people's events, committed on this node or another (Redis), in commit order per node:
   * the people's gateway fans them out to its own connections.
   */
  onPeople(listener: (e: PeopleDispatch) => void): () => void;
  start(): Promise<void>;
  close(): Promise<void>;
}

export function openEvents(o: {
  db: Db;
  config: Config;
  ids: SnowflakeGenerator;
  clock: Clock;
  cache: DerivedCache;
  dialect: Dialect;
  /** D72: errors of a database or Redis outage are the outage's (logged once there) */
  health?: Health;
}): EventsRuntime {
  let log = (err: unknown): void => {
    process.stderr.write(`parley events: ${err instanceof Error ? err.stack : String(err)}\n`);
  };
  // D72: the feed, the pruner and the signals keep going through an outage, retrying on their
  // timers; their failures meanwhile belong to the outage, not to the log line by line.
  const onError = (err: unknown): void => {
    if (!o.health?.quiet(err)) log(err);
  };
  const hooks = new CommitHooks(onError);
  const db = hooks.wrap(o.db, { group: GROUP_COMMIT[o.dialect] });
  const bus: SignalBus = o.config.redisUrl
    ? new RedisBus(o.config.redisUrl, onError, o.health?.redis)
    : noBus;
  // D72: people's events are read from the log like bots' (Redis only wakes the reader up), so a
  // Redis outage delays them by at most a poll and loses none. This node's own rows went to its
  // people at commit already (`people` below): the reader skips them.
  const local = new LocalRows((r) => {
    const audience = parseAudience(r.audience);
    if (audience) tellPeople({ type: r.type, data: r.data, audience });
  });
  const feed = new Feed(db, o.dialect, {
    pollMs: DB_CHECK_MS,
    batch: 1024,
    onError,
    people: {
      row: (r) => local.read(r),
      reached: (end) => local.below(end),
    },
  });
  const listeners = new Set<(s: Signal) => void>();
  const tellLocal = (s: Signal): void => {
    for (const l of listeners) {
      try {
        l(s);
      } catch (err) {
        onError(err);
      }
    }
  };
  const publish = (s: Signal): void => {
    tellLocal(s);
    bus.publish(s);
  };
  // Other nodes are told once per turn of the loop that the log grew, however many commits.
  let logSignalQueued = false;
  const committed = (rows: LogRow[]): void => {
    feed.committed(rows);
    if (logSignalQueued) return;
    logSignalQueued = true;
    setImmediate(() => {
      logSignalQueued = false;
      bus.publish({ k: 'log' });
    });
  };
  const webhookListeners = new Set<() => void>();
  const peopleListeners = new Set<(e: PeopleDispatch) => void>();
  const tellPeople = (e: PeopleDispatch): void => {
    for (const l of peopleListeners) {
      try {
        l(e);
      } catch (err) {
        onError(err);
      }
    }
  };
  const recorder = new OutboxRecorder({
    ids: o.ids,
    clock: o.clock,
    cache: o.cache,
    hooks,
    committed,
    logged: (r) => local.add(r),
    logging: () => local.appending(),
    tokenReset: (botId) => publish({ k: 'token', botId }),
    userSessions: (userId) => publish({ k: 'user', userId }),
    people: tellPeople,
    // Typing and presence are never stored: Redis is their only way to other nodes (while it is
    // down they stay on their node, D72).
    ephemeral: (e) => {
      tellPeople(e);
      bus.publish({ k: 'people', e });
    },
    // D63: and to the bots that subscribed to typing or presence, through the event log
    db,
    onError,
    webhooks: {
      enqueue: (trx, type, body, botIds, version) =>
        enqueueDeliveries(trx, o, type, body, botIds, version),
      committed: () => {
        for (const l of webhookListeners) l();
      },
    },
  });

  let pruner: NodeJS.Timeout | undefined;
  let started = false;
  const prune = (): void => {
    pruneEvents(db, o.clock.now(), o.config.resumeWindowS * 1000).catch(onError);
  };

  return {
    db,
    recorder,
    feed,
    onSignal: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    publish,
    setErrorLog: (l) => {
      log = l;
    },
    onWebhooks: (l) => {
      webhookListeners.add(l);
      return () => webhookListeners.delete(l);
    },
    onPeople: (l) => {
      peopleListeners.add(l);
      return () => peopleListeners.delete(l);
    },
    async start() {
      if (started) return;
      started = true;
      await feed.init();
      feed.start();
      prune();
      pruner = setInterval(prune, PRUNE_EVERY_MS);
      pruner.unref();
      try {
        await bus.subscribe((s) => {
          if (s.k === 'log') feed.wake();
          else if (s.k === 'people') tellPeople(s.e);
          else tellLocal(s);
        });
      } catch (err) {
        // Redis down at start: the periodic database checks keep every node correct meanwhile.
        onError(err);
      }
    },
    async close() {
      clearInterval(pruner);
      feed.stop();
      await bus.close();
    },
  };
}

function parseAudience(text: string | null): PeopleDispatch['audience'] | undefined {
  if (text === null) return undefined;
  try {
    const a: unknown = JSON.parse(text);
    return isAudience(a) ? a : undefined;
  } catch {
    return undefined;
  }
}
