import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FallbackRateLimiter } from '../../src/ratelimit/open.js';
import { MemoryRateLimiter } from '../../src/ratelimit/limiter.js';
import {
  createHarness,
  dbDescribe,
  expectStatus,
  makeBot,
  makeWorld,
  type Harness,
  type Reply,
  type World,
} from '../helpers/harness.js';
import { dropPrefix, redisDescribe, redisUrlWithPrefix, uniquePrefix } from '../helpers/redis.js';

// Issue 3, acceptance 1 once more on the REAL clock, a few seconds long, with each store the
// server can be given (D27): memory, and Redis (PARLEY_REDIS_URL; decided on Redis TIME).
const DEFAULT_LIMITS = { PARLEY_RATE_GLOBAL: '5/10', PARLEY_RATE_MESSAGES: '10/20' };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function realClockSuite(
  store: string,
  env: () => Record<string, string>,
  expected: new (...args: never[]) => unknown,
  cleanup: () => Promise<void> = async () => {},
  run: (name: string, fn: () => void) => void = describe,
): void {
  run(`rate limits on the real clock, ${store} store`, () => {
    let h: Harness;
    let w: World;
    beforeAll(async () => {
      h = await createHarness({ env: { ...DEFAULT_LIMITS, ...env() } });
      w = await makeWorld(h);
    });
    afterAll(async () => {
      await h.close();
      await cleanup();
    });

    it('uses the configured store', () => {
      expect(h.services.limiter).toBeInstanceOf(expected);
    });

    it('a burst of 11: ten pass, one 429 (retryAfter ≤ 0.2 s, Retry-After 1); after retryAfter the next passes', async () => {
      const bot = h.as(w.bot.token);
      const all = await Promise.all(Array.from({ length: 11 }, () => bot.get('/bot/me')));
      expect(all.map((r) => r.status).sort()).toEqual([...Array(10).fill(200), 429]);
      const refused = all.find((r) => r.status === 429) as Reply;
      const receivedAt = performance.now();
      const retryAfter: number = refused.body.error.retryAfter;
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(0.2);
      expect(refused.headers['retry-after']).toBe('1');
      // D26: Reset is Unix epoch seconds, Reset-After the same instant as a delay
      const reset = Number(refused.headers['x-ratelimit-reset']);
      const resetAfter = Number(refused.headers['x-ratelimit-reset-after']);
      expect(Math.abs(reset - (Date.now() / 1000 + resetAfter))).toBeLessThan(1);
      while (performance.now() - receivedAt < retryAfter * 1000) await sleep(5);
      await expectStatus(await bot.get('/bot/me'), 200);
    });

    it('sustained 5/s for 3 s: all 16 pass, far more than the burst of 10', async () => {
      const other = await makeBot(h, w.owner.id, 'steady');
      const bot = h.as(other.token);
      const start = performance.now();
      const statuses: number[] = [];
      let last: Reply | undefined;
      for (let i = 0; i <= 15; i++) {
        const due = start + i * 200;
        while (performance.now() < due) await sleep(Math.max(1, due - performance.now()));
        last = await bot.get('/bot/me');
        statuses.push(last.status);
      }
      expect(statuses).toEqual(Array(16).fill(200));
      // the refill kept pace: 16 taken, ~15 refilled
      expect(Number(last?.headers['x-ratelimit-remaining'])).toBeGreaterThanOrEqual(7);
    });
  });
}

dbDescribe('acceptance 1, real clock', () => {
  realClockSuite('memory', () => ({}), MemoryRateLimiter);

  const prefix = uniquePrefix();
  realClockSuite(
    'redis',
    () => ({ PARLEY_REDIS_URL: redisUrlWithPrefix(prefix) }),
    // The Redis store (loaded on first use: ioredis stays out of a single-node server), with
    // the node's own buckets behind it for when Redis cannot be reached (D72).
    FallbackRateLimiter,
    () => dropPrefix(prefix),
    redisDescribe,
  );
});
