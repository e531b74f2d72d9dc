import { afterAll, beforeAll, expect, it } from 'vitest';
import { parsePrometheus, sample } from '../helpers/prometheus.js';
import { createHarness, dbDescribe, makeBot, makeUser, type Harness } from '../helpers/harness.js';

// D27 with its shared store gone. D72 revises what this suite asserted before (a 503 for every
// limited request): Redis is a hint, not a dependency — each node decides with its own buckets
// while Redis cannot be reached, so limits still hold per node, nobody is refused for the outage,
// and no request waits for Redis. /readyz stays 200 and says Redis is degraded (revises D53).
dbDescribe('rate limits when Redis is unreachable', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({
      // Nothing listens on port 1.
      env: {
        PARLEY_RATE_GLOBAL: '5/10',
        PARLEY_RATE_MESSAGES: '10/20',
        PARLEY_REDIS_URL: 'redis://127.0.0.1:1',
      },
    });
  });
  afterAll(async () => h.close());

  it("decides with the node's own buckets: the burst passes, the next request is a 429", async () => {
    const owner = await makeUser(h, 'o');
    const bot = await makeBot(h, owner.id);
    const started = performance.now();
    const first = await h.as(bot.token).get('/bot/me');
    expect(first.status).toBe(200);
    expect(first.headers['x-ratelimit-limit']).toBe('10');
    expect(first.headers['x-ratelimit-remaining']).toBe('9');
    const rest = await Promise.all(
      Array.from({ length: 10 }, () => h.as(bot.token).get('/bot/me')),
    );
    expect(rest.map((r) => r.status).sort()).toEqual([...Array(9).fill(200), 429]);
    const refused = rest.find((r) => r.status === 429);
    expect(refused?.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    // Nothing waited for Redis beyond the first connection attempt.
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('/readyz stays 200 and names Redis as degraded; /metrics says so too', async () => {
    const ready = await h.request({ method: 'GET', url: '/readyz' });
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ ready: true, phase: 'ready', degraded: ['redis'] });
    const metrics = await h.request({ method: 'GET', url: '/metrics', remoteAddress: '127.0.0.1' });
    const families = parsePrometheus(metrics.raw);
    expect(sample(families, 'parley_dependency_up', { dependency: 'redis' })).toBe(0);
    expect(sample(families, 'parley_dependency_up', { dependency: 'database' })).toBe(1);
    expect(sample(families, 'parley_rate_limit_local_decisions_total', {})).toBeGreaterThanOrEqual(
      11,
    );
  });
});
