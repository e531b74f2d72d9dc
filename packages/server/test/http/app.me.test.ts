import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  expectError,
  expectStatus,
  join,
  makeBot,
  makeUser,
  type Harness,
} from '../helpers/harness.js';
import { ORIGIN, register, type Person } from '../helpers/people.js';

// D48: the person, their guilds and DMs, other users, leaving, read states.
const AVATAR = `${ORIGIN}/cdn/avatars/default.png`;

dbDescribe('D48 me, users, guilds, DMs, leave, read states', () => {
  let h: Harness;
  let ann: Person;
  let ben: Person;
  let cat: Person;
  let guildId: number;
  let general: number;
  let secret: number;
  let bot: Awaited<ReturnType<typeof makeBot>>;

  /** Webhook deliveries enqueued for the bot: the events it was sent (D34), in order. */
  const botEvents = async () =>
    (
      await h.services.domain.db
        .selectFrom('webhook_deliveries')
        .select(['event_type', 'body'])
        .where('bot_id', '=', bot.id)
        .orderBy('id', 'asc')
        .execute()
    ).map((r) => ({ type: r.event_type, data: JSON.parse(r.body).data }));

  beforeAll(async () => {
    h = await createHarness({
      env: {
        PARLEY_REGISTRATION: 'open',
        PARLEY_WEBHOOK_ALLOW_INSECURE: 'true',
        PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true',
      },
    });
    ann = await register(h, 'Ann');
    ben = await register(h, 'Ben');
    cat = await register(h, 'Cat');
    const g = await expectStatus(
      await h.admin.post('/guilds', { name: 'Club', ownerId: ann.id }),
      201,
    );
    guildId = g.body.id;
    general = (
      await expectStatus(
        await h.admin.post(`/guilds/${guildId}/channels`, { name: 'general' }),
        201,
      )
    ).body.id;
    secret = (
      await expectStatus(await h.admin.post(`/guilds/${guildId}/channels`, { name: 'secret' }), 201)
    ).body.id;
    // @everyone cannot VIEW #secret.
    await expectStatus(
      await h.admin.put(`/channels/${secret}/overwrites/${guildId}`, { allow: 0, deny: 1 }),
      200,
    );
    await join(h, guildId, ben.id);
    const owner = await makeUser(h, 'bot-owner');
    bot = await makeBot(h, owner.id, 'watcher');
    await join(h, guildId, bot.userId);
    await expectStatus(
      await h.admin.put(`/bots/${bot.id}/webhook`, { url: 'http://127.0.0.1:9/hook' }),
      200,
    );
  });
  afterAll(async () => h.close());

  it('GET /users/@me → {id, name, avatar, isBot:false}', async () => {
    const r = await expectStatus(await h.people(ann.token).get('/users/@me'), 200);
    expect(r.body).toEqual({ id: ann.id, name: 'Ann', avatar: AVATAR, isBot: false });
  });

  it('PATCH /users/@me: name (unique ignoring case: 409), avatar URL, null → default; bad input → 400', async () => {
    const me = h.people(cat.token);
    const r = await expectStatus(
      await me.patch('/users/@me', { name: 'Catherine', avatar: 'https://img.example/c.png' }),
      200,
    );
    expect(r.body).toEqual({
      id: cat.id,
      name: 'Catherine',
      avatar: 'https://img.example/c.png',
      isBot: false,
    });
    // Her old name is free again; Ann's is not, in any case.
    expectError(await me.patch('/users/@me', { name: 'ANN' }), 409, 'CONFLICT');
    await expectStatus(await me.patch('/users/@me', { name: 'catherine' }), 200); // own name, new case
    const cleared = await expectStatus(await me.patch('/users/@me', { avatar: null }), 200);
    expect(cleared.body.avatar).toBe(AVATAR);
    const bad: Array<[string, unknown]> = [
      ['javascript: avatar', { avatar: 'javascript:alert(1)' }],
      ['data: avatar', { avatar: 'data:image/png;base64,AAAA' }],
      ['relative avatar', { avatar: '/x.png' }],
      ['one-character name', { name: 'x' }],
      ['over-long name', { name: 'n'.repeat(33) }],
      ['bidi name', { name: 'ab\u202Ecd' }],
      ['control name', { name: 'ab\u0000cd' }],
      ['name a number', { name: 7 }],
      ['unknown field', { isBot: true }],
    ];
    for (const [what, body] of bad)
      expectError(await me.patch('/users/@me', body), 400, 'VALIDATION_ERROR', what);
    expect((await me.get('/users/@me')).body.name).toBe('catherine');
    // The login follows the name.
    const login = await h
      .people(undefined)
      .post('/auth/login', { name: 'CATHERINE', password: 'correct-horse-battery' });
    expect(login.status).toBe(200);
  });

  it('GET /users/@me/guilds → {guilds:[{id, name, ownerId}]}', async () => {
    const r = await expectStatus(await h.people(ben.token).get('/users/@me/guilds'), 200);
    expect(r.body).toEqual({ guilds: [{ id: guildId, name: 'Club', ownerId: ann.id }] });
    expect((await h.people(cat.token).get('/users/@me/guilds')).body).toEqual({ guilds: [] });
  });

  it('GET /users/:userId: shared guild or DM → the user; anyone else → 404; bad id → 400', async () => {
    const r = await expectStatus(await h.people(ben.token).get(`/users/${ann.id}`), 200);
    expect(r.body).toEqual({ id: ann.id, name: 'Ann', avatar: AVATAR, isBot: false });
    const b = await expectStatus(await h.people(ben.token).get(`/users/${bot.userId}`), 200);
    expect(b.body).toEqual({ id: bot.userId, name: 'watcher', avatar: AVATAR, isBot: true });
    await expectStatus(await h.people(ben.token).get(`/users/${ben.id}`), 200);
    expectError(await h.people(cat.token).get(`/users/${ann.id}`), 404, 'NOT_FOUND'); // shares nothing
    expectError(await h.people(ben.token).get('/users/999999999'), 404, 'NOT_FOUND');
    expectError(await h.people(ben.token).get('/users/abc'), 400, 'VALIDATION_ERROR');
    expectError(await h.people(ben.token).get('/users/01'), 400, 'VALIDATION_ERROR');
  });

  it('GET /users/@me/dms: {channelId, recipient, lastMessageId}, newest activity first', async () => {
    const withAnn = await expectStatus(await h.as(ben.token).post(`/users/${ann.id}/dm`), 200);
    const withBot = await expectStatus(await h.as(ben.token).post(`/users/${bot.userId}/dm`), 200);
    let r = await expectStatus(await h.people(ben.token).get('/users/@me/dms'), 200);
    // No messages yet: the newer channel first.
    expect(r.body).toEqual({
      dms: [
        {
          channelId: withBot.body.channelId,
          recipient: { id: bot.userId, name: 'watcher', avatar: AVATAR, isBot: true },
          lastMessageId: null,
        },
        {
          channelId: withAnn.body.channelId,
          recipient: { id: ann.id, name: 'Ann', avatar: AVATAR, isBot: false },
          lastMessageId: null,
        },
      ],
    });
    const m = await expectStatus(
      await h
        .as(ben.token)
        .post(`/dm/channels/${withAnn.body.channelId}/messages`, { content: 'hi Ann' }),
      200,
    );
    r = await expectStatus(await h.people(ben.token).get('/users/@me/dms'), 200);
    expect(r.body.dms.map((x: { channelId: number }) => x.channelId)).toEqual([
      withAnn.body.channelId,
      withBot.body.channelId,
    ]);
    expect(r.body.dms[0].lastMessageId).toBe(m.body.id);
    // Ann sees the same DM with Ben as recipient; a DM makes users visible to each other.
    const a = await expectStatus(await h.people(ann.token).get('/users/@me/dms'), 200);
    expect(a.body.dms).toEqual([
      {
        channelId: withAnn.body.channelId,
        recipient: { id: ben.id, name: 'Ben', avatar: AVATAR, isBot: false },
        lastMessageId: m.body.id,
      },
    ]);
  });

  it('PUT /channels/:id/read → 204, never backwards; GET /users/@me/read-states (DMs included)', async () => {
    const m1 = await expectStatus(
      await h.as(ann.token).post(`/channels/${general}/messages`, { content: 'one' }),
      200,
    );
    const m2 = await expectStatus(
      await h.as(ann.token).post(`/channels/${general}/messages`, { content: 'two' }),
      200,
    );
    const me = h.people(ben.token);
    const put = await me.put(`/channels/${general}/read`, { messageId: m2.body.id });
    expect(put.status, put.raw).toBe(204);
    expect(put.raw).toBe('');
    expect((await me.put(`/channels/${general}/read`, { messageId: m1.body.id })).status).toBe(204);
    const dm = (await me.get('/users/@me/dms')).body.dms[0].channelId as number;
    expect((await me.put(`/channels/${dm}/read`, { messageId: m1.body.id })).status).toBe(204);
    const r = await expectStatus(await me.get('/users/@me/read-states'), 200);
    expect(r.body).toEqual({
      // D66 adds mentionCount (ann's messages mention nobody)
      readStates: [
        { channelId: general, lastReadId: m2.body.id, mentionCount: 0 },
        { channelId: dm, lastReadId: m1.body.id, mentionCount: 0 },
      ].sort((a, b) => a.channelId - b.channelId),
    });
    // Access: a channel Ben cannot VIEW → 403; someone else's DM → 403; not a member → 403.
    expectError(
      await me.put(`/channels/${secret}/read`, { messageId: m1.body.id }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await h.people(cat.token).put(`/channels/${dm}/read`, { messageId: m1.body.id }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await h.people(cat.token).put(`/channels/${general}/read`, { messageId: m1.body.id }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await me.put('/channels/999999999/read', { messageId: m1.body.id }),
      404,
      'NOT_FOUND',
    );
    for (const body of [
      {},
      { messageId: 'x' },
      { messageId: -1 },
      { messageId: 1.5 },
      { messageId: m1.body.id, extra: 1 },
    ])
      expectError(
        await me.put(`/channels/${general}/read`, body),
        400,
        'VALIDATION_ERROR',
        JSON.stringify(body),
      );
    // The owner can read #secret.
    expect(
      (await h.people(ann.token).put(`/channels/${secret}/read`, { messageId: m1.body.id })).status,
    ).toBe(204);
    expect((await h.people(cat.token).get('/users/@me/read-states')).body).toEqual({
      readStates: [],
    });
  });

  it('DELETE /users/@me/guilds/:id: the owner → 409; a member leaves (GUILD_MEMBER_REMOVE to bots, GUILD_DELETE to them)', async () => {
    expectError(await h.people(ann.token).delete(`/users/@me/guilds/${guildId}`), 409, 'CONFLICT');
    expectError(await h.people(cat.token).delete(`/users/@me/guilds/${guildId}`), 404, 'NOT_FOUND');
    expectError(await h.people(ben.token).delete('/users/@me/guilds/999999999'), 404, 'NOT_FOUND');
    expectError(await h.people(ben.token).delete('/users/@me/guilds/x'), 400, 'VALIDATION_ERROR');
    const seen: Array<{ type: string; data: string; audience: unknown }> = [];
    const off = h.services.events.onPeople((e) => seen.push(e));
    const r = await h.people(ben.token).delete(`/users/@me/guilds/${guildId}`);
    off();
    expect(r.status, r.raw).toBe(204);
    expect((await h.people(ben.token).get('/users/@me/guilds')).body).toEqual({ guilds: [] });
    const events = await botEvents();
    expect(events.at(-1)).toEqual({
      type: 'GUILD_MEMBER_REMOVE',
      data: { guildId, user: { id: ben.id, name: 'Ben', avatar: AVATAR } },
    });
    expect(seen.map((e) => e.type)).toEqual(['GUILD_MEMBER_REMOVE', 'GUILD_DELETE']);
    expect(seen[1]).toEqual({
      type: 'GUILD_DELETE',
      data: JSON.stringify({ id: guildId }),
      audience: { kind: 'users', userIds: [ben.id] },
    });
    // Gone from the guild: its channels are closed to him.
    expectError(await h.as(ben.token).get(`/channels/${general}/messages`), 403, 'FORBIDDEN');
  });
});
