import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  expectError,
  expectStatus,
  makeUser,
  type Harness,
  type Reply,
} from '../helpers/harness.js';
import { login, makeInvite, ORIGIN, PASSWORD, register, withCookie } from '../helpers/people.js';
import { OidcClient } from '../../src/domain/oidc/oidc-client.js';
import { CookieJar, startIdp, throughProvider, type TestIdp } from '../helpers/oidc-idp.js';

// D69: sign-in with an OpenID provider, end to end against a real one (oidc-provider on a
// loopback port): Parley redirects there, the test fills in the provider's login and consent
// pages as a browser would, and brings the provider's redirect back to Parley's callback.

const CALLBACK = `${ORIGIN}/app/v1/auth/oidc/callback`;
let idp: TestIdp;

beforeAll(async () => {
  idp = await startIdp([CALLBACK]);
});
afterAll(async () => idp?.close());

interface Flow {
  /** the answer of /auth/oidc/start */
  start: Reply;
  /** the flow cookie Parley set (the browser's) */
  flowCookie: string;
  /** where the provider sent the browser back (Parley's callback, with code and state) */
  callbackUrl: string;
}

function cookieValue(r: Reply, name: string): string | undefined {
  const jar = new CookieJar();
  jar.take(r.headers['set-cookie']);
  return jar.cookies.get(name);
}

/** Begins a sign-in at Parley and goes through the provider's pages as `login`. */
async function begin(
  h: Harness,
  loginName: string,
  o: { invite?: string; tamper?: (u: URL) => void; abort?: boolean } = {},
): Promise<Flow> {
  const start = await h.request({
    method: 'GET',
    url: `/app/v1/auth/oidc/start${o.invite === undefined ? '' : `?invite=${o.invite}`}`,
  });
  expect(start.status, start.raw).toBe(302);
  const flowCookie = cookieValue(start, 'parley_oidc');
  expect(flowCookie).toBeDefined();
  const authorize = new URL(String(start.headers['location']));
  o.tamper?.(authorize);
  const callbackUrl = await throughProvider(authorize.href, loginName, { abort: o.abort ?? false });
  expect(callbackUrl.startsWith(CALLBACK)).toBe(true);
  return { start, flowCookie: flowCookie ?? '', callbackUrl };
}

/** Brings the provider's redirect back to Parley with a flow cookie (default: the flow's own). */
function finish(h: Harness, f: Flow, cookie: string | null = f.flowCookie): Promise<Reply> {
  const u = new URL(f.callbackUrl);
  return h.request({
    method: 'GET',
    url: u.pathname + u.search,
    headers: cookie === null ? {} : { cookie: `parley_oidc=${cookie}` },
  });
}

async function signIn(h: Harness, loginName: string, o: { invite?: string } = {}) {
  const r = await finish(h, await begin(h, loginName, o));
  expect(r.status, r.raw).toBe(302);
  const token = cookieValue(r, 'parley_session');
  return { reply: r, location: String(r.headers['location']), token };
}

async function me(h: Harness, token: string | undefined) {
  return (await expectStatus(await h.people(token).get('/users/@me'), 200)).body;
}

dbDescribe('D69 OpenID sign-in (PARLEY_REGISTRATION=open)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ env: { ...idp.env, PARLEY_REGISTRATION: 'open' } });
  });
  afterAll(async () => h?.close());

  it('GET /auth/config tells the login page about the provider', async () => {
    const r = await expectStatus(await h.people(undefined).get('/auth/config'), 200);
    expect(r.body).toEqual({
      passwordLogin: true,
      registration: 'open',
      oidc: { name: 'Test IdP', startUrl: '/app/v1/auth/oidc/start' },
    });
  });

  it('start redirects to the provider with PKCE S256, state, nonce and the registered redirect URI', async () => {
    const r = await h.request({ method: 'GET', url: '/app/v1/auth/oidc/start' });
    expect(r.status).toBe(302);
    const u = new URL(String(r.headers['location']));
    expect(u.origin).toBe(idp.issuer);
    const p = u.searchParams;
    expect(p.get('response_type')).toBe('code');
    expect(p.get('client_id')).toBe(idp.clientId);
    expect(p.get('redirect_uri')).toBe(CALLBACK);
    expect(p.get('scope')).toBe('openid profile');
    expect(p.get('code_challenge_method')).toBe('S256');
    expect(p.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(p.get('state')?.length).toBeGreaterThanOrEqual(32);
    expect(p.get('nonce')?.length).toBeGreaterThanOrEqual(32);
    const set = String(r.headers['set-cookie']);
    expect(set).toContain(`parley_oidc=${p.get('state')}`);
    expect(set).toMatch(/HttpOnly/i);
    expect(set).toMatch(/SameSite=Lax/i);
    expect(set).toMatch(/Path=\/app\/v1\/auth\/oidc/);
    expect(set).toMatch(/Max-Age=600/);
  });

  it('the first sign-in creates the person, named from preferred_username; the second signs into the same one', async () => {
    idp.usernames.set('sub-ada', 'ada.lovelace');
    const first = await signIn(h, 'sub-ada');
    expect(first.location).toBe('/');
    expect(first.token).toMatch(/^pus_/);
    const user = await me(h, first.token);
    expect(user).toMatchObject({ name: 'ada.lovelace', isBot: false });
    // D47: the same session as password login gives (listed among the person's sessions)
    const sessions = await expectStatus(await h.people(first.token).get('/sessions'), 200);
    expect(sessions.body.sessions).toHaveLength(1);

    const second = await signIn(h, 'sub-ada');
    expect(second.token).not.toBe(first.token);
    expect((await me(h, second.token)).id).toBe(user.id);
    const link = await expectStatus(await h.people(second.token).get('/users/@me/oidc'), 200);
    // created by the sign-in: no password (the settings page says so rather than asking for one)
    expect(link.body).toMatchObject({
      name: 'Test IdP',
      linked: true,
      canUnlink: false,
      hasPassword: false,
    });
  });

  it('a name collision is made unique (and the D70 rules hold for what the provider sends)', async () => {
    await makeUser(h, 'grace');
    idp.usernames.set('sub-grace-1', 'grace');
    idp.usernames.set('sub-grace-2', 'GRACE');
    idp.usernames.set('sub-odd', '\u200bx\u3164'); // invisible characters only leave "x": too short
    const a = await me(h, (await signIn(h, 'sub-grace-1')).token);
    const b = await me(h, (await signIn(h, 'sub-grace-2')).token);
    const c = await me(h, (await signIn(h, 'sub-odd')).token);
    expect(a.name).toBe('grace-2');
    expect(b.name).toBe('GRACE-3');
    expect(c.name).toBe('member');
  });

  it('a state that is not this browser’s is refused: the login page says so, no session', async () => {
    const a = await begin(h, 'sub-mallory');
    const b = await begin(h, 'sub-victim');
    // A's callback (the attacker's code and state) in a browser whose flow cookie is B's.
    for (const r of [await finish(h, a, b.flowCookie), await finish(h, a, null)]) {
      expect(r.status).toBe(302);
      expect(r.headers['location']).toBe('/login?sso_error=state');
      expect(cookieValue(r, 'parley_session')).toBeUndefined();
    }
    // a forged state with the right cookie name
    const forged = new URL(a.callbackUrl);
    forged.searchParams.set('state', 'forged-state-forged-state-forged-state');
    const r = await finish(
      h,
      { ...a, callbackUrl: forged.href },
      'forged-state-forged-state-forged-state',
    );
    expect(r.headers['location']).toBe('/login?sso_error=state');
  });

  it('a replayed callback is refused (each flow is used once)', async () => {
    const f = await begin(h, 'sub-replay');
    const ok = await finish(h, f);
    expect(ok.headers['location']).toBe('/');
    const again = await finish(h, f);
    expect(again.status).toBe(302);
    expect(again.headers['location']).toBe('/login?sso_error=state');
    expect(cookieValue(again, 'parley_session')).toBeUndefined();
  });

  it('an ID token whose nonce is not the flow’s is refused', async () => {
    // The authorization request is replayed with another nonce (the provider signs that one
    // into the ID token); state and PKCE are the flow's own, so only the nonce check stops it.
    const f = await begin(h, 'sub-nonce', {
      tamper: (u) => u.searchParams.set('nonce', 'a-nonce-from-another-sign-in-0123456789'),
    });
    const r = await finish(h, f);
    expect(r.status).toBe(302);
    expect(r.headers['location']).toBe('/login?sso_error=failed');
    expect(cookieValue(r, 'parley_session')).toBeUndefined();
    const made = await h.services.domain.db
      .selectFrom('oidc_links')
      .select('user_id')
      .where('subject', '=', 'sub-nonce')
      .execute();
    expect(made).toEqual([]);
  });

  it('a code with the wrong PKCE verifier is refused by the provider', async () => {
    // Two flows of one browser: A's code brought back under B's state fails the token exchange.
    const a = await begin(h, 'sub-pkce');
    const b = await begin(h, 'sub-pkce');
    const mixed = new URL(a.callbackUrl);
    mixed.searchParams.set('state', new URL(b.callbackUrl).searchParams.get('state') ?? '');
    const r = await finish(h, { ...a, callbackUrl: mixed.href }, b.flowCookie);
    expect(r.headers['location']).toBe('/login?sso_error=failed');
  });

  it('the person refusing at the provider ends on the login page with "denied"', async () => {
    const f = await begin(h, 'sub-no', { abort: true });
    expect(new URL(f.callbackUrl).searchParams.get('error')).toBe('access_denied');
    const r = await finish(h, f);
    expect(r.headers['location']).toBe('/login?sso_error=denied');
  });

  it('link from settings, sign in with the provider, unlink (refused while it is the only way in)', async () => {
    const p = await register(h, 'Linus');
    const before = await expectStatus(await h.people(p.token).get('/users/@me/oidc'), 200);
    expect(before.body).toEqual({
      name: 'Test IdP',
      linked: false,
      linkedAt: null,
      canUnlink: false,
      hasPassword: true,
    });
    // D47: a cookie-authenticated write needs the site's Origin
    const refused = await withCookie(h, p.token, 'POST', '/users/@me/oidc');
    expect(refused.status).toBe(403);
    const started = await expectStatus(
      await withCookie(h, p.token, 'POST', '/users/@me/oidc', { origin: ORIGIN }),
      200,
    );
    const flowCookie = cookieValue(started, 'parley_oidc') ?? '';
    const callbackUrl = await throughProvider(started.body.url, 'sub-linus');
    const done = await finish(h, { start: started, flowCookie, callbackUrl });
    expect(done.headers['location']).toBe('/settings?sso=linked');
    expect(cookieValue(done, 'parley_session')).toBeUndefined(); // linking is not a new sign-in
    const after = await expectStatus(await h.people(p.token).get('/users/@me/oidc'), 200);
    expect(after.body).toMatchObject({ linked: true, canUnlink: true, hasPassword: true });
    expect(Date.parse(after.body.linkedAt)).toBeGreaterThan(0);

    const viaIdp = await signIn(h, 'sub-linus');
    expect((await me(h, viaIdp.token)).id).toBe(p.id);

    // Someone else's provider account cannot be linked to a second person.
    const q = await register(h, 'Quinn');
    const s2 = await expectStatus(await h.people(q.token).post('/users/@me/oidc'), 200);
    const cb2 = await throughProvider(s2.body.url, 'sub-linus');
    const taken = await finish(h, {
      start: s2,
      flowCookie: cookieValue(s2, 'parley_oidc') ?? '',
      callbackUrl: cb2,
    });
    expect(taken.headers['location']).toBe('/settings?sso_error=taken');

    await expectStatus(await h.people(p.token).delete('/users/@me/oidc'), 204);
    expect((await h.people(p.token).get('/users/@me/oidc')).body.linked).toBe(false);
    expect((await h.people(p.token).delete('/users/@me/oidc')).status).toBe(404);
    // now the provider's sub-linus is nobody's: a first sign-in makes a new person
    const fresh = await signIn(h, 'sub-linus');
    expect((await me(h, fresh.token)).id).not.toBe(p.id);

    // A person the provider created has no password: unlinking would lock them out → 409.
    const ada = await signIn(h, 'sub-ada');
    const r = await h.people(ada.token).delete('/users/@me/oidc');
    expectError(r, 409, 'CONFLICT');
    expect(r.body.error.message).toMatch(/no way to sign in/);
    // once the operator has set a password, the person may unlink
    const adaId = (await me(h, ada.token)).id;
    await expectStatus(await h.admin.patch(`/users/${adaId}`, { password: PASSWORD }), 200);
    const ada2 = await signIn(h, 'sub-ada'); // (setting a password ends the person's sessions)
    expect((await h.people(ada2.token).get('/users/@me/oidc')).body.canUnlink).toBe(true);
    await expectStatus(await h.people(ada2.token).delete('/users/@me/oidc'), 204);
  });

  it('a disabled person cannot sign in with the provider', async () => {
    const s = await signIn(h, 'sub-off');
    const id = (await me(h, s.token)).id;
    await expectStatus(await h.admin.patch(`/users/${id}`, { disabled: true }), 200);
    const again = await finish(h, await begin(h, 'sub-off'));
    expect(again.headers['location']).toBe('/login?sso_error=disabled');
  });

  it('a deleted person’s link goes with them: the provider account then makes a new person', async () => {
    const s = await signIn(h, 'sub-gone');
    const id = (await me(h, s.token)).id;
    await expectStatus(await h.admin.delete(`/users/${id}`), 204);
    const links = await h.services.domain.db
      .selectFrom('oidc_links')
      .select('user_id')
      .where('subject', '=', 'sub-gone')
      .execute();
    expect(links).toEqual([]);
    const again = await signIn(h, 'sub-gone');
    expect((await me(h, again.token)).id).not.toBe(id);
  });
});

dbDescribe('D69 OpenID sign-in with PARLEY_REGISTRATION=invite', () => {
  let h: Harness;
  let guildId: number;
  beforeAll(async () => {
    h = await createHarness({ env: idp.env });
    const owner = await makeUser(h, 'owner');
    const g = await expectStatus(
      await h.admin.post('/guilds', { name: 'Club', ownerId: owner.id }),
      201,
    );
    guildId = Number(g.body.id);
    await makeInvite(h, guildId, 'club-invite', { maxUses: 1 });
  });
  afterAll(async () => h?.close());

  it('a first sign-in without an invite is refused; with one it creates the person, who joins its guild', async () => {
    const none = await finish(h, await begin(h, 'sub-ivy'));
    expect(none.headers['location']).toBe('/login?sso_error=invite_required');
    expect(cookieValue(none, 'parley_session')).toBeUndefined();

    const bad = await finish(h, await begin(h, 'sub-ivy', { invite: 'nope' }));
    expect(bad.headers['location']).toBe('/login?sso_error=invite_invalid');

    const ok = await signIn(h, 'sub-ivy', { invite: 'club-invite' });
    expect(ok.location).toBe(`/g/${guildId}`);
    const guilds = await expectStatus(await h.people(ok.token).get('/users/@me/guilds'), 200);
    expect(guilds.body.guilds.map((g: { id: number }) => g.id)).toEqual([guildId]);
    // the invite (max 1 use) is used up
    const used = await finish(h, await begin(h, 'sub-other', { invite: 'club-invite' }));
    expect(used.headers['location']).toBe('/login?sso_error=invite_invalid');
    // signing in again needs no invite
    const again = await signIn(h, 'sub-ivy');
    expect(again.location).toBe('/');
    // someone who has an account and brings an invite lands on its page (to join, or not)
    await makeInvite(h, guildId, 'club-again');
    const withInvite = await signIn(h, 'sub-ivy', { invite: 'club-again' });
    expect(withInvite.location).toBe('/invite/club-again');
    expect((await me(h, withInvite.token)).id).toBe((await me(h, ok.token)).id);
  });
});

dbDescribe('D69 PARLEY_PASSWORD_LOGIN=false', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({
      env: { ...idp.env, PARLEY_PASSWORD_LOGIN: 'false', PARLEY_REGISTRATION: 'open' },
    });
  });
  afterAll(async () => h?.close());

  it('password login and registration answer 403 FORBIDDEN; the provider still signs people in', async () => {
    await makeUser(h, 'pat');
    await h.services.domain.db
      .updateTable('users')
      .set({ password_hash: null })
      .where('name', '=', 'pat')
      .execute();
    const l = await login(h, 'pat', PASSWORD);
    expectError(l, 403, 'FORBIDDEN');
    expect(l.body.error.message).toMatch(/Password login is off.*Test IdP/);
    const r = await h
      .people(undefined)
      .post('/auth/register', { name: 'Newbie', password: PASSWORD });
    expectError(r, 403, 'FORBIDDEN');
    const cfg = await h.people(undefined).get('/auth/config');
    expect(cfg.body.passwordLogin).toBe(false);
    const s = await signIn(h, 'sub-pw-off');
    expect((await me(h, s.token)).name).toBe('sub-pw-off');
    // with passwords off, unlinking is never allowed
    const link = await h.people(s.token).get('/users/@me/oidc');
    expect(link.body.canUnlink).toBe(false);
    expect((await h.people(s.token).delete('/users/@me/oidc')).status).toBe(409);
  });
});

dbDescribe('D69 without a provider, or with one that is down', () => {
  let plain: Harness;
  let down: Harness;
  beforeAll(async () => {
    plain = await createHarness();
    // the server starts although its provider does not answer (a closed loopback port)
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    down = await createHarness({
      env: { ...idp.env, PARLEY_OIDC_ISSUER: `http://127.0.0.1:${port}` },
    });
  });
  afterAll(async () => {
    await plain?.close();
    await down?.close();
  });

  it('no provider: config says null, the routes answer 404 in the D5 form', async () => {
    const cfg = await expectStatus(await plain.people(undefined).get('/auth/config'), 200);
    expect(cfg.body).toEqual({ passwordLogin: true, registration: 'invite', oidc: null });
    const r = await plain.request({ method: 'GET', url: '/app/v1/auth/oidc/start' });
    expectError(r, 404, 'NOT_FOUND');
    for (const url of ['/users/@me/oidc']) {
      const u = await makeUser(plain, `someone`);
      expectError(await plain.people(u.token).get(url), 404, 'NOT_FOUND');
      expectError(await plain.people(u.token).post(url), 404, 'NOT_FOUND');
      expectError(await plain.people(u.token).delete(url), 404, 'NOT_FOUND');
    }
  });

  it('a provider that is down: sign-in ends on the login page with "unavailable", never a 500', async () => {
    const r = await down.request({ method: 'GET', url: '/app/v1/auth/oidc/start' });
    expect(r.status).toBe(302);
    expect(r.headers['location']).toBe('/login?sso_error=unavailable');
    const cb = await down.request({
      method: 'GET',
      url: '/app/v1/auth/oidc/callback?code=x&state=y',
      headers: { cookie: 'parley_oidc=y' },
    });
    expect(cb.status).toBe(302);
    expect(cb.headers['location']).toBe('/login?sso_error=state');
  });

  it('discovery is tried again once the provider answers: no restart needed', async () => {
    const port = Number(new URL(down.config.oidcIssuer ?? '').port);
    const warnings: string[] = [];
    const client = new OidcClient(down.config, (l) => warnings.push(l), 0);
    await expect(client.configuration()).rejects.toThrow();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/discovery failed .*ECONNREFUSED.*retried on the next sign-in/);
    const late = await startIdp([CALLBACK], port);
    try {
      const config = await client.configuration();
      expect(config.serverMetadata().issuer).toBe(late.issuer);
      // the server's own client too: its next sign-in reaches the provider
      await expect
        .poll(
          async () =>
            (await down.request({ method: 'GET', url: '/app/v1/auth/oidc/start' })).headers[
              'location'
            ],
          { timeout: 15_000, interval: 500 },
        )
        .toMatch(new RegExp(`^${late.issuer}/auth\\?`));
    } finally {
      await late.close();
    }
  });
});
