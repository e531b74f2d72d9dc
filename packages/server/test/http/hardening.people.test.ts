import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMON_PASSWORDS, commonPasswords } from '../../src/domain/auth/password-policy.js';
import {
  ADMIN_TOKEN,
  createHarness,
  dbDescribe,
  expectError,
  expectStatus,
  join,
  makeUser,
  type Harness,
} from '../helpers/harness.js';
import {
  login,
  makeInvite,
  ORIGIN,
  PASSWORD,
  register,
  sessionCookie,
  withCookie,
} from '../helpers/people.js';

// Issue 21 (D70), the low findings of the people's side, each over real HTTP: no-store on
// answers with tokens, secrets or a person's data; the operator API rate limited on failures;
// the invite checked before the name; bans revealing nothing about strangers; invisible and
// confusable names refused; bot descriptions under one validator; common passwords and the name
// as password refused; /api/v1 by the HttpOnly cookie with D47's Origin rule; a CSP on /docs.

dbDescribe('no-store, operator failures, invite before name (D70)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({
      env: { PARLEY_REGISTRATION: 'invite', PARLEY_RATE_GLOBAL: '1/5' },
    });
  });
  afterAll(async () => h.close());

  it("Cache-Control: no-store on answers carrying a token, a secret or a person's data", async () => {
    const owner = await makeUser(h, 'owner');
    const g = await expectStatus(
      await h.admin.post('/guilds', { name: 'G', ownerId: owner.id }),
      201,
    );
    const code = await makeInvite(h, g.body.id, 'join-me');
    const reg = await expectStatus(
      await h.people(undefined).post('/auth/register', {
        name: 'newcomer',
        password: PASSWORD,
        invite: code,
      }),
      201,
    );
    const token = reg.body.token as string;
    const bot = await expectStatus(await h.people(token).post('/bots', { name: 'helper' }), 201);
    const answers = [
      reg, // token
      await login(h, 'newcomer', PASSWORD, { remoteAddress: '203.0.113.9' }), // token
      bot, // token and webhook secret
      await h.people(token).post(`/bots/${bot.body.bot.id}/token`), // token
      await h.people(token).get('/users/@me'),
      await h.people(token).get('/sessions'),
      await h.as(token).get(`/guilds/${g.body.id}/members`),
      await h.admin.post(`/users/${owner.id}/sessions`), // a session token from the operator
      await h.admin.get('/users'),
      await h.people(undefined).get('/users/@me'), // errors of the API too
    ];
    for (const r of answers) expect(r.headers['cache-control'], r.raw).toBe('no-store');
    // Public, identical-for-everyone resources keep their own caching.
    const avatar = await h.request({ method: 'GET', url: '/cdn/avatars/default.png' });
    expect(avatar.headers['cache-control']).not.toBe('no-store');
  });

  it("wrong operator tokens draw from the client address's bucket: 429 after the burst", async () => {
    const wrong = (ip: string) =>
      h.request({
        method: 'GET',
        url: '/admin/v1/users',
        headers: { authorization: 'Bearer not-the-admin-token-at-all' },
        remoteAddress: ip,
      });
    // Burst 5: five 401s, then 429 with Retry-After — the token cannot be guessed at speed.
    for (let i = 0; i < 5; i++) expectError(await wrong('198.51.100.40'), 401, 'UNAUTHORIZED');
    const limited = await wrong('198.51.100.40');
    expectError(limited, 429, 'RATE_LIMIT_EXCEEDED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // A missing token counts the same.
    expectError(
      await h.request({ method: 'GET', url: '/admin/v1/users', remoteAddress: '198.51.100.40' }),
      429,
      'RATE_LIMIT_EXCEEDED',
    );
    // Another address has its own bucket; the right token is never limited by this.
    expectError(await wrong('198.51.100.41'), 401, 'UNAUTHORIZED');
    const ok = await h.request({
      method: 'GET',
      url: '/admin/v1/users',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      remoteAddress: '198.51.100.40',
    });
    expect(ok.status).toBe(200);
  });

  it('registration checks the invite before the name: a taken name with a bad invite is 404', async () => {
    await makeUser(h, 'taken-name');
    const r = await h.people(undefined).post('/auth/register', {
      name: 'Taken-Name',
      password: PASSWORD,
      invite: 'no-such-invite',
    });
    // Not 409: without a valid invite nobody learns which names exist.
    expectError(r, 404, 'NOT_FOUND');
  });
});

dbDescribe('names, descriptions and passwords (D70)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ env: { PARLEY_REGISTRATION: 'open' } });
    await register(h, 'admin');
  });
  afterAll(async () => h.close());

  const reg = (name: string, password = PASSWORD) =>
    h.people(undefined).post('/auth/register', { name, password });

  it('names with invisible or filler characters → 400 (Default_Ignorable_Code_Point, U+2800)', async () => {
    const invisible = [
      '\u3164', // HANGUL FILLER
      '\u115F', // HANGUL CHOSEONG FILLER
      '\u1160', // HANGUL JUNGSEONG FILLER
      '\uFFA0', // HALFWIDTH HANGUL FILLER
      '\u034F', // COMBINING GRAPHEME JOINER
      '\uFE0F', // VARIATION SELECTOR-16
      '\uFE00', // VARIATION SELECTOR-1
      '\u{E0100}', // VARIATION SELECTOR-17
      '\u180B', // MONGOLIAN FREE VARIATION SELECTOR ONE
      '\u180F', // MONGOLIAN FREE VARIATION SELECTOR FOUR
      '\u17B4', // KHMER VOWEL INHERENT AQ
      '\u17B5', // KHMER VOWEL INHERENT AA
      '\u2800', // BRAILLE PATTERN BLANK
      '\u200B', // ZERO WIDTH SPACE
      '\u2060', // WORD JOINER
    ];
    for (const c of invisible) {
      const hex = c.codePointAt(0)?.toString(16);
      for (const name of [`ab${c}cd`, `${c}${c}`, `x${c}`]) {
        const r = await reg(name);
        expectError(r, 400, 'VALIDATION_ERROR', `U+${hex}`);
        expect(r.body.error.details[0].field, `U+${hex}`).toBe('name');
      }
      // The same for the other names people read (guilds, channels, roles, bots).
      expectError(
        await h.admin.post('/guilds', { name: `g${c}`, ownerId: 1 }),
        400,
        'VALIDATION_ERROR',
        `guild U+${hex}`,
      );
    }
    // Ordinary letters, accents, scripts and spaces inside are fine.
    for (const name of ['Zoë Ågren', '名前テスト', 'José María', 'Ольга']) await register(h, name);
  });

  it("a name confusable with another person's → 409 (UTS #39 skeleton): Cyrillic, full-width, m/rn, 0/O", async () => {
    for (const name of ['аdmin', 'ａｄｍｉｎ', 'ADMІN', 'adrnin', 'Admin\u00A0', 'ᎪᎠⅯⅠN']) {
      const r = await reg(name);
      if (r.status === 400) continue; // untrimmed: refused earlier
      expectError(r, 409, 'CONFLICT', name);
      expect(r.body.error.message).toMatch(/looks too much like/);
    }
    await register(h, 'b0b');
    expectError(await reg('bob'), 409, 'CONFLICT');
    expectError(await reg('B0B'), 409, 'CONFLICT'); // same login ignoring case: "taken"
    // Renaming into one is refused as well, and so is the operator's create and rename.
    const p = await register(h, 'renamer');
    const rename = await h.people(p.token).patch('/users/@me', { name: 'аdmin' });
    expectError(rename, 409, 'CONFLICT');
    expectError(await h.admin.post('/users', { name: 'ａｄｍｉｎ' }), 409, 'CONFLICT');
    expectError(await h.admin.patch(`/users/${p.id}`, { name: 'adrnin' }), 409, 'CONFLICT');
    // A person may show their own name differently (its skeleton is their own).
    await expectStatus(await h.people(p.token).patch('/users/@me', { name: 'Renamer' }), 200);
    // Distinct names pass.
    await register(h, 'administrator');
  });

  it('bot descriptions: /app/v1 refuses bidi controls exactly as /admin/v1 does (one validator)', async () => {
    const p = await register(h, 'botowner');
    for (const bad of ['safe \u202Eevil', 'a\u2066b', 'zero\u200Bwidth']) {
      const app = await h.people(p.token).post('/bots', { name: 'b1', description: bad });
      expectError(app, 400, 'VALIDATION_ERROR');
      expect(app.body.error.details[0].field).toBe('description');
      const op = await h.admin.post('/bots', { ownerId: p.id, name: 'b1', description: bad });
      expectError(op, 400, 'VALIDATION_ERROR');
    }
    const ok = await expectStatus(
      await h.people(p.token).post('/bots', { name: 'b1', description: 'Helps — nicely ✓' }),
      201,
    );
    const patch = await h.people(p.token).patch(`/bots/${ok.body.bot.id}`, {
      description: 'now \u202Eevil',
    });
    expectError(patch, 400, 'VALIDATION_ERROR');
    expectError(
      await h.admin.patch(`/bots/${ok.body.bot.id}`, { description: 'now \u202Eevil' }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('passwords: the 10,000 most common (ignoring case) and the name itself → 400 with a reason', async () => {
    const list = [...(await commonPasswords())];
    expect(list.length).toBe(COMMON_PASSWORDS);
    for (const pw of ['12345678', 'password', 'Password1', 'QWERTY123', list[9_999] as string]) {
      if (pw.length < 8) continue;
      const r = await reg(`user-${pw.length}-${pw.charCodeAt(0)}`, pw);
      expectError(r, 400, 'VALIDATION_ERROR', pw);
      expect(r.body.error.details).toEqual([
        { field: 'password', problem: expect.stringMatching(/10,000 most common/) },
      ]);
    }
    const same = await reg('CorrectHorse', 'correcthorse');
    expectError(same, 400, 'VALIDATION_ERROR');
    expect(same.body.error.details[0].problem).toMatch(/must not be your name/);
    // Changing one's password, and the operator setting one, follow the same rule.
    const p = await register(h, 'changer');
    const change = await h.people(p.token).post('/users/@me/password', {
      current: PASSWORD,
      password: 'iloveyou1',
    });
    expectError(change, 400, 'VALIDATION_ERROR');
    expectError(
      await h.admin.post('/users', { name: 'opmade', password: 'sunshine' }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await h.admin.patch(`/users/${p.id}`, { password: 'CHANGER' + '' }),
      400,
      'VALIDATION_ERROR',
    );
    // A good password is fine.
    await expectStatus(await reg('strong-one', 'violet-otter-sails-north'), 201);
  });
});

dbDescribe('bans and lookups reveal nothing about strangers (D70)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => h.close());

  it('banning an id the caller shares no guild or DM with is 404 like an unknown id; known people can be banned', async () => {
    const owner = await makeUser(h, 'owner');
    const stranger = await makeUser(h, 'stranger');
    await h.services.domain.db
      .updateTable('users')
      .set({ avatar: 'https://example.org/secret-face.png' })
      .where('id', '=', stranger.id)
      .execute();
    const g = await expectStatus(
      await h.admin.post('/guilds', { name: 'G', ownerId: owner.id }),
      201,
    );
    const app = (m: 'PUT' | 'GET', url: string) =>
      h.request({
        method: m,
        url: `/app/v1${url}`,
        headers: { authorization: `Bearer ${owner.token}` },
      });
    const strangerBan = await app('PUT', `/guilds/${g.body.id}/bans/${stranger.id}`);
    const unknownBan = await app('PUT', `/guilds/${g.body.id}/bans/9007199254740991`);
    expectError(strangerBan, 404, 'NOT_FOUND');
    expectError(unknownBan, 404, 'NOT_FOUND');
    expect(strangerBan.body.error.message).toBe(unknownBan.body.error.message);
    const list = await expectStatus(await app('GET', `/guilds/${g.body.id}/bans`), 200);
    expect(list.body.bans).toEqual([]);
    expect(list.raw).not.toContain('stranger');
    expect(list.raw).not.toContain('secret-face');
    expectError(await h.people(owner.token).get(`/users/${stranger.id}`), 404, 'NOT_FOUND');

    // A member, and someone sharing another guild with the caller, can be banned (pre-emptively).
    const member = await makeUser(h, 'member');
    await join(h, g.body.id, member.id);
    const acquaintance = await makeUser(h, 'acquaintance');
    const other = await expectStatus(
      await h.admin.post('/guilds', { name: 'O', ownerId: owner.id }),
      201,
    );
    await join(h, other.body.id, acquaintance.id);
    await expectStatus(await app('PUT', `/guilds/${g.body.id}/bans/${member.id}`), 204);
    await expectStatus(await app('PUT', `/guilds/${g.body.id}/bans/${acquaintance.id}`), 204);
    // Banning again is idempotent, also once the banned member shares nothing any more.
    await expectStatus(await app('PUT', `/guilds/${g.body.id}/bans/${member.id}`), 204);
    const after = await expectStatus(await app('GET', `/guilds/${g.body.id}/bans`), 200);
    expect(after.body.bans.map((b: { user: { id: number } }) => b.user.id).sort()).toEqual(
      [member.id, acquaintance.id].sort((a, b) => a - b),
    );
  });
});

dbDescribe('/api/v1 by the session cookie; a CSP on /docs (D70)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ env: { PARLEY_REGISTRATION: 'open' } });
  });
  afterAll(async () => h.close());

  const api = (
    token: string,
    method: 'GET' | 'POST',
    url: string,
    o: { origin?: string; body?: unknown } = {},
  ) =>
    h.request({
      method,
      url: `/api/v1${url}`,
      headers: {
        cookie: `parley_session=${token}`,
        ...(o.origin === undefined ? {} : { origin: o.origin }),
        ...(o.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(o.body === undefined ? {} : { payload: JSON.stringify(o.body) }),
    });

  it("reads and writes with the HttpOnly cookie; a write needs this site's Origin (403 otherwise)", async () => {
    const r = await expectStatus(
      await h.people(undefined).post('/auth/register', { name: 'cookie-user', password: PASSWORD }),
      201,
    );
    const cookie = sessionCookie(r);
    expect(cookie).toMatch(/HttpOnly/i);
    const token = r.body.token as string;
    const g = await expectStatus(
      await withCookie(h, token, 'POST', '/guilds', { origin: ORIGIN, body: { name: 'Mine' } }),
      201,
    );
    const channelId = g.body.channels[0].id as number;
    // GET by cookie alone.
    const channels = await expectStatus(
      await api(token, 'GET', `/guilds/${g.body.id}/channels`),
      200,
    );
    expect(channels.body.channels[0].id).toBe(channelId);
    // A write without Origin, or from elsewhere: refused, nothing written.
    const bare = await api(token, 'POST', `/channels/${channelId}/messages`, {
      body: { content: 'x' },
    });
    expectError(bare, 403, 'FORBIDDEN');
    const cross = await api(token, 'POST', `/channels/${channelId}/messages`, {
      origin: 'https://evil.example',
      body: { content: 'x' },
    });
    expectError(cross, 403, 'FORBIDDEN');
    // From this site: sent.
    const sent = await expectStatus(
      await api(token, 'POST', `/channels/${channelId}/messages`, {
        origin: ORIGIN,
        body: { content: 'hello by cookie' },
      }),
      200,
    );
    const history = await expectStatus(
      await api(token, 'GET', `/channels/${channelId}/messages`),
      200,
    );
    expect(history.body.messages.map((m: { id: number }) => m.id)).toEqual([sent.body.id]);
    // A bot token in the cookie opens nothing; an ended session neither.
    const bot = await expectStatus(await h.people(token).post('/bots', { name: 'cb' }), 201);
    expectError(await api(bot.body.token, 'GET', '/bot/me'), 401, 'UNAUTHORIZED');
    await expectStatus(await withCookie(h, token, 'POST', '/auth/logout', { origin: ORIGIN }), 204);
    expectError(await api(token, 'GET', `/guilds/${g.body.id}/channels`), 401, 'UNAUTHORIZED');
  });

  it('/docs is served with a Content-Security-Policy (no inline script, not framable)', async () => {
    const r = await h.request({ method: 'GET', url: '/docs/' });
    expect(r.status).toBe(200);
    const csp = String(r.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    const js = await h.request({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
    expect(js.status).toBe(200);
    expect(String(js.headers['content-security-policy'])).toContain("script-src 'self'");
  });
});

describe('the common-password list (D70)', () => {
  it('is the first 10,000 of a maintained, frequency-ranked list', async () => {
    const set = await commonPasswords();
    expect(set.size).toBe(10_000);
    for (const p of ['123456', 'password', '12345678', 'qwerty', 'iloveyou'])
      expect(set.has(p)).toBe(true);
    expect(set.has('violet-otter-sails-north')).toBe(false);
  });
});
