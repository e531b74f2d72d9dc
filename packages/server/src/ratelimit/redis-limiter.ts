import { Redis } from 'ioredis';
import type { RateSpec } from '../config/config.js';
import type { Clock } from '../ids/clock.js';
import type { RateLimiter } from './limiter.js';
import { decide, type Decision } from './token-bucket.js';
import { FAIL_FAST_REDIS, type RedisHealth } from '../health/health.js';

/**
 * D27: the same token bucket as token-bucket.ts (`refill` + the comparison in `decide`), written
 * in Lua so that read, decide and write happen atomically inside Redis in ONE round trip, for
 * every node sharing the Redis. Redis TIME is the clock, so nodes whose clocks disagree still
 * refill one bucket at one rate. A refused request writes nothing (D26).
 *
 * KEYS[1] the bucket. ARGV: rate (tokens/s), burst, cost, now in ms ('' = Redis TIME).
 * Returns {allowed, tokens after refill and before taking, now}; numbers as '%.17g' strings,
 * because Redis truncates Lua numbers to integers and 17 significant digits round-trip a double.
 */
export const TAKE_LUA = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local tokens = burst
local s = redis.call('HMGET', KEYS[1], 't', 'at')
if s[1] and s[2] then
  local elapsed = math.max(0, now - tonumber(s[2]))
  tokens = math.min(burst, tonumber(s[1]) + (elapsed * rate) / 1000)
end
local allowed = 0
if tokens >= cost then
  allowed = 1
  local left = tokens - cost
  redis.call('HSET', KEYS[1], 't', string.format('%.17g', left), 'at', string.format('%.17g', now))
  -- the key lives until the bucket would be full again: an absent key IS a full bucket
  redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil(((burst - left) * 1000) / rate)))
end
return {allowed, string.format('%.17g', tokens), string.format('%.17g', now)}
`;

type TakeReply = [number, string, string];
type WithTake = Redis & {
  parleyTake(
    key: string,
    rate: string,
    burst: string,
    cost: string,
    now: string,
  ): Promise<TakeReply>;
};

export interface RedisLimiterOptions {
  /** prepended to every bucket key (after any `keyPrefix` given in the URL's query) */
  namespace?: string;
  /**
   * Tests only: decide on this clock instead of Redis TIME, so the shared store suite can run
   * against Redis with a fake clock. Production leaves it unset (D27: one clock for all nodes).
   */
  clock?: Clock;
  /** D72: told when the connection is lost and back */
  health?: RedisHealth;
}

/**
 * Several nodes: buckets in Redis. The connection is opened on first use (the CLI builds the
 * services without ever deciding). When Redis is unreachable a decision fails AT ONCE — no
 * offline queue, no retries, a command timeout — so the caller can decide without it (D72:
 * ratelimit/open.ts falls back to the node's own buckets) and no request waits for Redis.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: WithTake;
  private readonly namespace: string;
  private readonly clock: Clock | undefined;
  private readonly health: RedisHealth | undefined;
  /** settles when the first connection attempt has (ready, or failed) */
  private started: Promise<void> | undefined;

  constructor(url: string, opts: RedisLimiterOptions = {}) {
    this.namespace = opts.namespace ?? 'parley:rl:';
    this.clock = opts.clock;
    this.health = opts.health;
    // `new Redis(url)` reads options from the URL's query too, e.g. `?keyPrefix=staging:`.
    // D72: while the connection is down a decision fails at once and the node decides alone;
    // one sent just before the connection died waits at most FAIL_FAST_REDIS's command timeout.
    const redis = new Redis(url, FAIL_FAST_REDIS);
    // Failed commands reject on their own; the outage is logged once (health/health.ts). This
    // listener keeps ioredis from throwing or printing every reconnection attempt.
    redis.on('error', () => {});
    this.health?.watch(redis);
    redis.defineCommand('parleyTake', { numberOfKeys: 1, lua: TAKE_LUA });
    this.redis = redis as WithTake;
  }

  /** The first decision waits for the first connection attempt; later ones never wait. */
  private start(): Promise<void> {
    this.started ??= new Promise<void>((resolve) => {
      this.redis.once('ready', () => resolve());
      this.redis.once('close', () => resolve());
      this.redis.connect().catch(() => {});
    });
    return this.started;
  }

  async consume(key: string, spec: RateSpec, cost = 1): Promise<Decision> {
    if (this.redis.status !== 'ready') await this.start();
    const now = this.clock ? String(this.clock.now()) : '';
    const [, tokens, at] = await this.redis.parleyTake(
      this.namespace + key,
      String(spec.rate),
      String(spec.burst),
      String(cost),
      now,
    );
    return decide(Number(tokens), spec, Number(at), cost).decision;
  }

  async close(): Promise<void> {
    this.health?.unwatch(this.redis);
    if (this.redis.status === 'ready') await this.redis.quit();
    else this.redis.disconnect();
  }
}
