import { afterAll, beforeAll, expect, it } from 'vitest';
import { FakeClock } from '../helpers/clock.js';
import {
  createHarness,
  dbDescribe,
  expectError,
  expectStatus,
  makeBot,
  type Harness,
} from '../helpers/harness.js';
import {
  appAs,
  makeAppGuild,
  makePerson,
  PeopleEvents,
  type AppCaller,
} from '../helpers/guild-admin.js';

// D49 invites: created and listed by administrators, previewed without a session, accepted by
// people (GUILD_MEMBER_ADD for bots, GUILD_CREATE for the person); unknown, used-up or expired
// invites are 404; a banned person is refused (403); uses never pass maxUses, also at once.
type Person = { id: number; token: string; app: AppCaller };
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

dbDescribe('invites (D49)', () => {
  let h: Harness;
  let clock: FakeClock;
  let ev: PeopleEvents;
  let owner: Person;
  let guest: Person;

  beforeAll(async () => {
    clock = new FakeClock(Date.now());
    h = await createHarness({
      clock,
      env: { PARLEY_WEBHOOK_ALLOW_INSECURE: 'true', PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true' },
    });
    ev = new PeopleEvents(h);
    owner = await makePerson(h, 'owner');
    guest = await makePerson(h, 'guest');
  });
  afterAll(async () => {
    ev.stop();
    await h.close();
  });

  it('create → 201 Invite (unguessable code, url on the public origin); list; delete', async () => {
    const g = await makeAppGuild(owner, 'Invited');
    const a = await expectStatus(await owner.app.post(`/guilds/${g.id}/invites`, {}), 201);
    expect(a.body).toStrictEqual({
      code: a.body.code,
      guildId: g.id,
      url: `http://parley.test/invite/${a.body.code}`,
      uses: 0,
      maxUses: null,
      expiresAt: null,
    });
    expect(a.body.code).toMatch(/^[A-Za-z0-9]{12}$/);
    // No body at all is the same as {} (D44).
    const none = await expectStatus(await owner.app.post(`/guilds/${g.id}/invites`), 201);
    expect(none.body.maxUses).toBeNull();
    const b = await expectStatus(
      await owner.app.post(`/guilds/${g.id}/invites`, { maxUses: 3, expiresInS: 3600 }),
      201,
    );
    expect(b.body.maxUses).toBe(3);
    expect(b.body.expiresAt).toBe(new Date(clock.now() + 3_600_000).toISOString());
    expect(b.body.expiresAt).toMatch(ISO_MS);
    // Codes differ (random).
    const codes = new Set([a.body.code, none.body.code, b.body.code]);
    expect(codes.size).toBe(3);

    const list = await expectStatus(await owner.app.get(`/guilds/${g.id}/invites`), 200);
    expect(Object.keys(list.body)).toEqual(['invites']);
    expect(list.body.invites.map((i: { code: string }) => i.code).sort()).toEqual(
      [...codes].sort(),
    );
    expect(list.body.invites).toContainEqual(b.body);

    await expectStatus(await owner.app.delete(`/invites/${a.body.code}`), 204);
    expectError(await owner.app.delete(`/invites/${a.body.code}`), 404, 'NOT_FOUND');
    expectError(await appAs(h, undefined).get(`/invites/${a.body.code}`), 404, 'NOT_FOUND');
    // Someone without ADMINISTRATOR in that guild cannot delete it; unknown guild 404.
    expectError(await guest.app.delete(`/invites/${b.body.code}`), 403, 'FORBIDDEN');
    expectError(await owner.app.post('/guilds/9007199254740991/invites', {}), 404, 'NOT_FOUND');
    // Bad codes are refused as input; bad bodies too.
    expectError(await appAs(h, undefined).get('/invites/has%20space'), 400, 'VALIDATION_ERROR');
    for (const body of [
      { maxUses: 0 },
      { maxUses: 'one' },
      { maxUses: 1.5 },
      { expiresInS: 1 },
      { expiresInS: 10 ** 12 },
      { other: 1 },
      [],
    ])
      expectError(
        await owner.app.post(`/guilds/${g.id}/invites`, body),
        400,
        'VALIDATION_ERROR',
        JSON.stringify(body),
      );
  });

  it('preview needs no session: {code, guild:{id, name, memberCount}}', async () => {
    const g = await makeAppGuild(owner, 'Preview me');
    const inv = await expectStatus(await owner.app.post(`/guilds/${g.id}/invites`, {}), 201);
    const r = await expectStatus(await appAs(h, undefined).get(`/invites/${inv.body.code}`), 200);
    expect(r.body).toStrictEqual({
      code: inv.body.code,
      guild: { id: g.id, name: 'Preview me', memberCount: 1 },
    });
    // D45: it draws from the address's bucket and carries the rate-limit headers... when limits
    // are on; here they are off, so only the shape is checked. Unknown code: 404.
    expectError(await appAs(h, undefined).get('/invites/AAAAAAAAAAAA'), 404, 'NOT_FOUND');
  });

  it('accept → 200 {guildId}: joins (GUILD_MEMBER_ADD, GUILD_CREATE); again → 200, nothing more', async () => {
    const g = await makeAppGuild(owner, 'Join me');
    const bot = await makeBot(h, owner.id, 'watcher');
    await expectStatus(await h.admin.put(`/guilds/${g.id}/members/${bot.userId}`, {}), 201);
    await expectStatus(
      await h.admin.put(`/bots/${bot.id}/webhook`, { url: 'http://127.0.0.1:9/hook' }),
      200,
    );
    const inv = await expectStatus(
      await owner.app.post(`/guilds/${g.id}/invites`, { maxUses: 5 }),
      201,
    );
    const p = await makePerson(h, 'joiner');
    expectError(await p.app.get(`/guilds/${g.id}`), 403, 'FORBIDDEN');
    ev.clear();
    const r = await expectStatus(await p.app.post(`/invites/${inv.body.code}/accept`), 200);
    expect(r.body).toStrictEqual({ guildId: g.id });
    const view = await expectStatus(await p.app.get(`/guilds/${g.id}`), 200);
    const created = ev.toUser('GUILD_CREATE', p.id);
    expect(created).toHaveLength(1);
    expect(created[0]?.data).toStrictEqual(view.body);
    expect(view.body.bots).toEqual([bot.userId]);
    const adds = async () =>
      (
        await h.services.domain.db
          .selectFrom('webhook_deliveries')
          .select('body')
          .where('bot_id', '=', bot.id)
          .where('event_type', '=', 'GUILD_MEMBER_ADD')
          .execute()
      ).map((row) => JSON.parse(row.body).data);
    expect(await adds()).toEqual([
      {
        guildId: g.id,
        user: { id: p.id, name: 'joiner', avatar: 'http://parley.test/cdn/avatars/default.png' },
        roles: [],
        joinedAt: expect.stringMatching(ISO_MS),
      },
    ]);
    // Already a member: the same answer, no second GUILD_MEMBER_ADD, no use counted.
    ev.clear();
    const again = await expectStatus(await p.app.post(`/invites/${inv.body.code}/accept`), 200);
    expect(again.body).toStrictEqual({ guildId: g.id });
    expect(await adds()).toHaveLength(1);
    expect(ev.all).toEqual([]);
    const listed = await expectStatus(await owner.app.get(`/guilds/${g.id}/invites`), 200);
    expect(listed.body.invites[0].uses).toBe(1);
    const preview = await expectStatus(
      await appAs(h, undefined).get(`/invites/${inv.body.code}`),
      200,
    );
    expect(preview.body.guild.memberCount).toBe(3);
    // The new member uses the guild like any other (the bots' API).
    await expectStatus(
      await h.as(p.token).post(`/channels/${g.generalId}/messages`, { content: 'hi all' }),
      200,
    );
    // Accept needs a session.
    expectError(
      await appAs(h, undefined).post(`/invites/${inv.body.code}/accept`),
      401,
      'UNAUTHORIZED',
    );
  });

  it('used up → 404 (preview and accept); expired → 404', async () => {
    const g = await makeAppGuild(owner, 'Limited');
    const once = await expectStatus(
      await owner.app.post(`/guilds/${g.id}/invites`, { maxUses: 1 }),
      201,
    );
    const a = await makePerson(h, 'first');
    const b = await makePerson(h, 'second');
    await expectStatus(await a.app.post(`/invites/${once.body.code}/accept`), 200);
    expectError(await b.app.post(`/invites/${once.body.code}/accept`), 404, 'NOT_FOUND');
    expectError(await appAs(h, undefined).get(`/invites/${once.body.code}`), 404, 'NOT_FOUND');
    expectError(await b.app.get(`/guilds/${g.id}`), 403, 'FORBIDDEN');

    const timed = await expectStatus(
      await owner.app.post(`/guilds/${g.id}/invites`, { expiresInS: 60 }),
      201,
    );
    await expectStatus(await appAs(h, undefined).get(`/invites/${timed.body.code}`), 200);
    clock.advance(59_999);
    await expectStatus(await appAs(h, undefined).get(`/invites/${timed.body.code}`), 200);
    clock.advance(1);
    expectError(await appAs(h, undefined).get(`/invites/${timed.body.code}`), 404, 'NOT_FOUND');
    expectError(await b.app.post(`/invites/${timed.body.code}/accept`), 404, 'NOT_FOUND');
    expectError(await b.app.get(`/guilds/${g.id}`), 403, 'FORBIDDEN');
  });

  it('banned → 403 on accept; unbanned → may join again', async () => {
    const g = await makeAppGuild(owner, 'Strict');
    const inv = await expectStatus(await owner.app.post(`/guilds/${g.id}/invites`, {}), 201);
    const p = await makePerson(h, 'troll');
    await expectStatus(await p.app.post(`/invites/${inv.body.code}/accept`), 200);
    await expectStatus(await owner.app.put(`/guilds/${g.id}/bans/${p.id}`), 204);
    expectError(await p.app.get(`/guilds/${g.id}`), 403, 'FORBIDDEN');
    expectError(await p.app.post(`/invites/${inv.body.code}/accept`), 403, 'FORBIDDEN');
    expectError(await p.app.get(`/guilds/${g.id}`), 403, 'FORBIDDEN');
    await expectStatus(await owner.app.delete(`/guilds/${g.id}/bans/${p.id}`), 204);
    await expectStatus(await p.app.post(`/invites/${inv.body.code}/accept`), 200);
    await expectStatus(await p.app.get(`/guilds/${g.id}`), 200);
  });

  it('a ban racing an accept never leaves a banned member', async () => {
    const g = await makeAppGuild(owner, 'Racy');
    const inv = await expectStatus(await owner.app.post(`/guilds/${g.id}/invites`, {}), 201);
    // D70: a ban names only someone the banner knows — each racer shares another guild with the
    // owner first, so the ban is valid whether it comes before or after the accept.
    const lobby = await makeAppGuild(owner, 'Lobby');
    const lobbyInvite = await expectStatus(
      await owner.app.post(`/guilds/${lobby.id}/invites`, {}),
      201,
    );
    for (let i = 0; i < 8; i++) {
      const p = await makePerson(h, `racer-${i}`);
      await expectStatus(await p.app.post(`/invites/${lobbyInvite.body.code}/accept`), 200);
      const [accepted, banned] = await Promise.all([
        p.app.post(`/invites/${inv.body.code}/accept`),
        owner.app.put(`/guilds/${g.id}/bans/${p.id}`),
      ]);
      expect(banned.status, banned.raw).toBe(204);
      expect([200, 403]).toContain(accepted.status);
      // Whatever the order, the ban holds: not a member, and a retry is refused.
      expectError(await p.app.get(`/guilds/${g.id}`), 403, 'FORBIDDEN');
      expectError(await p.app.post(`/invites/${inv.body.code}/accept`), 403, 'FORBIDDEN');
    }
  });

  it('concurrent accepts never pass maxUses', async () => {
    const g = await makeAppGuild(owner, 'Crowded');
    const inv = await expectStatus(
      await owner.app.post(`/guilds/${g.id}/invites`, { maxUses: 3 }),
      201,
    );
    const people = await Promise.all(
      Array.from({ length: 10 }, (_, i) => makePerson(h, `rush-${i}`)),
    );
    const answers = await Promise.all(
      people.map((p) => p.app.post(`/invites/${inv.body.code}/accept`)),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 200, 200, 404, 404, 404, 404, 404, 404, 404]);
    for (const a of answers) if (a.status === 404) expectError(a, 404, 'NOT_FOUND');
    const row = await h.services.domain.db
      .selectFrom('invites')
      .select('uses')
      .where('code', '=', inv.body.code)
      .executeTakeFirstOrThrow();
    expect(row.uses).toBe(3);
    const count = await expectStatus(await owner.app.get(`/guilds/${g.id}`), 200);
    expect(count.body.id).toBe(g.id);
    const members = await expectStatus(await h.as(owner.token).get(`/guilds/${g.id}/members`), 200);
    expect(members.body.members).toHaveLength(4);
    // The same person accepting many times at once joins once.
    const twin = await makePerson(h, 'twin');
    const open = await expectStatus(await owner.app.post(`/guilds/${g.id}/invites`, {}), 201);
    const same = await Promise.all(
      Array.from({ length: 5 }, () => twin.app.post(`/invites/${open.body.code}/accept`)),
    );
    expect(same.map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);
    const used = await h.services.domain.db
      .selectFrom('invites')
      .select('uses')
      .where('code', '=', open.body.code)
      .executeTakeFirstOrThrow();
    expect(used.uses).toBe(1);
  });
});

// D45: the preview takes no session: it draws from the client address's bucket and carries the
// rate-limit headers; a session's own bucket is not charged for it.
dbDescribe('invite preview rate limit (D45, D26)', () => {
  let h: Harness;
  afterAll(async () => h.close());

  it('the address pays: X-RateLimit-* headers, 429 past the burst', async () => {
    // A clock that stands still: no token comes back while the test runs, however slow.
    h = await createHarness({
      clock: new FakeClock(Date.now()),
      env: { PARLEY_RATE_GLOBAL: '1/3' },
    });
    const owner = await makePerson(h, 'owner');
    const g = await makeAppGuild(owner, 'Limited');
    const inv = await expectStatus(await owner.app.post(`/guilds/${g.id}/invites`, {}), 201);
    const anon = appAs(h, undefined);
    const first = await expectStatus(await anon.get(`/invites/${inv.body.code}`), 200);
    expect(first.headers['x-ratelimit-bucket']).toBe('global');
    expect(first.headers['x-ratelimit-limit']).toBe('3');
    expect(first.headers['x-ratelimit-remaining']).toBe('2');
    await expectStatus(await anon.get(`/invites/${inv.body.code}`), 200);
    await expectStatus(await anon.get(`/invites/${inv.body.code}`), 200);
    const refused = await anon.get(`/invites/${inv.body.code}`);
    expectError(refused, 429, 'RATE_LIMIT_EXCEEDED');
    expect(refused.body.error.retryAfter).toBeGreaterThan(0);
    // The person's own bucket is another one, untouched by the previews: its third request passes.
    const mine = await expectStatus(await owner.app.get(`/guilds/${g.id}`), 200);
    expect(mine.headers['x-ratelimit-remaining']).toBe('0');
    expectError(await owner.app.get(`/guilds/${g.id}`), 429, 'RATE_LIMIT_EXCEEDED');
  });
});
