import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { call, startParley, stopParley, tempDir, type Running } from '../helpers/process.js';
import { dropPrefix, redisDescribe, redisUrlWithPrefix, uniquePrefix } from '../helpers/redis.js';

// Issue 3, acceptance 4 (D27): two real server processes sharing one Redis (and one SQLite file
// in WAL mode) enforce ONE budget per bot. Requests spread over both nodes draw from the same
// bucket: ten pass, the eleventh fails on either node.
//
// The burst is the default 10; the refill is slowed to one token per 10 s (D27: configurable) so
// the proof does not depend on how fast this machine answers 12 HTTP requests. With 5/s the
// eleventh must arrive within 200 ms of the first, which a loaded CI machine does not promise.
const ADMIN_TOKEN = 'cluster-admin-token-0123456789';

redisDescribe('two server processes share one budget per bot (D27)', () => {
  const prefix = uniquePrefix();
  const data = tempDir('parley-rl-cluster-');
  let a: Running | undefined;
  let b: Running | undefined;
  const bots: string[] = [];

  beforeAll(async () => {
    const env = {
      PARLEY_HOST: '127.0.0.1',
      PARLEY_PORT: '0',
      PARLEY_DATA_DIR: data.path,
      PARLEY_DATABASE_URL: `sqlite:${path.join(data.path, 'parley.db')}`,
      PARLEY_REDIS_URL: redisUrlWithPrefix(prefix), // this run's own keys
      PARLEY_ADMIN_TOKEN: ADMIN_TOKEN,
      PARLEY_RATE_GLOBAL: '0.1/10',
      PARLEY_LOG_LEVEL: 'warn',
    };
    // One after the other: the first creates the database and the token secret, the second
    // finds them (both nodes must sign and verify bot tokens with the same secret).
    a = await startParley({ ...env, PARLEY_NODE_ID: '1' });
    b = await startParley({ ...env, PARLEY_NODE_ID: '2' });
    const owner = await call(a.origin, 'POST', '/admin/v1/users', ADMIN_TOKEN, { name: 'owner' });
    expect(owner.status).toBe(201);
    const ownerId = (owner.body as { id: number }).id;
    for (const name of ['shared', 'bystander']) {
      const bot = await call(a.origin, 'POST', '/admin/v1/bots', ADMIN_TOKEN, { ownerId, name });
      expect(bot.status).toBe(201);
      bots.push((bot.body as { token: string }).token);
    }
  }, 150_000);

  afterAll(async () => {
    await Promise.all([stopParley(a), stopParley(b)]);
    data.remove();
    await dropPrefix(prefix);
  }, 30_000);

  it('10 burst requests over both nodes pass, the 11th fails on either', async () => {
    const nodes = [a as Running, b as Running];
    const token = bots[0] ?? '';
    const burst = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call(nodes[i % 2]?.origin ?? '', 'GET', '/api/v1/bot/me', token),
      ),
    );
    expect(burst.map((r) => r.status)).toEqual(Array(10).fill(200));
    // one bucket: the ten answers count 9…0 between them (two budgets would repeat numbers)
    const remaining = burst.map((r) => Number(r.headers.get('x-ratelimit-remaining')));
    expect(remaining.sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);

    for (const node of nodes) {
      const r = await call(node.origin, 'GET', '/api/v1/bot/me', token);
      expect(r.status, node.origin).toBe(429);
      expect(r.body).toMatchObject({ error: { code: 'RATE_LIMIT_EXCEEDED' } });
      expect(r.headers.get('x-ratelimit-bucket')).toBe('global');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }

    // and the other bot, on either node, has its whole budget (acceptance 5 across nodes)
    for (const node of nodes) {
      const r = await call(node.origin, 'GET', '/api/v1/bot/me', bots[1] ?? '');
      expect(r.status).toBe(200);
    }
    const last = await call(b?.origin ?? '', 'GET', '/api/v1/bot/me', bots[1] ?? '');
    expect(last.headers.get('x-ratelimit-remaining')).toBe('7');
  }, 30_000);
});
