import { afterAll, beforeAll, expect, it } from 'vitest';
import { WebhookWorker } from '../../src/webhooks/worker.js';
import { dbDescribe, expectError, expectStatus, join, type Harness } from '../helpers/harness.js';
import { startLiveServer, type LiveServer } from '../helpers/live-server.js';
import { ORIGIN, register, type Person } from '../helpers/people.js';
import { Receiver } from '../helpers/receiver.js';

// D50: bot owners on /app/v1 — their bots, tokens, webhooks with per-try detail (against a real
// local receiver), quota, adding a bot to a guild, deleting a bot (gateway 4004, member removal).
const AVATAR = `${ORIGIN}/cdn/avatars/default.png`;

dbDescribe('D50 bot owners', () => {
  let live: LiveServer;
  let h: Harness;
  let worker: WebhookWorker;
  let receiver: Receiver;
  let alice: Person; // owns bots and the guild
  let bob: Person; // a member without ADMINISTRATOR
  let carl: Person; // someone else
  let guildId: number;
  const bots: Array<{ id: number; userId: number; token: string }> = [];

  beforeAll(async () => {
    live = await startLiveServer({
      env: {
        PARLEY_REGISTRATION: 'open',
        PARLEY_WEBHOOK_ALLOW_INSECURE: 'true',
        PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true',
        PARLEY_WEBHOOK_RETRY_S: '0.1,0.1,0.1',
      },
    });
    h = live.h;
    worker = new WebhookWorker(h.services.domain, { pollMs: 20, timeoutMs: 1500 });
    worker.start();
    receiver = await new Receiver().listen();
    alice = await register(h, 'Alice');
    bob = await register(h, 'Bob');
    carl = await register(h, 'Carl');
    guildId = (
      await expectStatus(await h.admin.post('/guilds', { name: 'Lab', ownerId: alice.id }), 201)
    ).body.id;
    await join(h, guildId, bob.id);
  });
  afterAll(async () => {
    await worker.stop();
    await receiver.close();
    await live.close();
  });

  it("POST /bots → 201 {bot, token, webhookSecret}; at most 3 (4th → 409); GET /bots lists only one's own", async () => {
    const me = h.people(alice.token);
    for (const name of ['one', 'two', 'three']) {
      const r = await me.post('/bots', { name, description: `bot ${name}` });
      expect(r.status, r.raw).toBe(201);
      expect(Object.keys(r.body).sort()).toEqual(['bot', 'token', 'webhookSecret']);
      expect(r.body.bot).toEqual({
        id: r.body.bot.id,
        name,
        avatar: AVATAR,
        description: `bot ${name}`,
        botUser: { id: r.body.bot.botUser.id, name, isBot: true },
      });
      bots.push({ id: r.body.bot.id, userId: r.body.bot.botUser.id, token: r.body.token });
      // The token is a working bot token.
      await expectStatus(await h.as(r.body.token).get('/bot/me'), 200);
    }
    expectError(await me.post('/bots', { name: 'four' }), 409, 'CONFLICT');
    const list = await expectStatus(await me.get('/bots'), 200);
    expect(list.body.bots).toHaveLength(3);
    expect(list.body.bots[0]).toEqual({
      bot: expect.objectContaining({ id: bots[0]?.id, name: 'one' }),
      webhookUrl: null,
      guilds: [],
    });
    expect((await h.people(carl.token).get('/bots')).body).toEqual({ bots: [] });
    for (const body of [
      {},
      { name: '' },
      { name: 'x'.repeat(101) },
      { name: 'a\u202Eb' },
      { name: 'ok', avatar: 'javascript:x' },
      { name: 'ok', extra: 1 },
    ])
      expectError(
        await h.people(carl.token).post('/bots', body),
        400,
        'VALIDATION_ERROR',
        JSON.stringify(body),
      );
  });

  it("someone else's bot → 404 on every route (its existence is not revealed)", async () => {
    const id = bots[0]?.id ?? 0;
    const other = h.people(carl.token);
    const tries = [
      other.patch(`/bots/${id}`, { name: 'mine' }),
      other.delete(`/bots/${id}`),
      other.post(`/bots/${id}/token`),
      other.get(`/bots/${id}/quota`),
      other.put(`/bots/${id}/webhook`, { url: receiver.url }),
      other.delete(`/bots/${id}/webhook`),
      other.post(`/bots/${id}/webhook/secret`),
      other.post(`/bots/${id}/webhook/test`),
      other.get(`/bots/${id}/deliveries`),
      other.get(`/bots/${id}/deliveries/1`),
      other.post(`/bots/${id}/deliveries/1/redeliver`),
      other.put(`/guilds/${guildId}/bots/${id}`, {}),
    ];
    for (const r of await Promise.all(tries)) expectError(r, 404, 'NOT_FOUND', r.raw);
    // Unknown bots look the same.
    expectError(await other.get('/bots/999999999/quota'), 404, 'NOT_FOUND');
    expectError(await other.get('/bots/abc/quota'), 400, 'VALIDATION_ERROR');
    // Nothing changed.
    expect((await h.as(bots[0]?.token ?? '').get('/bot/me')).body.name).toBe('one');
  });

  it('PATCH /bots/:id: name, description, avatar (null → default); bad input → 400', async () => {
    const me = h.people(alice.token);
    const id = bots[2]?.id ?? 0;
    const r = await expectStatus(
      await me.patch(`/bots/${id}`, {
        name: 'three!',
        description: 'new',
        avatar: 'https://img.example/b.png',
      }),
      200,
    );
    expect(r.body).toEqual({
      id,
      name: 'three!',
      avatar: 'https://img.example/b.png',
      description: 'new',
      botUser: { id: bots[2]?.userId, name: 'three!', isBot: true },
    });
    expect(
      (await expectStatus(await me.patch(`/bots/${id}`, { avatar: null }), 200)).body.avatar,
    ).toBe(AVATAR);
    for (const body of [
      {},
      { name: '' },
      { description: 5 },
      { avatar: 'ftp://x/y' },
      { webhookUrl: 'x' },
    ])
      expectError(
        await me.patch(`/bots/${id}`, body),
        400,
        'VALIDATION_ERROR',
        JSON.stringify(body),
      );
  });

  it('POST /bots/:id/token: the old token → 401 at once, the new one works; GET /bots/:id/quota (D24 shape)', async () => {
    const b = bots[1];
    if (!b) throw new Error('no bot');
    const r = await expectStatus(await h.people(alice.token).post(`/bots/${b.id}/token`), 200);
    expect(Object.keys(r.body)).toEqual(['token']);
    expectError(await h.as(b.token).get('/bot/me'), 401, 'UNAUTHORIZED');
    await expectStatus(await h.as(r.body.token).get('/bot/me'), 200);
    b.token = r.body.token;
    const q = await expectStatus(await h.people(alice.token).get(`/bots/${b.id}/quota`), 200);
    expect(q.body).toEqual({
      dailyUsed: 0,
      dailyLimit: 85_899_345_920,
      monthlyUsed: 0,
      monthlyLimit: 2_147_483_648_000,
    });
  });

  it('webhooks: set, test, per-try detail (status, latency, error, first 4 KiB of the answer), ?state=, redeliver, rotate, remove', async () => {
    const b = bots[0];
    if (!b) throw new Error('no bot');
    const me = h.people(alice.token);
    const big = 'x'.repeat(3000) + 'é'.repeat(3000); // 9,000 bytes
    receiver.answer(
      (res) => res.writeHead(500, { 'content-type': 'text/plain' }).end('boom\u0000!'),
      (res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(big),
    );
    const set = await expectStatus(
      await me.put(`/bots/${b.id}/webhook`, { url: receiver.url }),
      200,
    );
    expect(Object.keys(set.body).sort()).toEqual(['secret', 'url']);
    expectError(
      await me.put(`/bots/${b.id}/webhook`, { url: 'not a url' }),
      400,
      'VALIDATION_ERROR',
    );
    expect((await me.get('/bots')).body.bots[0].webhookUrl).toBe(receiver.url);
    const test = await expectStatus(await me.post(`/bots/${b.id}/webhook/test`), 200);
    expect(test.body).toMatchObject({ type: 'WEBHOOK_TEST', state: 'pending', attempts: 0 });
    await receiver.waitFor(2);
    let detail;
    for (const end = Date.now() + 8000; ;) {
      detail = await expectStatus(await me.get(`/bots/${b.id}/deliveries/${test.body.id}`), 200);
      if (detail.body.state === 'delivered' && detail.body.attempts.length === 2) break;
      if (Date.now() > end) throw new Error(`not delivered: ${detail.raw}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(Object.keys(detail.body).sort()).toEqual(
      [
        'attempts',
        'createdAt',
        'deliveryId',
        'id',
        'lastError',
        'lastLatencyMs',
        'lastStatus',
        'nextAttemptAt',
        'state',
        'type',
      ].sort(),
    );
    const [first, second] = detail.body.attempts;
    expect(first).toEqual({
      at: expect.any(String),
      status: 500,
      latencyMs: expect.any(Number),
      error: 'HTTP 500',
      responseBody: 'boom\uFFFD!', // NUL cannot be stored in PostgreSQL text
    });
    expect(second).toMatchObject({ status: 200, error: null });
    expect(second.latencyMs).toBeGreaterThanOrEqual(0);
    // The first 4 KiB (4,096 bytes) of the answer, cut inside a 2-byte character at worst.
    const head = Buffer.from(big).subarray(0, 4096).toString('utf8');
    expect(second.responseBody).toBe(head);
    expect(Date.parse(second.at)).toBeGreaterThanOrEqual(Date.parse(first.at));

    const delivered = await expectStatus(
      await me.get(`/bots/${b.id}/deliveries?state=delivered`),
      200,
    );
    expect(delivered.body.deliveries.map((x: { id: number }) => x.id)).toEqual([test.body.id]);
    expect((await me.get(`/bots/${b.id}/deliveries?state=failed`)).body).toEqual({
      deliveries: [],
    });
    expect((await me.get(`/bots/${b.id}/deliveries`)).body.deliveries[0]).toMatchObject({
      id: test.body.id,
      attempts: 2,
      lastStatus: 200,
    });
    expectError(await me.get(`/bots/${b.id}/deliveries?state=lost`), 400, 'VALIDATION_ERROR');
    expectError(await me.get(`/bots/${b.id}/deliveries/999999999`), 404, 'NOT_FOUND');

    const again = await expectStatus(
      await me.post(`/bots/${b.id}/deliveries/${test.body.id}/redeliver`),
      200,
    );
    expect(again.body).toMatchObject({ id: test.body.id, state: 'pending' });
    await receiver.waitFor(3);
    for (const end = Date.now() + 8000; ;) {
      detail = await me.get(`/bots/${b.id}/deliveries/${test.body.id}`);
      if (detail.body.attempts.length === 3) break;
      if (Date.now() > end) throw new Error(`no third try: ${detail.raw}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(receiver.received[2]?.headers['x-service-delivery']).toBe(
      receiver.received[0]?.headers['x-service-delivery'],
    );

    const rot = await expectStatus(await me.post(`/bots/${b.id}/webhook/secret`), 200);
    expect(rot.body.secret).not.toBe(set.body.secret);
    expect((await me.delete(`/bots/${b.id}/webhook`)).status).toBe(204);
    expect((await me.get('/bots')).body.bots[0].webhookUrl).toBeNull();
    expectError(await me.post(`/bots/${b.id}/webhook/test`), 400, 'VALIDATION_ERROR');
  });

  it('PUT /guilds/:g/bots/:b: ADMINISTRATOR needed (403), 201 + GUILD_MEMBER_ADD, 200 when already in; roles checked', async () => {
    const [one, two] = bots;
    if (!one || !two) throw new Error('no bots');
    const me = h.people(alice.token);
    // Bob (a plain member) and Carl (not a member) cannot add their own bots.
    const bobBot = await expectStatus(
      await h.people(bob.token).post('/bots', { name: 'bobs' }),
      201,
    );
    expectError(
      await h.people(bob.token).put(`/guilds/${guildId}/bots/${bobBot.body.bot.id}`, {}),
      403,
      'FORBIDDEN',
    );
    const carlBot = await expectStatus(
      await h.people(carl.token).post('/bots', { name: 'carls' }),
      201,
    );
    expectError(
      await h.people(carl.token).put(`/guilds/${guildId}/bots/${carlBot.body.bot.id}`, {}),
      403,
      'FORBIDDEN',
    );
    expectError(await me.put(`/guilds/999999999/bots/${one.id}`, {}), 404, 'NOT_FOUND');

    const added = await me.put(`/guilds/${guildId}/bots/${one.id}`, {});
    expect(added.status, added.raw).toBe(201);
    expect(added.body).toEqual({
      user: { id: one.userId, name: 'one', avatar: AVATAR, isBot: true }, // D56 adds isBot
      roles: [],
      joinedAt: expect.stringMatching(/Z$/),
    });
    // Bot one is connected when bot two joins: it receives GUILD_MEMBER_ADD (D34).
    live.clock.advance(1000);
    const c = await live.connect(one.token);
    await c.ready();
    const role = await expectStatus(
      await h.admin.post(`/guilds/${guildId}/roles`, { name: 'helper', permissions: 1 }),
      201,
    );
    expectError(
      await me.put(`/guilds/${guildId}/bots/${two.id}`, { roles: [123] }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await me.put(`/guilds/${guildId}/bots/${two.id}`, { roles: 'x' }),
      400,
      'VALIDATION_ERROR',
    );
    const r = await me.put(`/guilds/${guildId}/bots/${two.id}`, { roles: [role.body.id] });
    expect(r.status, r.raw).toBe(201);
    const ev = await c.dispatch('GUILD_MEMBER_ADD');
    expect(ev.d).toEqual({
      guildId,
      user: { id: two.userId, name: 'two', avatar: AVATAR, isBot: true },
      roles: [role.body.id],
      joinedAt: r.body.joinedAt,
    });
    // Again: only its roles are set (200, no event).
    const again = await me.put(`/guilds/${guildId}/bots/${two.id}`, { roles: [] });
    expect(again.status).toBe(200);
    expect(again.body.roles).toEqual([]);
    c.terminate();

    // An administrator who is not the owner may add their bot too.
    const admins = await expectStatus(
      await h.admin.post(`/guilds/${guildId}/roles`, { name: 'admins', permissions: 8 }),
      201,
    );
    await join(h, guildId, bob.id, [admins.body.id]);
    expect(
      (await h.people(bob.token).put(`/guilds/${guildId}/bots/${bobBot.body.bot.id}`, {})).status,
    ).toBe(201);
    const list = await h.people(alice.token).get('/bots');
    expect(list.body.bots.map((x: { guilds: number[] }) => x.guilds)).toEqual([
      [guildId],
      [guildId],
      [],
    ]);
  });

  it('DELETE /bots/:id → 204: token dies, its gateway connection closes 4004, it leaves every guild (GUILD_MEMBER_REMOVE), the slot is free again', async () => {
    const [one, two] = bots;
    if (!one || !two) throw new Error('no bots');
    live.clock.advance(1000);
    const doomed = await live.connect(two.token);
    await doomed.ready();
    live.clock.advance(1000);
    const watcher = await live.connect(one.token);
    await watcher.ready();
    const r = await h.people(alice.token).delete(`/bots/${two.id}`);
    expect(r.status, r.raw).toBe(204);
    const ev = await watcher.dispatch('GUILD_MEMBER_REMOVE');
    expect(ev.d).toEqual({
      guildId,
      user: { id: two.userId, name: 'two', avatar: AVATAR, isBot: true },
    });
    expect((await doomed.closed).code).toBe(4004);
    expectError(await h.as(two.token).get('/bot/me'), 401, 'UNAUTHORIZED');
    expectError(await h.people(alice.token).delete(`/bots/${two.id}`), 404, 'NOT_FOUND');
    const list = await expectStatus(await h.people(alice.token).get('/bots'), 200);
    expect(list.body.bots.map((x: { bot: { id: number } }) => x.bot.id)).not.toContain(two.id);
    // Its user is no member anywhere; the owner may create a bot again.
    const members = await h.services.domain.db
      .selectFrom('members')
      .select('guild_id')
      .where('user_id', '=', two.userId)
      .execute();
    expect(members).toEqual([]);
    await expectStatus(await h.people(alice.token).post('/bots', { name: 'replacement' }), 201);
    expectError(await h.people(alice.token).post('/bots', { name: 'too-many' }), 409, 'CONFLICT');
    watcher.terminate();
  });

  it('a try in flight when its bot is deleted records nothing, and the other tries of its batch keep their detail', async () => {
    const held: Array<import('node:http').ServerResponse> = [];
    const hold = (res: import('node:http').ServerResponse) => {
      held.push(res);
    };
    const rx = await new Receiver().listen();
    const ry = await new Receiver().listen();
    try {
      rx.always(hold);
      ry.always(hold);
      const x = await expectStatus(
        await h.people(carl.token).post('/bots', { name: 'doomed' }),
        201,
      );
      const y = await expectStatus(
        await h.people(bob.token).post('/bots', { name: 'survivor' }),
        201,
      );
      const xs = h.people(carl.token);
      const ys = h.people(bob.token);
      await expectStatus(await xs.put(`/bots/${x.body.bot.id}/webhook`, { url: rx.url }), 200);
      await expectStatus(await ys.put(`/bots/${y.body.bot.id}/webhook`, { url: ry.url }), 200);
      await expectStatus(await xs.post(`/bots/${x.body.bot.id}/webhook/test`), 200);
      const yd = await expectStatus(await ys.post(`/bots/${y.body.bot.id}/webhook/test`), 200);
      await rx.waitFor(1);
      await ry.waitFor(1);
      expect((await xs.delete(`/bots/${x.body.bot.id}`)).status).toBe(204);
      // Both answers in the same turn: their outcomes are written together.
      for (const res of held.splice(0)) res.writeHead(200).end('fine');
      for (const end = Date.now() + 8000; ;) {
        const d = await ys.get(`/bots/${y.body.bot.id}/deliveries/${yd.body.id}`);
        if (d.body.attempts?.length === 1) {
          expect(d.body.attempts[0]).toMatchObject({ status: 200, responseBody: 'fine' });
          break;
        }
        if (Date.now() > end) throw new Error(`no attempt recorded: ${d.raw}`);
        await new Promise((r) => setTimeout(r, 25));
      }
      const orphans = await h.services.domain.db
        .selectFrom('webhook_attempts')
        .select('delivery_row_id')
        .where(
          'delivery_row_id',
          'not in',
          h.services.domain.db.selectFrom('webhook_deliveries').select('id'),
        )
        .execute();
      expect(orphans).toEqual([]);
    } finally {
      for (const res of held.splice(0)) res.destroy();
      await rx.close();
      await ry.close();
    }
  });
});
