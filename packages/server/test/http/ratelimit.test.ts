import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { FakeClock } from '../helpers/clock.js';
import {
  createHarness,
  dbDescribe,
  expectStatus,
  makeBot,
  makeUser,
  join,
  makeWorld,
  type Harness,
  type Reply,
  type World,
} from '../helpers/harness.js';

// Issue 3, acceptance 1, 2, 5 and "a rejected request has no effect" (D25–D27), on the HTTP API
// with the default figures and a fake clock: every number below is exact.

const DEFAULT_LIMITS = { PARLEY_RATE_GLOBAL: '5/10', PARLEY_RATE_MESSAGES: '10/20' };
const header = (r: Reply, name: string): string => String(r.headers[name]);

dbDescribe('rate limits (D25–D27)', () => {
  const clock = new FakeClock();
  let h: Harness;
  let w: World;
  beforeAll(async () => {
    h = await createHarness({ env: DEFAULT_LIMITS, clock });
    w = await makeWorld(h);
  });
  afterAll(async () => h.close());
  // Every bucket is full again at the start of each test (an hour refills any of them).
  beforeEach(() => clock.advance(3_600_000));

  it('acceptance 1: 10 GETs pass, the 11th → 429 (retryAfter 0.2, Retry-After 1); after retryAfter the next passes', async () => {
    const bot = h.as(w.bot.token);
    for (let i = 0; i < 10; i++) expect((await bot.get('/bot/me')).status).toBe(200);
    const r = await bot.get('/bot/me');
    expect(r.status).toBe(429);
    // D5 + D26: the error body with retryAfter in (fractional) seconds, Retry-After rounded up
    expect(r.body).toEqual({
      error: { code: 'RATE_LIMIT_EXCEEDED', message: expect.any(String), retryAfter: 0.2 },
    });
    expect(header(r, 'retry-after')).toBe('1');
    expect(header(r, 'x-ratelimit-bucket')).toBe('global');
    expect(header(r, 'x-ratelimit-remaining')).toBe('0');
    clock.advance(r.body.error.retryAfter * 1000);
    expect((await bot.get('/bot/me')).status).toBe(200);
    expect((await bot.get('/bot/me')).status).toBe(429);
  });

  it('acceptance 1: sustained 5/s passes indefinitely (500 requests over 100 s of fake time)', async () => {
    const bot = h.as(w.bot.token);
    for (let i = 0; i < 10; i++) await expectStatus(await bot.get('/bot/me'), 200);
    const statuses = new Set<number>();
    for (let i = 0; i < 500; i++) {
      clock.advance(200);
      statuses.add((await bot.get('/bot/me')).status);
    }
    expect([...statuses]).toEqual([200]);
    // …and not one request faster: 199 ms after the last one is too early
    clock.advance(199);
    expect((await bot.get('/bot/me')).status).toBe(429);
  });

  it('acceptance 2: 20 sends pass, the global bucket is independent; the 21st → 429 and creates nothing', async () => {
    const bot = h.as(w.bot.token);
    const url = `/channels/${w.channelId}/messages`;
    const before = await expectStatus(await bot.get(`${url}?limit=100`), 200);
    const sent: number[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await expectStatus(await bot.post(url, { content: `burst ${i}` }), 200);
      expect(header(r, 'x-ratelimit-bucket')).toBe('messages');
      expect(header(r, 'x-ratelimit-remaining')).toBe(String(19 - i));
      sent.push(r.body.id);
    }
    // the sends spent nothing of `global`: the list before took one token, this takes the second
    const mid = await expectStatus(await bot.get('/bot/me'), 200);
    expect(header(mid, 'x-ratelimit-bucket')).toBe('global');
    expect(header(mid, 'x-ratelimit-remaining')).toBe('8');

    const refused = await bot.post(url, { content: 'one too many' });
    expect(refused.status).toBe(429);
    expect(refused.body.error).toEqual({
      code: 'RATE_LIMIT_EXCEEDED',
      message: expect.any(String),
      retryAfter: 0.1, // 10/s
    });
    expect(header(refused, 'retry-after')).toBe('1');
    expect(header(refused, 'x-ratelimit-bucket')).toBe('messages');
    expect(header(refused, 'x-ratelimit-limit')).toBe('20');

    // the list proves it: exactly the 20 sent, and no "one too many"
    const after = await expectStatus(await bot.get(`${url}?limit=100`), 200);
    const newIds = after.body.messages
      .map((m: { id: number }) => m.id)
      .filter((id: number) => !before.body.messages.some((m: { id: number }) => m.id === id));
    expect(newIds.sort()).toEqual([...sent].sort());
    expect(after.body.messages.some((m: { content: string }) => m.content === 'one too many')).toBe(
      false,
    );
  });

  it('D25: DM sends share the bot’s `messages` bucket with guild sends', async () => {
    const bot = h.as(w.bot.token);
    const dm = await expectStatus(await bot.post(`/users/${w.human.id}/dm`), 200);
    const dmUrl = `/dm/channels/${dm.body.channelId}/messages`;
    for (let i = 0; i < 15; i++)
      await expectStatus(
        await bot.post(`/channels/${w.channelId}/messages`, { content: 'g' }),
        200,
      );
    for (let i = 0; i < 5; i++) {
      const r = await expectStatus(await bot.post(dmUrl, { content: `dm ${i}` }), 200);
      expect(header(r, 'x-ratelimit-remaining')).toBe(String(4 - i));
    }
    const refused = await bot.post(dmUrl, { content: 'dm refused' });
    expect(refused.status).toBe(429);
    expect(header(refused, 'x-ratelimit-bucket')).toBe('messages');
    const list = await expectStatus(await bot.get(`${dmUrl}?limit=100`), 200);
    expect(list.body.messages.map((m: { content: string }) => m.content)).not.toContain(
      'dm refused',
    );
  });

  it('D26: a refused request is refused before its body is read or validated', async () => {
    const bot = h.as(w.bot.token);
    const url = `/api/v1/channels/${w.channelId}/messages`;
    for (let i = 0; i < 20; i++)
      await expectStatus(
        await bot.post(`/channels/${w.channelId}/messages`, { content: 'x' }),
        200,
      );
    const auth = { authorization: `Bearer ${w.bot.token}`, 'content-type': 'application/json' };
    // malformed JSON would be a 400, an over-large body a 413: neither is looked at
    const bad = await h.request({ method: 'POST', url, headers: auth, payload: '{"content":' });
    expect(bad.status).toBe(429);
    const huge = await h.request({
      method: 'POST',
      url,
      headers: auth,
      payload: JSON.stringify({ content: 'y'.repeat(100_000) }),
    });
    expect(huge.status).toBe(429);
  });

  it('acceptance 5: bots are isolated — one bot at its limit does not slow another', async () => {
    const other = await makeBot(h, w.owner.id, 'other bot');
    await join(h, w.guildId, other.userId);
    const a = h.as(w.bot.token);
    const b = h.as(other.token);
    for (let i = 0; i < 10; i++) await expectStatus(await a.get('/bot/me'), 200);
    for (let i = 0; i < 20; i++)
      await expectStatus(await a.post(`/channels/${w.channelId}/messages`, { content: 'a' }), 200);
    expect((await a.get('/bot/me')).status).toBe(429);
    expect((await a.post(`/channels/${w.channelId}/messages`, { content: 'a' })).status).toBe(429);

    const g = await expectStatus(await b.get('/bot/me'), 200);
    expect(header(g, 'x-ratelimit-remaining')).toBe('9');
    const m = await expectStatus(
      await b.post(`/channels/${w.channelId}/messages`, { content: 'b' }),
      200,
    );
    expect(header(m, 'x-ratelimit-remaining')).toBe('19');
  });

  it('D25/D10: a person’s session has its own bucket, apart from other people and from bots', async () => {
    const other = await makeUser(h, 'someone else');
    await join(h, w.guildId, other.id);
    const person = h.as(w.human.token);
    for (let i = 0; i < 10; i++)
      await expectStatus(await person.get(`/channels/${w.channelId}`), 200);
    const refused = await person.get(`/channels/${w.channelId}`);
    expect(refused.status).toBe(429);
    const o = await expectStatus(await h.as(other.token).get(`/channels/${w.channelId}`), 200);
    expect(header(o, 'x-ratelimit-remaining')).toBe('9');
    const b = await expectStatus(await h.as(w.bot.token).get(`/channels/${w.channelId}`), 200);
    expect(header(b, 'x-ratelimit-remaining')).toBe('9');
  });
});

dbDescribe('rate limits turned off (D27, D42: PARLEY_RATE_*=off)', () => {
  let h: Harness;
  let w: World;
  beforeAll(async () => {
    h = await createHarness(); // the harness default: every bucket off
    w = await makeWorld(h);
  });
  afterAll(async () => h.close());

  it('no bucket: no 429 and no X-RateLimit headers', async () => {
    for (let i = 0; i < 30; i++) {
      const r = await expectStatus(await h.as(w.bot.token).get('/bot/me'), 200);
      expect(Object.keys(r.headers).filter((k) => k.startsWith('x-ratelimit'))).toEqual([]);
    }
    // authentication still happens when limits are off
    expect((await h.as(undefined).get('/bot/me')).status).toBe(401);
  });
});

// D25 behind a reverse proxy: unauthenticated requests are limited per client address, which
// only X-Forwarded-For tells — believed when the operator says so (PARLEY_TRUST_PROXY).
dbDescribe('client addresses behind a proxy (PARLEY_TRUST_PROXY)', () => {
  const unauthenticatedFrom = (h: Harness, ip: string) =>
    h.request({ method: 'GET', url: '/api/v1/bot/me', headers: { 'x-forwarded-for': ip } });

  for (const [trust, separate] of [
    ['false', false],
    ['true', true],
    ['1', true],
    ['127.0.0.1/8', true],
  ] as const) {
    it(`PARLEY_TRUST_PROXY=${trust}: X-Forwarded-For ${separate ? 'names' : 'does not name'} the bucket`, async () => {
      const h = await createHarness({
        env: { ...DEFAULT_LIMITS, PARLEY_TRUST_PROXY: trust },
        clock: new FakeClock(),
      });
      try {
        for (let i = 0; i < 10; i++)
          expect((await unauthenticatedFrom(h, '203.0.113.7')).status).toBe(401);
        expect((await unauthenticatedFrom(h, '203.0.113.7')).status).toBe(429);
        // Another client behind the same proxy: its own bucket only if the header is believed.
        expect((await unauthenticatedFrom(h, '198.51.100.9')).status).toBe(separate ? 401 : 429);
      } finally {
        await h.close();
      }
    });
  }
});
