import { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RateSpec } from '../../src/config/config.js';
import type { Clock } from '../../src/ids/clock.js';
import { MemoryRateLimiter, type RateLimiter } from '../../src/ratelimit/limiter.js';
import { RedisRateLimiter } from '../../src/ratelimit/redis-limiter.js';
import type { Decision } from '../../src/ratelimit/token-bucket.js';
import {
  REDIS_URL,
  dropPrefix,
  redisDescribe,
  redisUrlWithPrefix,
  uniquePrefix,
} from '../helpers/redis.js';

/**
 * ONE suite for every rate-limit store (docs/architecture.md: like Hono's router common.case.test.ts):
 * `storeSuite` takes a factory and is called once per store, below. Time is a fake clock that
 * both stores decide on, so every figure is exact (D25–D27).
 */
class FakeClock implements Clock {
  constructor(public ms = Date.UTC(2026, 10, 22)) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

interface StoreUnderTest {
  limiter: RateLimiter;
  /** a second handle on the same store, as another node would hold (memory: the same one) */
  peer: RateLimiter;
  close(): Promise<void>;
}
type StoreFactory = (clock: Clock) => Promise<StoreUnderTest>;

const GLOBAL: RateSpec = { rate: 5, burst: 10 };
const MESSAGES: RateSpec = { rate: 10, burst: 20 };

function storeSuite(
  name: string,
  open: StoreFactory,
  run: (name: string, fn: () => void) => void = describe,
): void {
  run(`rate-limit store: ${name}`, () => {
    let clock: FakeClock;
    let store: StoreUnderTest;
    let limiter: RateLimiter;
    beforeEach(async () => {
      clock = new FakeClock();
      store = await open(clock);
      limiter = store.limiter;
    });
    afterEach(async () => store.close());

    const burst = async (key: string, n: number, spec = GLOBAL): Promise<Decision[]> => {
      const out: Decision[] = [];
      for (let i = 0; i < n; i++) out.push(await limiter.consume(key, spec));
      return out;
    };

    it('D25 global: 10 in a burst pass, counting down exactly; the 11th is refused for 0.2 s', async () => {
      const ok = await burst('k', 10);
      expect(ok.every((d) => d.allowed)).toBe(true);
      expect(ok.map((d) => d.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
      expect(ok.map((d) => d.resetAfterMs)).toEqual([
        200, 400, 600, 800, 1000, 1200, 1400, 1600, 1800, 2000,
      ]);
      expect(ok.every((d) => d.limit === 10 && d.atMs === clock.ms)).toBe(true);
      expect(await limiter.consume('k', GLOBAL)).toEqual({
        allowed: false,
        limit: 10,
        remaining: 0,
        resetAfterMs: 2000,
        retryAfterMs: 200,
        atMs: clock.ms,
      });
    });

    it('D26: a refused request consumes nothing; waiting retryAfter is enough, and exactly enough', async () => {
      await burst('k', 10);
      const first = await limiter.consume('k', GLOBAL);
      const second = await limiter.consume('k', GLOBAL);
      expect(second).toEqual(first); // refusals leave no trace
      clock.advance(first.retryAfterMs - 100);
      const early = await limiter.consume('k', GLOBAL);
      expect(early.allowed).toBe(false);
      expect(early.retryAfterMs).toBe(100);
      clock.advance(100);
      const next = await limiter.consume('k', GLOBAL);
      expect(next.allowed).toBe(true);
      expect(next.remaining).toBe(0);
      expect((await limiter.consume('k', GLOBAL)).retryAfterMs).toBe(200);
    });

    it('sustained 5/s passes indefinitely (1000 requests, 200 s of fake time, from an empty bucket)', async () => {
      await burst('k', 10);
      let refused = 0;
      for (let i = 0; i < 1000; i++) {
        clock.advance(200);
        if (!(await limiter.consume('k', GLOBAL)).allowed) refused++;
      }
      expect(refused).toBe(0);
    });

    it('10/s against a 5/s bucket: exactly half pass once the burst is spent', async () => {
      await burst('k', 10);
      let allowed = 0;
      for (let i = 0; i < 40; i++) {
        clock.advance(100);
        if ((await limiter.consume('k', GLOBAL)).allowed) allowed++;
      }
      expect(allowed).toBe(20); // 4 s × 5/s
    });

    it('refill stops at burst: after an hour idle, still only 10', async () => {
      await burst('k', 10);
      clock.advance(3_600_000);
      const again = await burst('k', 11);
      expect(again.filter((d) => d.allowed)).toHaveLength(10);
      expect(again[10]?.allowed).toBe(false);
    });

    it('D25 messages: 20 in a burst, then 0.1 s per message', async () => {
      const ok = await burst('m', 20, MESSAGES);
      expect(ok.every((d) => d.allowed && d.limit === 20)).toBe(true);
      expect(ok[19]?.remaining).toBe(0);
      const refused = await limiter.consume('m', MESSAGES);
      expect(refused).toMatchObject({ allowed: false, retryAfterMs: 100, resetAfterMs: 2000 });
    });

    it('keys are independent (one bot at its limit does not slow another)', async () => {
      await burst('global:bot:1', 11);
      const other = await limiter.consume('global:bot:2', GLOBAL);
      expect(other).toMatchObject({ allowed: true, remaining: 9, resetAfterMs: 200 });
    });

    it('fractional figures: 0.5/s, burst 1', async () => {
      const spec = { rate: 0.5, burst: 1 };
      expect((await limiter.consume('f', spec)).allowed).toBe(true);
      expect((await limiter.consume('f', spec)).retryAfterMs).toBe(2000);
      clock.advance(2000);
      expect((await limiter.consume('f', spec)).allowed).toBe(true);
    });

    it('atomic: 60 concurrent decisions from two handles at one instant allow exactly 10', async () => {
      const all = await Promise.all(
        Array.from({ length: 60 }, async (_, i) =>
          (i % 2 ? store.peer : limiter).consume('race', GLOBAL),
        ),
      );
      const allowed = all.filter((d) => d.allowed);
      expect(allowed).toHaveLength(10);
      expect(allowed.map((d) => d.remaining).sort((a, b) => a - b)).toEqual([
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
      ]);
    });
  });
}

storeSuite('memory', async (clock) => {
  const limiter = new MemoryRateLimiter(clock);
  return { limiter, peer: limiter, close: () => limiter.close() };
});

storeSuite(
  'redis',
  async (clock) => {
    const namespace = uniquePrefix();
    const limiter = new RedisRateLimiter(REDIS_URL, { namespace, clock });
    const peer = new RedisRateLimiter(REDIS_URL, { namespace, clock });
    return {
      limiter,
      peer,
      close: async () => {
        await Promise.all([limiter.close(), peer.close()]);
        await dropPrefix(namespace);
      },
    };
  },
  redisDescribe,
);

// What only the Redis store has: Redis TIME as the shared clock, key expiry, key prefixes, and
// decision-for-decision agreement with the in-memory store (one algorithm, two languages).
redisDescribe('redis store specifics', () => {
  let raw: Redis;
  const namespaces: string[] = [];
  const limiters: RateLimiter[] = [];
  const open = (opts: { clock?: Clock; url?: string } = {}): RedisRateLimiter => {
    const namespace = uniquePrefix();
    namespaces.push(namespace);
    const l = new RedisRateLimiter(opts.url ?? REDIS_URL, {
      namespace,
      ...(opts.clock ? { clock: opts.clock } : {}),
    });
    limiters.push(l);
    return l;
  };
  beforeEach(() => {
    raw = new Redis(REDIS_URL);
  });
  afterEach(async () => {
    await Promise.all(limiters.splice(0).map((l) => l.close()));
    for (const ns of namespaces.splice(0)) await dropPrefix(ns);
    await raw.quit();
  });

  it('decides on Redis TIME (D27): atMs is the Redis clock, and a real wait refills', async () => {
    const l = open();
    const spec = { rate: 20, burst: 1 };
    const first = await l.consume('t', spec);
    const [sec, usec] = await raw.time();
    const redisNow = Number(sec) * 1000 + Number(usec) / 1000;
    expect(first.allowed).toBe(true);
    expect(first.atMs).toBeLessThanOrEqual(redisNow);
    expect(redisNow - first.atMs).toBeLessThan(1000);
    const refused = await l.consume('t', spec);
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterMs).toBeGreaterThan(0);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(50);
    await new Promise((r) => setTimeout(r, refused.retryAfterMs + 5));
    expect((await l.consume('t', spec)).allowed).toBe(true);
  });

  it('one round trip per decision: one EVALSHA from the client, the rest runs inside Redis', async () => {
    const clock = new FakeClock();
    const l = open({ clock });
    await l.consume('warm', GLOBAL); // loads the script (EVAL on the first NOSCRIPT)
    const ns = namespaces[0] ?? '';
    const watcher = await new Redis(REDIS_URL).monitor();
    const seen: { cmd: string; source: string }[] = [];
    watcher.on('monitor', (_time: string, args: string[], source: string) => {
      if (args.some((a) => a.startsWith(`${ns}x`)))
        seen.push({ cmd: (args[0] ?? '').toLowerCase(), source });
    });
    try {
      await new Promise((r) => setTimeout(r, 50)); // MONITOR is live once its reply is in
      await l.consume('x', GLOBAL);
      for (let i = 0; i < 100 && !seen.some((s) => s.cmd === 'pexpire'); i++)
        await new Promise((r) => setTimeout(r, 10));
    } finally {
      watcher.disconnect();
    }
    expect(seen.filter((s) => s.source !== 'lua').map((s) => s.cmd)).toEqual(['evalsha']);
    expect(seen.filter((s) => s.source === 'lua').map((s) => s.cmd)).toEqual([
      'hmget',
      'hset',
      'pexpire',
    ]);
    const ttl = await raw.pttl(`${ns}x`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(200); // the key lives until the bucket is full: 1 token at 5/s
  });

  it('a refused decision writes nothing (D26)', async () => {
    const clock = new FakeClock();
    const l = open({ clock });
    for (let i = 0; i < 10; i++) await l.consume('r', GLOBAL);
    const key = `${namespaces[0]}r`;
    const before = await raw.hgetall(key);
    clock.advance(50);
    expect((await l.consume('r', GLOBAL)).allowed).toBe(false);
    expect(await raw.hgetall(key)).toEqual(before);
  });

  it('honours a keyPrefix given in the Redis URL (how test runs and deployments stay apart)', async () => {
    const prefix = uniquePrefix();
    namespaces.push(prefix);
    const l = open({ url: redisUrlWithPrefix(prefix) });
    await l.consume('p', GLOBAL);
    expect(await raw.exists(`${prefix}${namespaces[1]}p`)).toBe(1);
  });

  it('agrees with the memory store decision for decision on an irregular workload', async () => {
    const memClock = new FakeClock();
    const redisClock = new FakeClock();
    const memory = new MemoryRateLimiter(memClock);
    limiters.push(memory);
    const redis = open({ clock: redisClock });
    const spec = { rate: 3.7, burst: 7 };
    let seed = 42;
    const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 400; i++) {
      const step = Math.floor(rnd() * 500);
      memClock.advance(step);
      redisClock.advance(step);
      const key = rnd() < 0.8 ? 'a' : 'b';
      expect(await redis.consume(key, spec)).toEqual(memory.consume(key, spec));
    }
  });
});
