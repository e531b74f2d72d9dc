import type { Config, RateSpec } from '../config/config.js';
import type { Clock } from '../ids/clock.js';
import { MemoryRateLimiter, type RateLimiter } from './limiter.js';
import type { Decision } from './token-bucket.js';

/** D27: one node keeps its buckets in memory; several nodes share them through Redis. */
export function createRateLimiter(config: Pick<Config, 'redisUrl'>, clock: Clock): RateLimiter {
  return config.redisUrl === undefined
    ? new MemoryRateLimiter(clock)
    : new LazyRedisRateLimiter(config.redisUrl);
}

/**
 * The Redis store, with its module (and ioredis, 45 modules) imported on the first request
 * instead of at start: a single-node server never loads them (issue #6, idle memory).
 * The production build splits dynamically imported modules into chunks of their own, so this
 * import really is deferred there too.
 */
export class LazyRedisRateLimiter implements RateLimiter {
  private store: Promise<RateLimiter> | undefined;

  constructor(private readonly url: string) {}

  private open(): Promise<RateLimiter> {
    this.store ??= import('./redis-limiter.js').then((m) => new m.RedisRateLimiter(this.url));
    return this.store;
  }

  async consume(key: string, spec: RateSpec, cost?: number): Promise<Decision> {
    return (await this.open()).consume(key, spec, cost);
  }

  async close(): Promise<void> {
    // Never used: nothing was loaded or connected, so there is nothing to close.
    if (this.store) await (await this.store).close();
  }
}
