import { afterAll, beforeAll, expect, it } from 'vitest';
import { dbDescribe } from '../helpers/harness.js';
import { call } from '../helpers/process.js';
import { startLiveServer, type Attempt, type LiveServer } from '../helpers/live-server.js';

// D54/D25 (issue #10, finding 5): failed gateway authentication was not rate limited (40 bad
// upgrades → 40 × 401, where REST gives 10 × 401 then 429). A failed upgrade now draws from the
// client address's bucket with the `global` figures — the same bucket as REST 401s — and past
// it the refusal is 429 RATE_LIMIT_EXCEEDED in the D5 form with Retry-After.

dbDescribe('failed gateway authentication is rate limited like REST (D54, D25)', () => {
  let live: LiveServer;
  beforeAll(async () => {
    // burst 10 as `global`; a slow refill keeps the counts exact however long the attempts take
    live = await startLiveServer({ env: { PARLEY_RATE_GLOBAL: '0.01/10' } });
  });
  afterAll(async () => live.close());

  const refused = (a: Attempt) => {
    if (a.kind !== 'refused') throw new Error('expected a refusal');
    return a;
  };

  it('40 parallel bad upgrades: 10 × 401, then 429 with Retry-After; REST 401s share the bucket', async () => {
    const tries = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        live.attempt(i % 2 === 0 ? undefined : 'not-a-token').then(refused),
      ),
    );
    const by = (s: number) => tries.filter((t) => t.status === s);
    expect(by(401).length).toBe(10);
    expect(by(429).length).toBe(30);
    for (const t of by(401)) {
      expect(t.body.error.code).toBe('UNAUTHORIZED');
      expect(t.headers['x-ratelimit-bucket']).toBe('global');
      expect(t.headers['x-ratelimit-limit']).toBe('10');
    }
    for (const t of by(429)) {
      expect(Object.keys(t.body)).toEqual(['error']);
      expect(t.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
      expect(t.body.error.retryAfter).toBeGreaterThan(0);
      expect(Number(t.headers['retry-after'])).toBe(Math.ceil(t.body.error.retryAfter));
      expect(t.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
    // one bucket per address, whichever transport failed: REST is refused too now
    const origin = live.gatewayUrl.replace(/^ws/, 'http').replace(/\/gateway$/, '');
    const rest = await call(origin, 'GET', '/api/v1/bot/me', 'not-a-token');
    expect(rest.status).toBe(429);
  });
});
