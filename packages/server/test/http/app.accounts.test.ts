import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_EVERYONE_PERMISSIONS } from '@parley/protocol';
import { FakeClock } from '../helpers/clock.js';
import {
  createHarness,
  dbDescribe,
  expectError,
  expectStatus,
  makeBot,
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

// D45–D47: accounts and sessions of the people's API /app/v1, over real HTTP.
const AVATAR = `${ORIGIN}/cdn/avatars/default.png`;

dbDescribe('D46 register (PARLEY_REGISTRATION=open)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ env: { PARLEY_REGISTRATION: 'open' } });
  });
  afterAll(async () => h.close());

  it('201 {user, token}, sets the session cookie (HttpOnly, SameSite=Lax, Path=/, not Secure on http)', async () => {
    const r = await h.request({
      method: 'POST',
      url: '/app/v1/auth/register',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'Alice', password: PASSWORD }),
    });
    expect(r.status, r.raw).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(['token', 'user']);
    expect(r.body.user).toEqual({
      id: r.body.user.id,
      name: 'Alice',
      avatar: AVATAR,
      isBot: false,
    });
    expect(r.body.token).toMatch(/^pus_/);
    const cookie = sessionCookie(r);
    expect(cookie).toContain(`parley_session=${r.body.token}`);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).toMatch(/; Path=\//);
    expect(cookie).not.toMatch(/Secure/);
    // The token works at once, as bearer and as cookie.
    const me = await expectStatus(await h.people(r.body.token).get('/users/@me'), 200);
    expect(me.body).toEqual(r.body.user);
    expect((await withCookie(h, r.body.token, 'GET', '/users/@me')).body.id).toBe(r.body.user.id);
  });

  it('names are unique ignoring case (409), also for people the operator creates', async () => {
    expectError(
      await h.people(undefined).post('/auth/register', { name: 'ALICE', password: PASSWORD }),
      409,
      'CONFLICT',
    );
    expectError(await h.admin.post('/users', { name: 'alice' }), 409, 'CONFLICT');
    // The operator's people take the name from registering people too.
    await expectStatus(await h.admin.post('/users', { name: 'Oskar' }), 201);
    expectError(
      await h.people(undefined).post('/auth/register', { name: 'oskar', password: PASSWORD }),
      409,
      'CONFLICT',
    );
    // Bot users' names are not logins (D46): a bot may be called Alice.
    const owner = await makeUser(h, 'bot-owner');
    await makeBot(h, owner.id, 'Alice');
  });

  it('bad input → 400 in the error form (names: 2–32 code points, safe text, trimmed; passwords 8–256)', async () => {
    const bad: Array<[string, unknown]> = [
      ['one code point', { name: 'a', password: PASSWORD }],
      ['33 code points', { name: 'x'.repeat(33), password: PASSWORD }],
      ['control character', { name: 'bad\u0007name', password: PASSWORD }],
      ['bidi override', { name: 'evil\u202Etxt', password: PASSWORD }],
      ['zero-width joiner', { name: 'a\u200Db', password: PASSWORD }],
      ['leading space', { name: ' spaced', password: PASSWORD }],
      ['trailing space', { name: 'spaced ', password: PASSWORD }],
      ['name a number', { name: 12345, password: PASSWORD }],
      ['password too short', { name: 'shorty', password: 'seven77' }],
      ['password too long', { name: 'longy', password: 'p'.repeat(257) }],
      ['password missing', { name: 'nopass' }],
      ['unknown field', { name: 'extra', password: PASSWORD, admin: true }],
      ['invite a number', { name: 'inv', password: PASSWORD, invite: 5 }],
      ['not an object', ['x']],
    ];
    for (const [what, body] of bad)
      expectError(
        await h.people(undefined).post('/auth/register', body),
        400,
        'VALIDATION_ERROR',
        what,
      );
    // 32 code points of emoji are fine (code points, not UTF-16 units).
    await register(h, '😀'.repeat(32));
  });

  it('an invite is optional in open mode, and joins its guild when given', async () => {
    const owner = await makeUser(h, 'open-owner');
    const g = await expectStatus(
      await h.admin.post('/guilds', { name: 'Open', ownerId: owner.id }),
      201,
    );
    const code = await makeInvite(h, g.body.id, 'open-code');
    const p = await register(h, 'joiner', { invite: code });
    const mine = await expectStatus(await h.people(p.token).get('/users/@me/guilds'), 200);
    expect(mine.body).toEqual({ guilds: [{ id: g.body.id, name: 'Open', ownerId: owner.id }] });
    expectError(
      await h
        .people(undefined)
        .post('/auth/register', { name: 'joiner2', password: PASSWORD, invite: 'nope' }),
      404,
      'NOT_FOUND',
    );
  });
});

dbDescribe('D46 register with PARLEY_REGISTRATION=invite (the default)', () => {
  let h: Harness;
  const clock = new FakeClock();
  let guildId: number;
  let ownerId: number;
  beforeAll(async () => {
    h = await createHarness({ clock });
    expect(h.config.registration).toBe('invite');
    const owner = await makeUser(h, 'guild-owner');
    ownerId = owner.id;
    guildId = (await expectStatus(await h.admin.post('/guilds', { name: 'Home', ownerId }), 201))
      .body.id;
  });
  afterAll(async () => h.close());

  it('missing invite → 403; unknown, used-up or expired → 404, and nothing is created', async () => {
    const reg = (invite?: string) =>
      h.people(undefined).post('/auth/register', {
        name: 'hopeful',
        password: PASSWORD,
        ...(invite === undefined ? {} : { invite }),
      });
    expectError(await reg(), 403, 'FORBIDDEN');
    expectError(await reg('no-such-code'), 404, 'NOT_FOUND');
    await makeInvite(h, guildId, 'used-up', { maxUses: 2, uses: 2 });
    expectError(await reg('used-up'), 404, 'NOT_FOUND');
    await makeInvite(h, guildId, 'expired', { expiresAt: clock.now() - 1 });
    expectError(await reg('expired'), 404, 'NOT_FOUND');
    await makeInvite(h, guildId, 'expires-now', { expiresAt: clock.now() });
    expectError(await reg('expires-now'), 404, 'NOT_FOUND');
    const none = await h.services.domain.db
      .selectFrom('users')
      .select('id')
      .where('name', '=', 'hopeful')
      .execute();
    expect(none).toEqual([]);
  });

  it('a valid invite: 201, joins its guild (GUILD_MEMBER_ADD, GUILD_CREATE to the person), counts one use', async () => {
    const code = await makeInvite(h, guildId, 'welcome', { maxUses: 2 });
    const seen: Array<{ type: string; data: string; audience: unknown }> = [];
    const off = h.services.events.onPeople((e) => seen.push(e));
    const p = await register(h, 'Newbie', { invite: code });
    off();
    const mine = await expectStatus(await h.people(p.token).get('/users/@me/guilds'), 200);
    expect(mine.body.guilds).toEqual([{ id: guildId, name: 'Home', ownerId }]);
    const inv = await h.services.domain.db
      .selectFrom('invites')
      .select('uses')
      .where('code', '=', code)
      .executeTakeFirstOrThrow();
    expect(inv.uses).toBe(1);
    const add = seen.find((e) => e.type === 'GUILD_MEMBER_ADD');
    expect(JSON.parse(add?.data ?? 'null')).toMatchObject({
      guildId,
      user: { id: p.id, name: 'Newbie' },
      roles: [],
    });
    const create = seen.find((e) => e.type === 'GUILD_CREATE');
    expect(create?.audience).toEqual({ kind: 'users', userIds: [p.id] });
    const view = JSON.parse(create?.data ?? 'null');
    expect(view).toMatchObject({
      id: guildId,
      name: 'Home',
      ownerId,
      bots: [],
      myPermissions: DEFAULT_EVERYONE_PERMISSIONS,
    });
    // The second use is the last one: then the code is used up.
    await register(h, 'Second', { invite: code });
    expectError(
      await h
        .people(undefined)
        .post('/auth/register', { name: 'Third', password: PASSWORD, invite: code }),
      404,
      'NOT_FOUND',
    );
  });

  it('a taken name (409) does not use up the invite', async () => {
    const code = await makeInvite(h, guildId, 'once', { maxUses: 1 });
    expectError(
      await h
        .people(undefined)
        .post('/auth/register', { name: 'NEWBIE', password: PASSWORD, invite: code }),
      409,
      'CONFLICT',
    );
    await register(h, 'Fourth', { invite: code }); // still usable
  });
});

describe('D46 registration modes', () => {
  dbDescribe('PARLEY_REGISTRATION=closed', () => {
    let h: Harness;
    beforeAll(async () => {
      h = await createHarness({ env: { PARLEY_REGISTRATION: 'closed' } });
    });
    afterAll(async () => h.close());

    it('register → 403 (with or without an invite); the operator still creates people, who log in', async () => {
      expectError(
        await h.people(undefined).post('/auth/register', { name: 'someone', password: PASSWORD }),
        403,
        'FORBIDDEN',
      );
      expectError(
        await h
          .people(undefined)
          .post('/auth/register', { name: 'someone', password: PASSWORD, invite: 'x' }),
        403,
        'FORBIDDEN',
      );
      await expectStatus(await h.admin.post('/users', { name: 'Made', password: PASSWORD }), 201);
      await expectStatus(await login(h, 'made', PASSWORD), 200);
    });
  });

  dbDescribe('https public URL', () => {
    let h: Harness;
    beforeAll(async () => {
      h = await createHarness({
        env: { PARLEY_REGISTRATION: 'open', PARLEY_PUBLIC_URL: 'https://chat.example' },
      });
    });
    afterAll(async () => h.close());

    it('the session cookie is Secure (D47)', async () => {
      await register(h, 'secure');
      const r = await expectStatus(await login(h, 'secure', PASSWORD), 200);
      expect(sessionCookie(r)).toMatch(/; Secure/);
    });
  });
});

dbDescribe('D46 login and the lockout per name and address (D70)', () => {
  let h: Harness;
  const clock = new FakeClock();
  beforeAll(async () => {
    h = await createHarness({ clock, env: { PARLEY_REGISTRATION: 'open' } });
    await register(h, 'Victim');
    await register(h, 'Bystander');
  });
  afterAll(async () => h.close());

  it('200 {user, token} + cookie; the name ignores case', async () => {
    const r = await expectStatus(await login(h, 'vICTIM', PASSWORD), 200);
    expect(r.body.user).toMatchObject({ name: 'Victim', isBot: false, avatar: AVATAR });
    expect(Object.keys(r.body).sort()).toEqual(['token', 'user']);
    expect(sessionCookie(r)).toContain(r.body.token);
    await expectStatus(await h.people(r.body.token).get('/users/@me'), 200);
  });

  it('a wrong password and an unknown name get the same 401', async () => {
    const wrong = await login(h, 'Bystander', 'wrong-password');
    const unknown = await login(h, 'Nobody', 'wrong-password');
    expectError(wrong, 401, 'UNAUTHORIZED');
    expectError(unknown, 401, 'UNAUTHORIZED');
    expect(wrong.body.error.message).toBe(unknown.body.error.message);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    // Passing the window clears these for the next test.
    clock.advance(15 * 60_000 + 1);
  });

  it('6 wrong passwords lock the name FROM THAT ADDRESS: 429 with retryAfter until the window passes, correct password included; other addresses and names still work (revised by D70)', async () => {
    for (let i = 0; i < 5; i++) {
      expectError(
        await login(h, 'victim', `wrong-${i}-password`, { remoteAddress: '10.0.0.1' }),
        401,
        'UNAUTHORIZED',
      );
      clock.advance(1000);
    }
    const sixth = await login(h, 'Victim', 'wrong-6-password', { remoteAddress: '10.0.0.1' });
    expectError(sixth, 429, 'RATE_LIMIT_EXCEEDED');
    // The first failure leaves the window 15 min after it was made: 5 s have passed since.
    expect(sixth.body.error.retryAfter).toBeCloseTo(15 * 60 - 5, 3);
    expect(sixth.headers['retry-after']).toBe(String(15 * 60 - 5));
    // The correct password is refused too from that address.
    expectError(
      await login(h, 'Victim', PASSWORD, { remoteAddress: '10.0.0.1' }),
      429,
      'RATE_LIMIT_EXCEEDED',
    );
    // D70 (revises D46): the lock is per name AND address — a stranger's guesses do not lock
    // the person out from everywhere else.
    await expectStatus(await login(h, 'VICTIM', PASSWORD, { remoteAddress: '192.0.2.77' }), 200);
    // Another name from the same address logs in.
    await expectStatus(await login(h, 'Bystander', PASSWORD, { remoteAddress: '10.0.0.1' }), 200);
    // Refused attempts do not extend the lock: once the first failure leaves the window, the
    // name is open again from that address.
    clock.advance((15 * 60 - 5) * 1000 - 1);
    expectError(
      await login(h, 'Victim', PASSWORD, { remoteAddress: '10.0.0.1' }),
      429,
      'RATE_LIMIT_EXCEEDED',
    );
    clock.advance(1);
    await expectStatus(await login(h, 'Victim', PASSWORD, { remoteAddress: '10.0.0.1' }), 200);
  });

  it('a success clears the failures of the name', async () => {
    for (let i = 0; i < 4; i++)
      expectError(await login(h, 'Victim', 'nope-nope-nope'), 401, 'UNAUTHORIZED');
    await expectStatus(await login(h, 'Victim', PASSWORD), 200);
    for (let i = 0; i < 4; i++)
      expectError(await login(h, 'Victim', 'nope-nope-nope'), 401, 'UNAUTHORIZED');
    await expectStatus(await login(h, 'Victim', PASSWORD), 200);
  });

  it('parallel wrong guesses cannot pass the lock', async () => {
    await register(h, 'Target');
    const tries = await Promise.all(
      Array.from({ length: 12 }, (_, i) => login(h, 'Target', `parallel-${i}-guess`)),
    );
    const statuses = tries.map((t) => t.status);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(5);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(7);
    expectError(await login(h, 'Target', PASSWORD), 429, 'RATE_LIMIT_EXCEEDED');
    clock.advance(15 * 60_000 + 1);
  });

  it('a disabled person → 403 (with the right password only); a person without a password → 401', async () => {
    const p = await register(h, 'Sleeper');
    await h.services.domain.db
      .updateTable('users')
      .set({ disabled: 1 })
      .where('id', '=', p.id)
      .execute();
    expectError(await login(h, 'Sleeper', 'wrong-password'), 401, 'UNAUTHORIZED');
    expectError(await login(h, 'Sleeper', PASSWORD), 403, 'FORBIDDEN');
    // Their existing sessions do not work either.
    expectError(await h.people(p.token).get('/users/@me'), 401, 'UNAUTHORIZED');
    await expectStatus(await h.admin.post('/users', { name: 'NoPassword' }), 201);
    expectError(await login(h, 'nopassword', 'anything-at-all'), 401, 'UNAUTHORIZED');
  });

  it('bad login bodies → 400', async () => {
    for (const body of [
      {},
      { name: 'Victim' },
      { name: 5, password: PASSWORD },
      { name: 'Victim', password: PASSWORD, x: 1 },
      { name: '', password: PASSWORD },
    ])
      expectError(
        await h.people(undefined).post('/auth/login', body),
        400,
        'VALIDATION_ERROR',
        JSON.stringify(body),
      );
  });
});

dbDescribe('D47 sessions, cookies, logout, password change, idle expiry', () => {
  let h: Harness;
  const clock = new FakeClock();
  beforeAll(async () => {
    h = await createHarness({ clock, env: { PARLEY_REGISTRATION: 'open' } });
  });
  afterAll(async () => h.close());

  it('no session → 401 with WWW-Authenticate; a bot token on /app/v1 → 403; a garbage token → 401', async () => {
    const none = await h.people(undefined).get('/users/@me');
    expectError(none, 401, 'UNAUTHORIZED');
    expect(none.headers['www-authenticate']).toBe('Bearer');
    const owner = await makeUser(h, 'bots-owner');
    const bot = await makeBot(h, owner.id, 'robot');
    expectError(await h.people(bot.token).get('/users/@me'), 403, 'FORBIDDEN');
    expectError(await h.people(bot.token).post('/auth/logout'), 403, 'FORBIDDEN');
    expectError(await h.people('pus_nope').get('/users/@me'), 401, 'UNAUTHORIZED');
    expectError(await withCookie(h, 'pus_nope', 'GET', '/users/@me'), 401, 'UNAUTHORIZED');
  });

  it('GET /sessions lists id, createdAt, lastUsedAt, userAgent, current; DELETE ends one (its token → 401), others → 404', async () => {
    const p = await register(h, 'Multi');
    const phone = await expectStatus(
      await login(h, 'Multi', PASSWORD, { userAgent: 'PhoneApp/1.0' }),
      200,
    );
    const list = await expectStatus(await h.people(p.token).get('/sessions'), 200);
    expect(Object.keys(list.body)).toEqual(['sessions']);
    expect(list.body.sessions).toHaveLength(2);
    for (const s of list.body.sessions) {
      expect(Object.keys(s).sort()).toEqual([
        'createdAt',
        'current',
        'id',
        'lastUsedAt',
        'userAgent',
      ]);
      expect(s.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(JSON.stringify(s)).not.toContain('pus_');
    }
    const current = list.body.sessions.filter((s: { current: boolean }) => s.current);
    expect(current).toHaveLength(1);
    const other = list.body.sessions.find(
      (s: { userAgent: string }) => s.userAgent === 'PhoneApp/1.0',
    );
    expect(other.current).toBe(false);

    // Someone else cannot end it (404: not revealed), nor can a malformed id pass.
    const stranger = await register(h, 'Stranger');
    expectError(await h.people(stranger.token).delete(`/sessions/${other.id}`), 404, 'NOT_FOUND');
    expectError(await h.people(p.token).delete('/sessions/no-such-session'), 404, 'NOT_FOUND');
    expectError(await h.people(p.token).delete('/sessions/bad%20id!'), 400, 'VALIDATION_ERROR');
    await expectStatus(await h.people(phone.body.token).get('/users/@me'), 200);

    const signals: unknown[] = [];
    const off = h.services.events.onSignal((s) => signals.push(s));
    expect((await h.people(p.token).delete(`/sessions/${other.id}`)).status).toBe(204);
    off();
    expect(signals).toContainEqual({ k: 'user', userId: p.id }); // the gateway re-checks (4004)
    expectError(await h.people(phone.body.token).get('/users/@me'), 401, 'UNAUTHORIZED');
    const after = await expectStatus(await h.people(p.token).get('/sessions'), 200);
    expect(after.body.sessions.map((s: { id: string }) => s.id)).not.toContain(other.id);
  });

  it('cookie writes need Origin = the public origin (cross-site → 403); GETs do not; bearer writes do not', async () => {
    const p = await register(h, 'Cookie');
    await expectStatus(await withCookie(h, p.token, 'GET', '/users/@me'), 200);
    const body = { name: 'Cookie2' };
    expectError(await withCookie(h, p.token, 'PATCH', '/users/@me', { body }), 403, 'FORBIDDEN');
    expectError(
      await withCookie(h, p.token, 'PATCH', '/users/@me', { body, origin: 'https://evil.example' }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await withCookie(h, p.token, 'PATCH', '/users/@me', {
        body,
        origin: 'http://parley.test:8080',
      }),
      403,
      'FORBIDDEN',
    );
    // Nothing changed.
    expect((await h.people(p.token).get('/users/@me')).body.name).toBe('Cookie');
    const same = await withCookie(h, p.token, 'PATCH', '/users/@me', { body, origin: ORIGIN });
    expect(same.status, same.raw).toBe(200);
    expect(same.body.name).toBe('Cookie2');
    await expectStatus(await h.people(p.token).patch('/users/@me', { name: 'Cookie3' }), 200);
  });

  it('logout → 204, clears the cookie, and the token gets 401 (bearer and cookie)', async () => {
    const p = await register(h, 'Leaver');
    const out = await h.people(p.token).post('/auth/logout');
    expect(out.status).toBe(204);
    expect(out.raw).toBe('');
    const cleared = sessionCookie(out);
    expect(cleared).toMatch(/^parley_session=;/);
    expect(cleared).toMatch(/Expires=Thu, 01 Jan 1970|Max-Age=0/);
    expectError(await h.people(p.token).get('/users/@me'), 401, 'UNAUTHORIZED');
    expectError(await withCookie(h, p.token, 'GET', '/users/@me'), 401, 'UNAUTHORIZED');

    // Through the cookie: needs the Origin like any write.
    const r = await expectStatus(await login(h, 'Leaver', PASSWORD), 200);
    expectError(await withCookie(h, r.body.token, 'POST', '/auth/logout'), 403, 'FORBIDDEN');
    expect(
      (await withCookie(h, r.body.token, 'POST', '/auth/logout', { origin: ORIGIN })).status,
    ).toBe(204);
    expectError(await h.people(r.body.token).get('/users/@me'), 401, 'UNAUTHORIZED');
  });

  it('password change: wrong current → 403; 204 ends every OTHER session; the new password logs in, the old does not', async () => {
    const p = await register(h, 'Changer');
    const other = (await expectStatus(await login(h, 'Changer', PASSWORD), 200)).body.token;
    expectError(
      await h.people(p.token).post('/users/@me/password', {
        current: 'not-the-password',
        password: 'brand-new-password',
      }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await h.people(p.token).post('/users/@me/password', { current: PASSWORD, password: 'short' }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await h.people(p.token).post('/users/@me/password', { current: PASSWORD }),
      400,
      'VALIDATION_ERROR',
    );
    await expectStatus(await h.people(other).get('/users/@me'), 200);
    const signals: unknown[] = [];
    const off = h.services.events.onSignal((s) => signals.push(s));
    expect(
      (
        await h
          .people(p.token)
          .post('/users/@me/password', { current: PASSWORD, password: 'brand-new-password' })
      ).status,
    ).toBe(204);
    off();
    expect(signals).toContainEqual({ k: 'user', userId: p.id });
    expectError(await h.people(other).get('/users/@me'), 401, 'UNAUTHORIZED');
    await expectStatus(await h.people(p.token).get('/users/@me'), 200);
    expectError(await login(h, 'Changer', PASSWORD), 401, 'UNAUTHORIZED');
    await expectStatus(await login(h, 'Changer', 'brand-new-password'), 200);
  });

  it(`idle expiry (PARLEY_SESSION_IDLE_DAYS=30): a used session lives on, an unused one → 401 (bearer on /api/v1 too)`, async () => {
    const DAY = 86_400_000;
    const p = await register(h, 'Idler');
    const q = await register(h, 'Busy');
    // Warm the session cache first: it must not let an expired session through.
    await expectStatus(await h.people(p.token).get('/users/@me'), 200);
    clock.advance(20 * DAY);
    await expectStatus(await h.people(q.token).get('/users/@me'), 200); // Busy uses theirs
    clock.advance(10 * DAY); // Idler: exactly 30 days unused — still valid
    await expectStatus(await h.people(p.token).get('/users/@me'), 200);
    clock.advance(30 * DAY + 1);
    expectError(await h.people(p.token).get('/users/@me'), 401, 'UNAUTHORIZED');
    expectError(await h.as(p.token).get('/files/quota'), 401, 'UNAUTHORIZED');
    // Busy used theirs 40 days ago: expired too; log in again.
    expectError(await h.people(q.token).get('/users/@me'), 401, 'UNAUTHORIZED');
    const again = await expectStatus(await login(h, 'Busy', PASSWORD), 200);
    // Used every 20 days, a session never expires; lastUsedAt moves (at most once a minute).
    for (let i = 0; i < 3; i++) {
      clock.advance(20 * DAY);
      await expectStatus(await h.people(again.body.token).get('/users/@me'), 200);
    }
    const s = await expectStatus(await h.people(again.body.token).get('/sessions'), 200);
    const mine = s.body.sessions.find((x: { current: boolean }) => x.current);
    expect(mine.lastUsedAt).toBe(new Date(clock.now()).toISOString());
    // The expired session's row is gone.
    const rows = await h.services.domain.db
      .selectFrom('user_sessions')
      .select('id')
      .where('user_id', '=', p.id)
      .execute();
    expect(rows).toEqual([]);
  });

  it('a cookie-authenticated request renews the cookie when it writes the last use', async () => {
    const p = await register(h, 'Renewed');
    clock.advance(2 * 60_000);
    const r = await withCookie(h, p.token, 'GET', '/users/@me');
    expect(r.status).toBe(200);
    expect(sessionCookie(r)).toMatch(/Max-Age=2592000/);
    // Within the minute: no write, no new cookie.
    const again = await withCookie(h, p.token, 'GET', '/users/@me');
    expect(again.headers['set-cookie']).toBeUndefined();
  });
});

dbDescribe('D45 rate limits on /app/v1', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ env: { PARLEY_REGISTRATION: 'open', PARLEY_RATE_GLOBAL: '5/10' } });
  });
  afterAll(async () => h.close());

  it("register and login draw from the client address's bucket; a person's requests from their own", async () => {
    const p = await register(h, 'Limited');
    const first = await login(h, 'Limited', PASSWORD, { remoteAddress: '198.51.100.1' });
    expect(first.headers['x-ratelimit-bucket']).toBe('global');
    expect(first.headers['x-ratelimit-remaining']).toBe('9');
    const second = await login(h, 'Limited', PASSWORD, { remoteAddress: '198.51.100.1' });
    expect(second.headers['x-ratelimit-remaining']).toBe('8');
    // The person's own bucket is untouched by their address's logins.
    const me = await h.people(p.token).get('/users/@me');
    expect(me.status).toBe(200);
    expect(me.headers['x-ratelimit-remaining']).toBe('9');
    // A failed authentication is charged to the address too.
    const bad = await h.people('pus_invalid').get('/users/@me');
    expectError(bad, 401, 'UNAUTHORIZED');
    expect(bad.headers['x-ratelimit-bucket']).toBe('global');
  });
});
