import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHarness, dbDescribe, makeBot, makeUser, type Harness } from '../helpers/harness.js';

// D27 with its shared store gone: limited requests are refused as temporarily unavailable
// (503 + Retry-After, D5 form), never let through unlimited and never a 500.
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

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After', async () => {
    const owner = await makeUser(h, 'o');
    const bot = await makeBot(h, owner.id);
    const r = await h.as(bot.token).get('/bot/me');
    expect(r.status).toBe(503);
    expect(r.headers['retry-after']).toBe('1');
    expect(r.body).toEqual({
      error: {
        code: 'SERVICE_UNAVAILABLE',
        message: 'Rate limiting is temporarily unavailable; retry shortly',
        retryAfter: 1,
      },
    });
  });
});
