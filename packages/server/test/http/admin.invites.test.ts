import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  expectError,
  expectStatus,
  makeUser,
  type Harness,
} from '../helpers/harness.js';

// D52: invites and disabling people through the operator API (schema 0006).
dbDescribe('operator API: invites and disabled people (D49, D52)', () => {
  let h: Harness;
  let guildId: number;
  beforeAll(async () => {
    h = await createHarness();
    const owner = await makeUser(h, 'owner');
    guildId = (
      await expectStatus(await h.admin.post('/guilds', { name: 'G', ownerId: owner.id }), 201)
    ).body.id;
  });
  afterAll(async () => h.close());

  it('POST /guilds/:id/invites → 201 {code, guildId, url, uses, maxUses, expiresAt}', async () => {
    const open = await expectStatus(await h.admin.post(`/guilds/${guildId}/invites`), 201);
    expect(Object.keys(open.body).sort()).toEqual(
      ['code', 'expiresAt', 'guildId', 'maxUses', 'url', 'uses'].sort(),
    );
    expect(open.body).toMatchObject({ guildId, uses: 0, maxUses: null, expiresAt: null });
    expect(open.body.code).toMatch(/^[A-Za-z0-9_-]{6,}$/);
    expect(open.body.url).toBe(`http://parley.test/invite/${open.body.code}`);

    const before = Date.now();
    const limited = await expectStatus(
      await h.admin.post(`/guilds/${guildId}/invites`, { maxUses: 5, expiresInS: 3600 }),
      201,
    );
    expect(limited.body.maxUses).toBe(5);
    const expires = Date.parse(limited.body.expiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000);

    for (const body of [{ maxUses: 0 }, { expiresInS: 1 }, { nope: true }, { maxUses: '5' }])
      expectError(
        await h.admin.post(`/guilds/${guildId}/invites`, body),
        400,
        'VALIDATION_ERROR',
        JSON.stringify(body),
      );
    expectError(await h.admin.post('/guilds/999999999/invites'), 404, 'NOT_FOUND');

    const list = await expectStatus(await h.admin.get(`/guilds/${guildId}/invites`), 200);
    expect(list.body.invites.map((i: { code: string }) => i.code).sort()).toEqual(
      [open.body.code, limited.body.code].sort(),
    );
  });

  it('GET / PATCH / DELETE /invites/:code', async () => {
    const inv = await expectStatus(await h.admin.post(`/guilds/${guildId}/invites`), 201);
    const code = inv.body.code as string;
    expect((await expectStatus(await h.admin.get(`/invites/${code}`), 200)).body).toEqual(inv.body);
    const p = await expectStatus(await h.admin.patch(`/invites/${code}`, { maxUses: 2 }), 200);
    expect(p.body.maxUses).toBe(2);
    const q = await expectStatus(
      await h.admin.patch(`/invites/${code}`, { maxUses: null, expiresInS: 120 }),
      200,
    );
    expect(q.body.maxUses).toBeNull();
    expect(q.body.expiresAt).not.toBeNull();
    expectError(await h.admin.patch(`/invites/${code}`, {}), 400, 'VALIDATION_ERROR');
    await expectStatus(await h.admin.delete(`/invites/${code}`), 204);
    expectError(await h.admin.get(`/invites/${code}`), 404, 'NOT_FOUND');
    expectError(await h.admin.delete(`/invites/${code}`), 404, 'NOT_FOUND');
    expectError(await h.admin.get('/invites/bad%20code'), 400, 'VALIDATION_ERROR');
  });

  it('deleting the guild takes its invites with it', async () => {
    const owner = await makeUser(h, 'temp-owner');
    const g = await expectStatus(
      await h.admin.post('/guilds', { name: 'T', ownerId: owner.id }),
      201,
    );
    const inv = await expectStatus(await h.admin.post(`/guilds/${g.body.id}/invites`), 201);
    await expectStatus(await h.admin.delete(`/guilds/${g.body.id}`), 204);
    expectError(await h.admin.get(`/invites/${inv.body.code}`), 404, 'NOT_FOUND');
  });

  it('PATCH {disabled:true}: every session ends at once (401), the user reads disabled; enabling again', async () => {
    const u = await makeUser(h, 'troll');
    const second = await expectStatus(await h.admin.post(`/users/${u.id}/sessions`), 201);
    expect((await h.as(u.token).get('/bot/me')).status).toBe(403); // a person: authenticated
    const r = await expectStatus(await h.admin.patch(`/users/${u.id}`, { disabled: true }), 200);
    expect(r.body).toMatchObject({ disabled: true, sessions: 0 });
    expectError(await h.as(u.token).get('/bot/me'), 401, 'UNAUTHORIZED');
    expectError(await h.as(second.body.token).get('/bot/me'), 401, 'UNAUTHORIZED');
    const listed = await h.admin.get('/users?q=troll');
    expect(listed.body.items[0].disabled).toBe(true);
    // D52: no session for a disabled person, not even from the operator.
    expectError(await h.admin.post(`/users/${u.id}/sessions`), 403, 'FORBIDDEN');
    const back = await expectStatus(
      await h.admin.patch(`/users/${u.id}`, { disabled: false }),
      200,
    );
    expect(back.body.disabled).toBe(false);
    await expectStatus(await h.admin.post(`/users/${u.id}/sessions`), 201);
    const bot = await expectStatus(await h.admin.post('/bots', { ownerId: u.id, name: 'b' }), 201);
    expectError(
      await h.admin.patch(`/users/${bot.body.bot.botUser.id}`, { disabled: true }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('PATCH name: a name another person holds (ignoring case) → 409 (D46)', async () => {
    const a = await makeUser(h, 'Unique');
    const b = await makeUser(h, 'other');
    await expectStatus(await h.admin.patch(`/users/${a.id}`, { name: 'Unique Name' }), 200);
    expectError(await h.admin.patch(`/users/${b.id}`, { name: 'unique NAME' }), 409, 'CONFLICT');
    await expectStatus(await h.admin.patch(`/users/${a.id}`, { name: 'UNIQUE name' }), 200);
  });
});
