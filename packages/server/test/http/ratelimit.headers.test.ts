import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { FakeClock } from '../helpers/clock.js';
import {
  ADMIN_TOKEN,
  createHarness,
  dbDescribe,
  expectStatus,
  makeWorld,
  type Harness,
  type Reply,
  type World,
} from '../helpers/harness.js';

// Issue 3, acceptance 3 (D26): the X-RateLimit-* headers on every /api/v1 response — successes,
// errors, unknown routes, authentication failures, 429s — consistent with each other and with
// the clock, Remaining counting down exactly; none on /admin/v1, /cdn. And the check order:
// authentication first (D26: failures are charged to the address), limits before the body.

const DEFAULT_LIMITS = { PARLEY_RATE_GLOBAL: '5/10', PARLEY_RATE_MESSAGES: '10/20' };

interface Limits {
  limit: number;
  remaining: number;
  reset: number;
  resetAfter: number;
  bucket: string;
}

/** The five D26 headers, parsed strictly: each must be there and be a plain decimal number. */
function limitsOf(r: Reply): Limits {
  const num = (name: string, re: RegExp): number => {
    const v = r.headers[name];
    if (typeof v !== 'string' || !re.test(v))
      throw new Error(`${name} missing or malformed (${String(v)}) on HTTP ${r.status}: ${r.raw}`);
    return Number(v);
  };
  const bucket = r.headers['x-ratelimit-bucket'];
  if (typeof bucket !== 'string') throw new Error(`no X-RateLimit-Bucket on HTTP ${r.status}`);
  return {
    limit: num('x-ratelimit-limit', /^[0-9]+$/),
    remaining: num('x-ratelimit-remaining', /^[0-9]+$/),
    reset: num('x-ratelimit-reset', /^[0-9]+(\.[0-9]+)?$/),
    resetAfter: num('x-ratelimit-reset-after', /^[0-9]+(\.[0-9]+)?$/),
    bucket,
  };
}

const noLimitHeaders = (r: Reply): string[] =>
  Object.keys(r.headers).filter((k) => k.startsWith('x-ratelimit') || k === 'retry-after');

dbDescribe('rate-limit headers and check order (D26)', () => {
  const clock = new FakeClock();
  let h: Harness;
  let w: World;
  let otherGuild: number;
  beforeAll(async () => {
    h = await createHarness({ env: DEFAULT_LIMITS, clock });
    w = await makeWorld(h);
    const g = await h.admin.post('/guilds', { name: 'Elsewhere', ownerId: w.owner.id });
    otherGuild = g.body.id;
  });
  afterAll(async () => h.close());
  beforeEach(() => clock.advance(3_600_000)); // every bucket full again

  it('acceptance 3: on every kind of answer, Remaining counts down exactly and Reset = now + Reset-After', async () => {
    const bot = h.as(w.bot.token);
    const sent = await expectStatus(
      await bot.post(`/channels/${w.channelId}/messages`, { content: 'to delete' }),
      200,
    );
    const calls: [string, () => Promise<Reply>, number][] = [
      ['200 read', () => bot.get('/bot/me'), 200],
      ['200 list', () => bot.get(`/channels/${w.channelId}/messages`), 200],
      ['200 create', () => bot.post(`/users/${w.human.id}/dm`), 200],
      ['204 delete', () => bot.delete(`/channels/${w.channelId}/messages/${sent.body.id}`), 204],
      ['400 bad id', () => bot.get('/channels/01/messages'), 400],
      ['403 not a member', () => bot.get(`/guilds/${otherGuild}/channels`), 403],
      ['404 no such channel', () => bot.get('/channels/123456789'), 404],
      ['404 no such route', () => bot.get('/no/such/route'), 404],
      ['405 wrong method', () => bot.delete('/bot/me'), 405],
      [
        '200 HEAD',
        () =>
          h.request({
            method: 'HEAD',
            url: '/api/v1/bot/me',
            headers: { authorization: `Bearer ${w.bot.token}` },
          }),
        200,
      ],
      ['429', () => bot.get('/bot/me'), 429],
    ];
    const now = clock.now();
    let k = 0;
    for (const [what, call, status] of calls) {
      const r = await call();
      expect(r.status, what).toBe(status);
      const l = limitsOf(r);
      const spent = Math.min(++k, 10); // the 11th call is refused and spends nothing
      expect(l, what).toEqual({
        limit: 10,
        remaining: 10 - spent,
        resetAfter: (spent * 200) / 1000,
        reset: (now + spent * 200) / 1000,
        bucket: 'global',
      });
    }
  });

  it('acceptance 3: message sends state their own bucket', async () => {
    const r = await expectStatus(
      await h.as(w.bot.token).post(`/channels/${w.channelId}/messages`, { content: 'hi' }),
      200,
    );
    expect(limitsOf(r)).toEqual({
      limit: 20,
      remaining: 19,
      resetAfter: 0.1,
      reset: (clock.now() + 100) / 1000,
      bucket: 'messages',
    });
    // a send refused by validation still spent its token (only a 429 consumes nothing)
    const bad = await h.as(w.bot.token).post(`/channels/${w.channelId}/messages`, { content: '' });
    expect(bad.status).toBe(400);
    expect(limitsOf(bad).remaining).toBe(18);
  });

  it('D26: failed authentication is charged to the client address, carries the headers, and ends in 429', async () => {
    const nobody = h.as(undefined);
    for (let i = 0; i < 10; i++) {
      const r = await nobody.get('/bot/me');
      expect(r.status).toBe(401);
      expect(r.headers['www-authenticate']).toBe('Bearer');
      expect(limitsOf(r)).toMatchObject({ bucket: 'global', limit: 10, remaining: 9 - i });
    }
    const refused = await h.as('not-a-token').get('/bot/me');
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'RATE_LIMIT_EXCEEDED', retryAfter: 0.2 });
    expect(refused.headers['retry-after']).toBe('1');
    // another address has its own bucket; so has the bot calling from the same address
    const elsewhere = await h.request({
      method: 'GET',
      url: '/api/v1/bot/me',
      remoteAddress: '10.1.2.3',
    });
    expect(elsewhere.status).toBe(401);
    expect(limitsOf(elsewhere).remaining).toBe(9);
    const bot = await expectStatus(await h.as(w.bot.token).get('/bot/me'), 200);
    expect(limitsOf(bot).remaining).toBe(9);
  });

  it('authentication comes before the bot’s bucket: a dead token of the bot cannot spend its budget', async () => {
    const old = w.bot.token;
    const reset = await expectStatus(await h.admin.post(`/bots/${w.bot.id}/token`), 200);
    w.bot.token = reset.body.token;
    const statuses: number[] = [];
    for (let i = 0; i < 15; i++) statuses.push((await h.as(old).get('/bot/me')).status);
    expect(statuses).toEqual([...Array(10).fill(401), ...Array(5).fill(429)]);
    const r = await expectStatus(await h.as(w.bot.token).get('/bot/me'), 200);
    expect(limitsOf(r).remaining).toBe(9);
  });

  it('D26: /admin/v1, /cdn and the docs are not rate limited', async () => {
    for (let i = 0; i < 15; i++) {
      const admin = await h.request({
        method: 'POST',
        url: `/admin/v1/users/${w.human.id}/sessions`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(admin.status).toBe(201);
      expect(noLimitHeaders(admin)).toEqual([]);
      const cdn = await h.request({ method: 'GET', url: '/cdn/avatars/default.png' });
      expect(cdn.status).toBe(200);
      expect(noLimitHeaders(cdn)).toEqual([]);
      const unknownAdmin = await h.request({ method: 'GET', url: '/admin/v1/nope' });
      expect(noLimitHeaders(unknownAdmin)).toEqual([]);
    }
    const health = await h.request({ method: 'GET', url: '/healthz' });
    expect(noLimitHeaders(health)).toEqual([]);
  });

  it('the limiter answers before the body arrives: a refused upload is never read', async () => {
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = h.app.server.address() as AddressInfo;
    // Announce a 60 000-byte body and send none of it. Resolves with what came back within
    // `waitMs` ('' = nothing: the server is waiting for the body).
    const announceOnly = (waitMs: number): Promise<string> =>
      new Promise<string>((resolve, reject) => {
        let data = '';
        const socket = net.connect(port, '127.0.0.1', () => {
          socket.write(
            [
              `POST /api/v1/channels/${w.channelId}/messages HTTP/1.1`,
              'Host: parley.test',
              `Authorization: Bearer ${w.bot.token}`,
              'Content-Type: application/json',
              'Content-Length: 60000',
              '',
              '',
            ].join('\r\n'),
          );
        });
        const timer = setTimeout(() => {
          socket.destroy();
          resolve(data);
        }, waitMs);
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => {
          data += chunk;
          if (data.includes('\r\n\r\n') && data.includes('"error"')) {
            clearTimeout(timer);
            socket.destroy();
            resolve(data);
          }
        });
        socket.on('error', reject);
      });
    // Control: an allowed request waits for its body (so an answer below proves it was not read).
    expect(await announceOnly(500)).toBe('');
    const bot = h.as(w.bot.token);
    for (let i = 0; i < 19; i++)
      await expectStatus(
        await bot.post(`/channels/${w.channelId}/messages`, { content: 'z' }),
        200,
      );
    const answer = await announceOnly(5000);
    expect(answer).toMatch(/^HTTP\/1\.1 429 /);
    expect(answer.toLowerCase()).toContain('x-ratelimit-bucket: messages');
  });
});
