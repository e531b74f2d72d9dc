import type { Config, RateSpec } from '../config/config.js';
import type { Health, RedisHealth } from '../health/health.js';
import type { Clock } from '../ids/clock.js';
import { rateDecidedLocally } from '../metrics/metrics.js';
import { MemoryRateLimiter, type RateLimiter } from './limiter.js';
import type { Decision } from './token-bucket.js';

/**
 * D27: one node keeps its buckets in memory; several nodes share them through Redis — and,
 * D72, decide with their own buckets while Redis cannot be reached.
 */
export function createRateLimiter(
  config: Pick<Config, 'redisUrl'>,
  clock: Clock,
  health?: Health,
): RateLimiter {
  if (config.redisUrl === undefined) return new MemoryRateLimiter(clock);
  return new FallbackRateLimiter(
    new LazyRedisRateLimiter(config.redisUrl, health?.redis),
    new MemoryRateLimiter(clock),
  );
}

/**
 * D72 (revises D27 for the outage): Redis carries the shared budget, not the right to serve.
 * A decision Redis cannot make (unreachable, timed out: it fails at once, redis-limiter.ts) is
 * made by this node's own buckets, marked `local` — so during an outage a client spreading its
 * requests over N nodes may get up to N times its budget, and nobody is refused for the outage
 * itself. When Redis answers again the shared buckets decide again.
 */
export class FallbackRateLimiter implements RateLimiter {
  constructor(
    private readonly shared: RateLimiter,
    private readonly local: MemoryRateLimiter,
  ) {}

  async consume(key: string, spec: RateSpec, cost?: number): Promise<Decision> {
    try {
      return await this.shared.consume(key, spec, cost);
    } catch {
      // The outage itself is logged once by health (health/health.ts), not per decision.
      rateDecidedLocally();
      return { ...this.local.consume(key, spec, cost), local: true };
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.shared.close(), this.local.close()]);
  }
}

/**
 * The Redis store, with its module (and ioredis, 45 modules) imported on the first request
 * instead of at start: a single-node server never loads them (issue #6, idle memory).
 * The production build splits dynamically imported modules into chunks of their own, so this
 * import really is deferred there too.
 */
export class LazyRedisRateLimiter implements RateLimiter {
  private store: Promise<RateLimiter> | undefined;

  constructor(
    private readonly url: string,
    private readonly health?: RedisHealth,
  ) {}

  private open(): Promise<RateLimiter> {
    this.store ??= import('./redis-limiter.js').then(
      (m) => new m.RedisRateLimiter(this.url, this.health ? { health: this.health } : {}),
    );
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
