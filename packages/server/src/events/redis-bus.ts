import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { loadIoredis } from '../lazy-modules.js';
import { FAIL_FAST_REDIS, redisRetry, type RedisHealth } from '../health/health.js';
import { isRedisUnavailable } from '../storage/unreachable.js';
import { isSignal, type Signal, type SignalBus } from './bus.js';

const CHANNEL = 'parley:signals';

/**
 * D72: a signal is a hint, so nothing waits for Redis: while the connection is down a publish
 * fails at once (no offline queue, no retries per request, a command timeout for one sent just
 * before the connection died) instead of piling up in memory, and ioredis reconnects on its own.
 * The subscriber subscribes again itself each time it is back (autoResubscribe off: the first
 * subscription is made the same way, also when Redis was down at start).
 */
const PUBLISHER = FAIL_FAST_REDIS;
const SUBSCRIBER = {
  lazyConnect: true,
  enableOfflineQueue: false,
  maxRetriesPerRequest: 0,
  autoResubscribe: false,
  connectTimeout: 2000,
  retryStrategy: redisRetry,
} as const;

/**
 * Several nodes: signals over Redis pub/sub. A bot connected to node B hears about an event
 * committed on node A within a Redis round trip. Each process tags its messages and ignores its
 * own (it already acted on them directly). The publishing connection opens on first use, so
 * the CLI only connects when it has something to say (e.g. a token reset).
 *
 * D72: every signal is a hint. What they carry is also found without them — committed events
 * (bots' and people's) in the event log each node reads on a timer, claims, token resets and
 * ended sessions in the database checks (bus.ts) — so a signal lost while Redis is down costs
 * latency, never an event. Only ephemeral people's events (typing, presence) are lost with it.
 */
export class RedisBus implements SignalBus {
  private readonly origin = randomBytes(8).toString('hex');
  /** the publishing client with the channel name, created on first use (lazy-modules.ts) */
  private pub: Promise<{ client: Redis; channel: string; ready: Promise<void> }> | undefined;
  private sub: Redis | undefined;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly onError: (err: unknown) => void,
    private readonly health?: RedisHealth,
  ) {}

  private async client(options: typeof PUBLISHER | typeof SUBSCRIBER): Promise<Redis> {
    const { Redis } = await loadIoredis();
    const r = new Redis(this.url, { ...options });
    // Failed commands reject on their own; the outage is logged once (health/health.ts). This
    // listener keeps ioredis from throwing or printing every reconnection attempt.
    r.on('error', () => {});
    this.health?.watch(r);
    return r;
  }

  /**
   * ioredis's `keyPrefix` (it may come in the URL's query) does not apply to pub/sub channels;
   * it is applied here by hand so deployments (and test runs) sharing a Redis stay apart.
   * `ready` settles once the first connection attempt has (connected or failed): until then a
   * publish waits for it rather than fail for a connection that is just being opened.
   */
  private publisher(): Promise<{ client: Redis; channel: string; ready: Promise<void> }> {
    this.pub ??= this.client(PUBLISHER).then((client) => {
      const ready = new Promise<void>((resolve) => {
        client.once('ready', () => resolve());
        client.once('close', () => resolve());
      });
      client.connect().catch(() => {});
      return { client, channel: (client.options.keyPrefix ?? '') + CHANNEL, ready };
    });
    return this.pub;
  }

  publish(signal: Signal): void {
    if (this.closed) return;
    // Signals keep their order: every publish chains on the same promises, and ioredis sends
    // commands in the order they are given.
    this.publisher()
      .then(async ({ client, channel, ready }) => {
        if (client.status !== 'ready') await ready;
        await client.publish(channel, JSON.stringify({ o: this.origin, s: signal }));
      })
      .catch((err: unknown) => {
        // Down: the outage is logged once (health/health.ts); the signal's news is found later.
        if (!isRedisUnavailable(err)) this.onError(err);
      });
  }

  async subscribe(handler: (signal: Signal) => void): Promise<void> {
    const { channel } = await this.publisher();
    const sub = await this.client(SUBSCRIBER);
    // close() may have run while ioredis was loading: do not leave a connection behind it.
    if (this.closed) {
      this.health?.unwatch(sub);
      sub.disconnect();
      return;
    }
    this.sub = sub;
    sub.on('message', (_channel: string, text: string) => {
      let msg: unknown;
      try {
        msg = JSON.parse(text);
      } catch {
        return;
      }
      const m = msg as { o?: unknown; s?: unknown };
      if (m.o === this.origin || !isSignal(m.s)) return;
      handler(m.s);
    });
    let first: () => void = () => {};
    const settled = new Promise<void>((resolve) => {
      first = resolve;
    });
    sub.once('close', () => first());
    sub.on('ready', () => {
      sub.subscribe(channel).then(
        () => first(),
        (err: unknown) => {
          // The connection went again before the subscription was made: the next 'ready' retries.
          if (!isRedisUnavailable(err)) this.onError(err);
        },
      );
    });
    sub.connect().catch(() => {});
    // Start-up waits for the first attempt (subscribed, or Redis down); ioredis retries after.
    await settled;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pub = this.pub ? (await this.pub).client : undefined;
    for (const r of [pub, this.sub]) {
      if (!r) continue;
      this.health?.unwatch(r);
      if (r.status === 'ready') await r.quit().catch(() => r.disconnect());
      else r.disconnect();
    }
  }
}
