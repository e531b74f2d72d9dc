import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  ADMIN_TOKEN,
  createHarness,
  dbDescribe,
  expectStatus,
  makeBot,
  makeUser,
  makeWorld,
  type Harness,
  type World,
  expectError,
} from '../helpers/harness.js';

// Acceptance 8 (issue 2), HTTP side: token reset through the operator API (D8, D41), bots per
// owner (docs/interface.md#limits: 3), and the operator API's own authentication (D41). The CLI side
// of token reset runs as a real child process in test/process/cli.test.ts.

/** Every operator route (D41) with a plausible body; ids need not exist. */
const ADMIN_ROUTES: Array<['GET' | 'POST' | 'PUT' | 'DELETE', string, unknown?]> = [
  ['POST', '/admin/v1/users', { name: 'x' }],
  ['POST', '/admin/v1/users/1/sessions'],
  ['POST', '/admin/v1/guilds', { name: 'g', ownerId: 1 }],
  ['POST', '/admin/v1/guilds/1/channels', { name: 'c' }],
  ['POST', '/admin/v1/guilds/1/roles', { name: 'r', permissions: 1 }],
  ['PUT', '/admin/v1/guilds/1/members/2', {}],
  ['DELETE', '/admin/v1/guilds/1/members/2'],
  ['PUT', '/admin/v1/channels/1/overwrites/2', { allow: 0, deny: 0 }],
  ['POST', '/admin/v1/bots', { ownerId: 1, name: 'b' }],
  ['POST', '/admin/v1/bots/1/token'],
  // Wrong methods, unknown paths and bad input: the surface does not exist, so still 404.
  ['GET', '/admin/v1/users'],
  ['DELETE', '/admin/v1/bots/1/token'],
  ['GET', '/admin/v1'],
  ['GET', '/admin/v1/'],
  ['GET', '/admin/v1/nope'],
  ['POST', '/admin/v1/users/abc/sessions'],
  ['POST', '/admin/v1/users', { name: '' }],
];

const send = (
  h: Harness,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  body: unknown,
  auth?: string,
) =>
  h.request({
    method,
    url,
    headers: {
      ...(auth === undefined ? {} : { authorization: auth }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });

dbDescribe('operator API: token reset and bots per owner', () => {
  let h: Harness;
  let w: World;
  beforeAll(async () => {
    h = await createHarness();
    w = await makeWorld(h);
  });
  afterAll(async () => h.close());

  it('POST /admin/v1/bots/:id/token: the old token is 401 on the very next request, the new one works (D8)', async () => {
    const bot = h.as(w.bot.token);
    // Warm any verification cache with the old token first.
    for (let i = 0; i < 3; i++) expect((await bot.get('/bot/me')).status).toBe(200);
    const reset = await expectStatus(await h.admin.post(`/bots/${w.bot.id}/token`), 200);
    expect(Object.keys(reset.body)).toEqual(['token']);
    expect(reset.body.token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(reset.body.token).not.toBe(w.bot.token);
    const old = await bot.get('/bot/me');
    expectError(old, 401, 'UNAUTHORIZED');
    expect(old.headers['www-authenticate']).toBe('Bearer');
    // Every endpoint refuses it, not just /bot/me.
    expectError(
      await bot.post(`/channels/${w.channelId}/messages`, { content: 'x' }),
      401,
      'UNAUTHORIZED',
    );
    const fresh = h.as(reset.body.token);
    expect((await fresh.get('/bot/me')).body.id).toBe(w.bot.id);
    expect((await fresh.post(`/channels/${w.channelId}/messages`, { content: 'x' })).status).toBe(
      200,
    );
    // A second reset retires the first new token too.
    const again = await expectStatus(await h.admin.post(`/bots/${w.bot.id}/token`), 200);
    expectError(await fresh.get('/bot/me'), 401, 'UNAUTHORIZED');
    expectError(await bot.get('/bot/me'), 401, 'UNAUTHORIZED');
    expect((await h.as(again.body.token).get('/bot/me')).status).toBe(200);
    w.bot.token = again.body.token;
  });

  it('resetting one bot’s token leaves the owner’s other bots alone', async () => {
    const owner = await makeUser(h, 'two-bots');
    const a = await makeBot(h, owner.id, 'a');
    const b = await makeBot(h, owner.id, 'b');
    await expectStatus(await h.admin.post(`/bots/${a.id}/token`), 200);
    expectError(await h.as(a.token).get('/bot/me'), 401, 'UNAUTHORIZED');
    expect((await h.as(b.token).get('/bot/me')).status).toBe(200);
  });

  it('a fourth bot for one owner → 409 CONFLICT; other owners are not affected', async () => {
    const owner = await makeUser(h, 'collector');
    for (let i = 0; i < 3; i++) await makeBot(h, owner.id, `b${i}`);
    const fourth = await h.admin.post('/bots', { ownerId: owner.id, name: 'b3' });
    expectError(fourth, 409, 'CONFLICT');
    const other = await makeUser(h, 'other-owner');
    expect((await h.admin.post('/bots', { ownerId: other.id, name: 'ok' })).status).toBe(201);
    const count = await h.services.domain.db
      .selectFrom('bots')
      .select('id')
      .where('owner_id', '=', owner.id)
      .execute();
    expect(count).toHaveLength(3);
  });

  it('concurrent creates never make a fourth bot', async () => {
    for (const already of [0, 2]) {
      const owner = await makeUser(h, `racer${already}`);
      for (let i = 0; i < already; i++) await makeBot(h, owner.id, `pre${i}`);
      const replies = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          h.admin.post('/bots', { ownerId: owner.id, name: `race${i}` }),
        ),
      );
      const created = replies.filter((r) => r.status === 201);
      expect(created).toHaveLength(3 - already);
      for (const r of replies.filter((x) => x.status !== 201)) expectError(r, 409, 'CONFLICT');
      const rows = await h.services.domain.db
        .selectFrom('bots')
        .select('id')
        .where('owner_id', '=', owner.id)
        .execute();
      expect(rows).toHaveLength(3);
      // No half-made bot: every created bot's token works.
      for (const r of created) expect((await h.as(r.body.token).get('/bot/me')).status).toBe(200);
    }
  });

  it('wrong, missing or misshaped admin credentials → 401 with WWW-Authenticate (D41, D7)', async () => {
    for (const auth of [
      undefined,
      '',
      'Bearer wrong-admin-token-0000000',
      `Bearer ${ADMIN_TOKEN}x`,
      `Bearer ${ADMIN_TOKEN.slice(0, -1)}`,
      `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}`,
      ADMIN_TOKEN,
      `Bearer ${w.bot.token}`,
      `Bearer ${w.human.token}`,
    ]) {
      for (const [method, url, body] of ADMIN_ROUTES.slice(0, 10)) {
        const r = await send(h, method, url, body, auth);
        expectError(r, 401, 'UNAUTHORIZED', `${method} ${url} with ${String(auth).slice(0, 12)}`);
        expect(r.headers['www-authenticate']).toBe('Bearer');
      }
    }
    // The refused calls created nothing.
    const users = await h.services.domain.db
      .selectFrom('users')
      .select('id')
      .where('name', '=', 'x')
      .execute();
    expect(users).toHaveLength(0);
  });

  it('the admin token is not a bot token: /api/v1 refuses it (401)', async () => {
    expectError(await h.as(ADMIN_TOKEN).get('/bot/me'), 401, 'UNAUTHORIZED');
  });
});

dbDescribe('operator API without PARLEY_ADMIN_TOKEN (D41: 404 everywhere)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness({ env: { PARLEY_ADMIN_TOKEN: '' } });
  });
  afterAll(async () => h.close());

  it('every operator route, method and credential answers 404 NOT_FOUND in the D5 form', async () => {
    expect(h.config.adminToken).toBeUndefined();
    for (const auth of [undefined, `Bearer ${ADMIN_TOKEN}`, 'Bearer ', 'Basic eDp5']) {
      for (const [method, url, body] of ADMIN_ROUTES) {
        const r = await send(h, method, url, body, auth);
        expectError(r, 404, 'NOT_FOUND', `${method} ${url}`);
        // Nothing hints that the surface exists.
        expect(r.headers['allow']).toBeUndefined();
        expect(r.headers['www-authenticate']).toBeUndefined();
      }
    }
    const users = await h.services.domain.db.selectFrom('users').select('id').execute();
    expect(users).toHaveLength(0);
  });

  it('the bot API still works (tokens come from the CLI in that setup)', async () => {
    expectError(await h.as(undefined).get('/bot/me'), 401, 'UNAUTHORIZED');
  });
});
