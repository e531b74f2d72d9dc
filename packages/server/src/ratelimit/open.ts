import type { Config } from '../config/config.js';
import type { Clock } from '../ids/clock.js';
import { MemoryRateLimiter, type RateLimiter } from './limiter.js';
import { RedisRateLimiter } from './redis-limiter.js';

/** D27: one node keeps its buckets in memory; several nodes share them through Redis. */
export function createRateLimiter(config: Pick<Config, 'redisUrl'>, clock: Clock): RateLimiter {
  return config.redisUrl === undefined
    ? new MemoryRateLimiter(clock)
    : new RedisRateLimiter(config.redisUrl);
}
