import { ALL_PERMISSIONS, DEFAULT_EVERYONE_PERMISSIONS, Permission } from '@parley/protocol';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  expectError,
  expectStatus,
  join,
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

// D49: guilds for people — create, read, rename, delete; channels, roles, member roles and
// overwrites for administrators; and the D51 people's events each change sends (checked where
// the people's gateway picks them up: EventsRuntime.onPeople).
const AVATAR = 'http://parley.test/cdn/avatars/default.png';
type Person = { id: number; token: string; app: AppCaller };

dbDescribe('guilds for people (D49, D51)', () => {
  let h: Harness;
  let ev: PeopleEvents;
  let owner: Person;
  let member: Person;
  let outsider: Person;

  beforeAll(async () => {
    // Webhook addresses on loopback: the bots' deliveries are stored for every recipient (D38).
    h = await createHarness({
      env: { PARLEY_WEBHOOK_ALLOW_INSECURE: 'true', PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true' },
    });
    ev = new PeopleEvents(h);
    owner = await makePerson(h, 'owner');
    member = await makePerson(h, 'member');
    outsider = await makePerson(h, 'outsider');
  });
  afterAll(async () => {
    ev.stop();
    await h.close();
  });

  it('POST /guilds → 201: the caller owns it, it starts with #general; GUILD_CREATE to the owner', async () => {
    ev.clear();
    const r = await expectStatus(await owner.app.post('/guilds', { name: 'My Guild' }), 201);
    const id = r.body.id as number;
    expect(r.body).toStrictEqual({
      id,
      name: 'My Guild',
      ownerId: owner.id,
      // D58 adds position, color and mentionable to every role
      roles: [
        {
          id,
          name: '@everyone',
          permissions: DEFAULT_EVERYONE_PERMISSIONS,
          position: 0,
          color: null,
          mentionable: false,
        },
      ],
      channels: [{ id: r.body.channels[0].id, guildId: id, name: 'general', type: 0, topic: '' }],
      bots: [],
      myPermissions: ALL_PERMISSIONS,
    });
    // D51: GUILD_CREATE (the full guild) to its owner only.
    const created = ev.of('GUILD_CREATE');
    expect(created).toHaveLength(1);
    expect(created[0]?.audience).toEqual({ kind: 'users', userIds: [owner.id] });
    expect(created[0]?.data).toStrictEqual(r.body);
    // GET shows the same; the guild is the owner's.
    const got = await expectStatus(await owner.app.get(`/guilds/${id}`), 200);
    expect(got.body).toStrictEqual(r.body);
    // The bots' API sees it too: the person is a member with the channel.
    const channels = await expectStatus(await h.as(owner.token).get(`/guilds/${id}/channels`), 200);
    expect(channels.body.channels).toEqual([
      { id: r.body.channels[0].id, guildId: id, name: 'general', type: 0 },
    ]);
  });

  it('GET /guilds/:id: members only (403), unknown 404, bad id 400, no session 401', async () => {
    const g = await makeAppGuild(owner);
    expectError(await outsider.app.get(`/guilds/${g.id}`), 403, 'FORBIDDEN');
    expectError(await owner.app.get('/guilds/9007199254740991'), 404, 'NOT_FOUND');
    expectError(await owner.app.get('/guilds/01'), 400, 'VALIDATION_ERROR');
    expectError(await owner.app.get('/guilds/abc'), 400, 'VALIDATION_ERROR');
    const anon = await appAs(h, undefined).get(`/guilds/${g.id}`);
    expectError(anon, 401, 'UNAUTHORIZED');
    await join(h, g.id, member.id);
    const seen = await expectStatus(await member.app.get(`/guilds/${g.id}`), 200);
    // D49: myPermissions at guild level: @everyone's bits for a plain member.
    expect(seen.body.myPermissions).toBe(DEFAULT_EVERYONE_PERMISSIONS);
    expect(seen.body.ownerId).toBe(owner.id);
  });

  it('a bot token on /app/v1 → 403 (D45)', async () => {
    const bot = await makeBot(h, owner.id, 'tokenbot');
    expectError(await appAs(h, bot.token).post('/guilds', { name: 'x' }), 403, 'FORBIDDEN');
  });

  it('without ADMINISTRATOR every change is 403; with a role carrying it, it is allowed', async () => {
    const g = await makeAppGuild(owner);
    await join(h, g.id, member.id);
    const m = member.app;
    const expect403 = async (r: Promise<unknown>, what: string) =>
      expectError((await r) as never, 403, 'FORBIDDEN', what);
    const role = await expectStatus(
      await owner.app.post(`/guilds/${g.id}/roles`, { name: 'helper', permissions: 1 }),
      201,
    );
    await expect403(m.patch(`/guilds/${g.id}`, { name: 'mine' }), 'rename');
    await expect403(m.post(`/guilds/${g.id}/channels`, { name: 'c' }), 'channel create');
    await expect403(m.patch(`/channels/${g.generalId}`, { topic: 't' }), 'channel patch');
    await expect403(m.delete(`/channels/${g.generalId}`), 'channel delete');
    await expect403(
      m.put(`/channels/${g.generalId}/overwrites/${g.id}`, { allow: 0, deny: 1 }),
      'overwrite',
    );
    await expect403(m.post(`/guilds/${g.id}/roles`, { name: 'r', permissions: 8 }), 'role create');
    await expect403(m.patch(`/roles/${role.body.id}`, { permissions: 8 }), 'role patch');
    await expect403(m.delete(`/roles/${role.body.id}`), 'role delete');
    await expect403(
      m.put(`/guilds/${g.id}/members/${member.id}/roles`, { roles: [role.body.id] }),
      'member roles',
    );
    await expect403(m.delete(`/guilds/${g.id}/members/${owner.id}`), 'kick');
    await expect403(m.put(`/guilds/${g.id}/bans/${owner.id}`), 'ban');
    await expect403(m.get(`/guilds/${g.id}/bans`), 'bans');
    // D57 revises: the default @everyone holds CREATE_INVITE, so a member may invite.
    await expectStatus(await m.post(`/guilds/${g.id}/invites`, {}), 201);
    await expect403(m.get(`/guilds/${g.id}/invites`), 'invites');
    await expect403(m.delete(`/guilds/${g.id}`), 'guild delete');
    // Not a member at all: 403 as well (D12).
    await expect403(outsider.app.patch(`/guilds/${g.id}`, { name: 'x' }), 'outsider rename');
    await expect403(outsider.app.delete(`/roles/${role.body.id}`), 'outsider role delete');
    // Unknown targets: 404.
    expectError(
      await owner.app.patch('/channels/9007199254740991', { topic: 'x' }),
      404,
      'NOT_FOUND',
    );
    expectError(await owner.app.delete('/roles/9007199254740991'), 404, 'NOT_FOUND');
    expectError(await owner.app.patch('/guilds/9007199254740991', { name: 'x' }), 404, 'NOT_FOUND');

    // An administrator role: now the member may administer, but not delete the guild.
    const admin = await expectStatus(
      await owner.app.post(`/guilds/${g.id}/roles`, {
        name: 'admin',
        permissions: Permission.ADMINISTRATOR,
      }),
      201,
    );
    await expectStatus(
      await owner.app.put(`/guilds/${g.id}/members/${member.id}/roles`, { roles: [admin.body.id] }),
      200,
    );
    const view = await expectStatus(await m.patch(`/guilds/${g.id}`, { name: 'Renamed' }), 200);
    expect(view.body.name).toBe('Renamed');
    expect(view.body.myPermissions).toBe(ALL_PERMISSIONS);
    await expectStatus(await m.post(`/guilds/${g.id}/channels`, { name: 'by-admin' }), 201);
    expectError(await m.delete(`/guilds/${g.id}`), 403, 'FORBIDDEN', 'only the owner deletes');
  });

  it("rename: GUILD_UPDATE with the guild's own fields only, to every member (revised by D70: no channels)", async () => {
    const g = await makeAppGuild(owner);
    await join(h, g.id, member.id);
    const secret = await expectStatus(
      await owner.app.post(`/guilds/${g.id}/channels`, { name: 'secret', topic: 'staff' }),
      201,
    );
    await expectStatus(
      await owner.app.put(`/channels/${secret.body.id}/overwrites/${g.id}`, {
        allow: 0,
        deny: Permission.VIEW_CHANNEL,
      }),
      200,
    );
    ev.clear();
    const r = await expectStatus(
      await owner.app.patch(`/guilds/${g.id}`, { name: 'New name' }),
      200,
    );
    // The answer is still the caller's whole view of the guild (D49).
    expect(r.body.name).toBe('New name');
    expect(r.body.channels.map((c: { name: string }) => c.name)).toEqual(['general', 'secret']);
    // D70: one small event for the whole guild, never its channels (a rename storm in a guild of
    // 500 channels must not send 500 channels per rename to every member).
    expect(ev.of('GUILD_UPDATE')).toEqual([
      {
        type: 'GUILD_UPDATE',
        data: { id: g.id, name: 'New name', ownerId: owner.id },
        audience: { kind: 'guild', guildId: g.id },
      },
    ]);
    expect(JSON.stringify(ev.all)).not.toContain('secret');
  });

  it('channels: create 201, patch, delete 204 with its messages, overwrites and read states', async () => {
    const g = await makeAppGuild(owner);
    await join(h, g.id, member.id);
    ev.clear();
    const c = await expectStatus(
      await owner.app.post(`/guilds/${g.id}/channels`, { name: 'news', topic: 'daily' }),
      201,
    );
    expect(c.body).toStrictEqual({
      id: c.body.id,
      guildId: g.id,
      name: 'news',
      type: 0,
      topic: 'daily',
    });
    const created = ev.of('CHANNEL_CREATE');
    expect(created).toHaveLength(1);
    expect(created[0]?.data).toStrictEqual(c.body);
    expect(created[0]?.audience).toEqual({
      kind: 'users',
      userIds: [owner.id, member.id].sort((a, b) => a - b),
    });
    // Topic defaults to "".
    const bare = await expectStatus(
      await owner.app.post(`/guilds/${g.id}/channels`, { name: 'bare' }),
      201,
    );
    expect(bare.body.topic).toBe('');

    ev.clear();
    const p1 = await expectStatus(
      await owner.app.patch(`/channels/${c.body.id}`, { topic: 'weekly' }),
      200,
    );
    expect(p1.body).toStrictEqual({ ...c.body, topic: 'weekly' });
    const p2 = await expectStatus(
      await owner.app.patch(`/channels/${c.body.id}`, { name: 'updates' }),
      200,
    );
    expect(p2.body).toStrictEqual({ ...c.body, name: 'updates', topic: 'weekly' });
    expect(ev.of('CHANNEL_UPDATE').map((e) => e.data)).toStrictEqual([p1.body, p2.body]);
    // The bots' API reads the change.
    const read = await expectStatus(await h.as(member.token).get(`/channels/${c.body.id}`), 200);
    expect(read.body).toStrictEqual(p2.body);

    // Messages, an overwrite and a read state hang on the channel.
    const msg = await expectStatus(
      await h.as(member.token).post(`/channels/${c.body.id}/messages`, { content: 'bye' }),
      200,
    );
    await expectStatus(
      await owner.app.put(`/channels/${c.body.id}/overwrites/${g.id}`, { allow: 0, deny: 2 }),
      200,
    );
    const db = h.services.domain.db;
    await db
      .insertInto('read_states')
      .values({ user_id: member.id, channel_id: c.body.id, last_read_id: msg.body.id })
      .execute();
    ev.clear();
    await expectStatus(await owner.app.delete(`/channels/${c.body.id}`), 204);
    // D70: to those who could see it (here everyone: the overwrite only denies SEND_MESSAGES).
    expect(ev.of('CHANNEL_DELETE')).toEqual([
      {
        type: 'CHANNEL_DELETE',
        data: { id: c.body.id, guildId: g.id },
        audience: { kind: 'users', userIds: [owner.id, member.id].sort((a, b) => a - b) },
      },
    ]);
    const left = async (table: 'messages' | 'channel_overwrites' | 'read_states' | 'channels') =>
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number | string>().as('n'))
          .where(table === 'channels' ? 'id' : 'channel_id', '=', c.body.id)
          .executeTakeFirstOrThrow()
      ).n;
    for (const t of ['messages', 'channel_overwrites', 'read_states', 'channels'] as const)
      expect(Number(await left(t)), t).toBe(0);
    expectError(await h.as(member.token).get(`/channels/${c.body.id}`), 404, 'NOT_FOUND');
    expectError(await owner.app.delete(`/channels/${c.body.id}`), 404, 'NOT_FOUND');
    // Other channels keep their messages.
    await expectStatus(
      await h.as(member.token).post(`/channels/${g.generalId}/messages`, { content: 'still here' }),
      200,
    );
  });

  it('a DM channel is not a guild channel: 404 on the admin routes', async () => {
    const dm = await expectStatus(
      await h.as(owner.token).post(`/users/${member.id}/dm`),
      200,
    ).catch(() => undefined);
    if (!dm) return; // owner and member share a guild from the tests above
    expectError(
      await owner.app.patch(`/channels/${dm.body.channelId}`, { name: 'x' }),
      404,
      'NOT_FOUND',
    );
    expectError(await owner.app.delete(`/channels/${dm.body.channelId}`), 404, 'NOT_FOUND');
  });

  it('overwrites: 200 Overwrite; CHANNEL_DELETE to who lost it, CHANNEL_CREATE to who gained it (revised by D70)', async () => {
    const g = await makeAppGuild(owner);
    await join(h, g.id, member.id);
    ev.clear();
    const r = await expectStatus(
      await owner.app.put(`/channels/${g.generalId}/overwrites/${g.id}`, {
        allow: 0,
        deny: Permission.VIEW_CHANNEL,
      }),
      200,
    );
    expect(r.body).toStrictEqual({ channelId: g.generalId, roleId: g.id, allow: 0, deny: 1 });
    // D70: the member lost #general: CHANNEL_DELETE to it alone; the owner's view is unchanged.
    expect(ev.all).toEqual([
      {
        type: 'CHANNEL_DELETE',
        data: { id: g.generalId, guildId: g.id },
        audience: { kind: 'users', userIds: [member.id] },
      },
    ]);
    // The member lost the channel (D12: 403 for a channel it cannot VIEW).
    expectError(await h.as(member.token).get(`/channels/${g.generalId}`), 403, 'FORBIDDEN');
    expect((await member.app.get(`/guilds/${g.id}`)).body.channels).toEqual([]);
    // Replaced, not added: allow it back — the member gains it: CHANNEL_CREATE with its topic.
    ev.clear();
    await expectStatus(
      await owner.app.put(`/channels/${g.generalId}/overwrites/${g.id}`, { allow: 1, deny: 0 }),
      200,
    );
    await expectStatus(await h.as(member.token).get(`/channels/${g.generalId}`), 200);
    expect(ev.all).toEqual([
      {
        type: 'CHANNEL_CREATE',
        data: { id: g.generalId, guildId: g.id, name: 'general', type: 0, topic: '' },
        audience: { kind: 'users', userIds: [member.id] },
      },
    ]);
    // A role of another guild, unknown role or channel: 404.
    const other = await makeAppGuild(owner);
    expectError(
      await owner.app.put(`/channels/${g.generalId}/overwrites/${other.id}`, { allow: 0, deny: 0 }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await owner.app.put(`/channels/9007199254740991/overwrites/${g.id}`, { allow: 0, deny: 0 }),
      404,
      'NOT_FOUND',
    );
  });

  it('roles: create 201, patch, delete 204 (off members and overwrites); GUILD_ROLES_UPDATE', async () => {
    const g = await makeAppGuild(owner);
    await join(h, g.id, member.id);
    ev.clear();
    const role = await expectStatus(
      await owner.app.post(`/guilds/${g.id}/roles`, { name: 'mod', permissions: 7 }),
      201,
    );
    // D58: a new role goes in just above @everyone, with no colour, not mentionable.
    const rank = { position: 1, color: null, mentionable: false };
    expect(role.body).toStrictEqual({ id: role.body.id, name: 'mod', permissions: 7, ...rank });
    const everyone = {
      id: g.id,
      name: '@everyone',
      permissions: DEFAULT_EVERYONE_PERMISSIONS,
      position: 0,
      color: null,
      mentionable: false,
    };
    expect(ev.of('GUILD_ROLES_UPDATE')).toEqual([
      {
        type: 'GUILD_ROLES_UPDATE',
        data: { guildId: g.id, roles: [everyone, role.body] },
        audience: { kind: 'guild', guildId: g.id },
      },
    ]);
    ev.clear();
    const p = await expectStatus(
      await owner.app.patch(`/roles/${role.body.id}`, { name: 'moderator' }),
      200,
    );
    expect(p.body).toStrictEqual({ id: role.body.id, name: 'moderator', permissions: 7, ...rank });
    const p2 = await expectStatus(
      await owner.app.patch(`/roles/${role.body.id}`, { permissions: 3 }),
      200,
    );
    expect(p2.body).toStrictEqual({ id: role.body.id, name: 'moderator', permissions: 3, ...rank });
    expect(ev.of('GUILD_ROLES_UPDATE').at(-1)?.data.roles).toEqual([everyone, p2.body]);
    expect((await owner.app.get(`/guilds/${g.id}`)).body.roles).toEqual([everyone, p2.body]);

    // Held by a member and used in an overwrite; deleting it removes both.
    await expectStatus(
      await owner.app.put(`/guilds/${g.id}/members/${member.id}/roles`, { roles: [role.body.id] }),
      200,
    );
    await expectStatus(
      await owner.app.put(`/channels/${g.generalId}/overwrites/${role.body.id}`, {
        allow: 0,
        deny: 2,
      }),
      200,
    );
    ev.clear();
    await expectStatus(await owner.app.delete(`/roles/${role.body.id}`), 204);
    expect(ev.of('GUILD_ROLES_UPDATE')[0]?.data.roles).toEqual([everyone]);
    const m = await expectStatus(
      await h.as(owner.token).get(`/guilds/${g.id}/members/${member.id}`),
      200,
    );
    expect(m.body.roles).toEqual([]);
    const db = h.services.domain.db;
    expect(
      await db
        .selectFrom('channel_overwrites')
        .selectAll()
        .where('role_id', '=', role.body.id)
        .execute(),
    ).toEqual([]);
    // The member can send again (the deny went with the role).
    await expectStatus(
      await h.as(member.token).post(`/channels/${g.generalId}/messages`, { content: 'free' }),
      200,
    );
    expectError(await owner.app.delete(`/roles/${role.body.id}`), 404, 'NOT_FOUND');
  });

  it('@everyone: its permissions may change; renaming or deleting it → 400', async () => {
    const g = await makeAppGuild(owner);
    await join(h, g.id, member.id);
    const r = await expectStatus(
      await owner.app.patch(`/roles/${g.id}`, { permissions: 1 | 4 }),
      200,
    );
    // D58 adds position, color and mentionable
    expect(r.body).toStrictEqual({
      id: g.id,
      name: '@everyone',
      permissions: 5,
      position: 0,
      color: null,
      mentionable: false,
    });
    // The member lost SEND_MESSAGES.
    expectError(
      await h.as(member.token).post(`/channels/${g.generalId}/messages`, { content: 'x' }),
      403,
      'FORBIDDEN',
    );
    expect((await member.app.get(`/guilds/${g.id}`)).body.myPermissions).toBe(5);
    // Same name is accepted (a form that sends everything back).
    await expectStatus(
      await owner.app.patch(`/roles/${g.id}`, { name: '@everyone', permissions: 7 }),
      200,
    );
    const rename = await owner.app.patch(`/roles/${g.id}`, { name: 'everybody' });
    expectError(rename, 400, 'VALIDATION_ERROR');
    expect(rename.body.error.details).toEqual([{ field: 'name', problem: expect.any(String) }]);
    expectError(await owner.app.delete(`/roles/${g.id}`), 400, 'VALIDATION_ERROR');
    expect((await owner.app.get(`/guilds/${g.id}`)).body.roles[0]).toEqual({
      id: g.id,
      name: '@everyone',
      permissions: 7,
      position: 0,
      color: null,
      mentionable: false,
    });
  });

  it('member roles: PUT → 200 MemberRoles; GUILD_MEMBER_UPDATE; bad roles 400; non-member 404', async () => {
    const g = await makeAppGuild(owner);
    await join(h, g.id, member.id);
    const a = await expectStatus(
      await owner.app.post(`/guilds/${g.id}/roles`, { name: 'a', permissions: 0 }),
      201,
    );
    const b = await expectStatus(
      await owner.app.post(`/guilds/${g.id}/roles`, { name: 'b', permissions: 0 }),
      201,
    );
    ev.clear();
    const r = await expectStatus(
      await owner.app.put(`/guilds/${g.id}/members/${member.id}/roles`, {
        roles: [b.body.id, a.body.id, g.id],
      }),
      200,
    );
    const expected = {
      guildId: g.id,
      user: { id: member.id, name: 'member', avatar: AVATAR },
      // @everyone is implicit and never listed (D20); ids ascending.
      roles: [a.body.id, b.body.id],
    };
    expect(r.body).toStrictEqual(expected);
    expect(ev.of('GUILD_MEMBER_UPDATE')).toEqual([
      { type: 'GUILD_MEMBER_UPDATE', data: expected, audience: { kind: 'guild', guildId: g.id } },
    ]);
    // D70: the member's own fields and permissions, no channels.
    expect(ev.toUser('GUILD_UPDATE', member.id).map((e) => e.data)).toEqual([
      { id: g.id, name: 'Guild', ownerId: owner.id, myPermissions: DEFAULT_EVERYONE_PERMISSIONS },
    ]);
    expect(ev.toUser('GUILD_UPDATE', owner.id)).toHaveLength(0);
    const single = await expectStatus(
      await h.as(owner.token).get(`/guilds/${g.id}/members/${member.id}`),
      200,
    );
    expect(single.body.roles).toEqual([a.body.id, b.body.id]);
    // Replaced by the next PUT.
    const r2 = await expectStatus(
      await owner.app.put(`/guilds/${g.id}/members/${member.id}/roles`, { roles: [] }),
      200,
    );
    expect(r2.body.roles).toEqual([]);
    const other = await makeAppGuild(owner);
    const bad = await owner.app.put(`/guilds/${g.id}/members/${member.id}/roles`, {
      roles: [other.id],
    });
    expectError(bad, 400, 'VALIDATION_ERROR');
    expect(bad.body.error.details[0].field).toBe('roles');
    expectError(
      await owner.app.put(`/guilds/${g.id}/members/${outsider.id}/roles`, { roles: [] }),
      404,
      'NOT_FOUND',
    );
  });

  it('DELETE /guilds/:id: owner only; everything goes; GUILD_DELETE to every member, each bot its own removal', async () => {
    const g = await makeAppGuild(owner);
    await join(h, g.id, member.id);
    const botA = await makeBot(h, owner.id, 'bot-a');
    const botB = await makeBot(h, member.id, 'bot-b');
    await join(h, g.id, botA.userId);
    await join(h, g.id, botB.userId);
    const db = h.services.domain.db;
    for (const bot of [botA, botB])
      await expectStatus(
        await h.admin.put(`/bots/${bot.id}/webhook`, { url: 'http://127.0.0.1:9/hook' }),
        200,
      );
    const role = await expectStatus(
      await owner.app.post(`/guilds/${g.id}/roles`, { name: 'r', permissions: 1 }),
      201,
    );
    await expectStatus(
      await owner.app.put(`/guilds/${g.id}/members/${member.id}/roles`, { roles: [role.body.id] }),
      200,
    );
    await expectStatus(
      await owner.app.put(`/channels/${g.generalId}/overwrites/${role.body.id}`, {
        allow: 1,
        deny: 0,
      }),
      200,
    );
    await expectStatus(
      await h.as(member.token).post(`/channels/${g.generalId}/messages`, { content: 'x' }),
      200,
    );
    await expectStatus(await owner.app.post(`/guilds/${g.id}/invites`, {}), 201);
    // D70: a ban names someone the owner shares a guild with (here: joined, then banned).
    await join(h, g.id, outsider.id);
    await expectStatus(await owner.app.put(`/guilds/${g.id}/bans/${outsider.id}`), 204);
    expectError(await member.app.delete(`/guilds/${g.id}`), 403, 'FORBIDDEN');
    expectError(await outsider.app.delete(`/guilds/${g.id}`), 403, 'FORBIDDEN');

    ev.clear();
    await expectStatus(await owner.app.delete(`/guilds/${g.id}`), 204);
    const del = ev.of('GUILD_DELETE');
    expect(del).toHaveLength(1);
    expect(del[0]?.data).toStrictEqual({ id: g.id });
    expect(del[0]?.audience).toEqual({
      kind: 'users',
      userIds: [owner.id, member.id].sort((a, b) => a - b),
    });
    // D34: each bot gets its own GUILD_MEMBER_REMOVE (its last event there): the deliveries
    // stored for its webhook. Bot A (lower id) leaves first, so B also sees A's removal.
    const removals = async (botId: number) =>
      (
        await db
          .selectFrom('webhook_deliveries')
          .select('body')
          .where('bot_id', '=', botId)
          .where('event_type', '=', 'GUILD_MEMBER_REMOVE')
          .orderBy('id', 'asc')
          .execute()
      )
        .map((r) => JSON.parse(r.body).data)
        // The banned outsider's removal came before the deletion: not what this test counts.
        .filter((d) => d.user.id !== outsider.id);
    const [first, second] = [botA, botB].sort((a, b) => a.userId - b.userId) as [
      typeof botA,
      typeof botB,
    ];
    // D56: a bot member's user carries isBot: true
    expect(await removals(first.id)).toEqual([
      {
        guildId: g.id,
        user: { id: first.userId, name: expect.any(String), avatar: AVATAR, isBot: true },
      },
    ]);
    expect((await removals(second.id)).map((d) => d.user.id)).toEqual([
      first.userId,
      second.userId,
    ]);
    expectError(await owner.app.get(`/guilds/${g.id}`), 404, 'NOT_FOUND');
    expectError(await h.as(botA.token).get(`/guilds/${g.id}/channels`), 404, 'NOT_FOUND');
    for (const [table, col] of [
      ['guilds', 'id'],
      ['channels', 'guild_id'],
      ['roles', 'guild_id'],
      ['members', 'guild_id'],
      ['member_roles', 'guild_id'],
      ['messages', 'guild_id'],
      ['invites', 'guild_id'],
      ['bans', 'guild_id'],
    ] as const) {
      const n = await db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where(col, '=', g.id)
        .executeTakeFirstOrThrow();
      expect(Number(n.n), table).toBe(0);
    }
    const ow = await db
      .selectFrom('channel_overwrites')
      .selectAll()
      .where('channel_id', '=', g.generalId)
      .execute();
    expect(ow).toEqual([]);
    expectError(await owner.app.delete(`/guilds/${g.id}`), 404, 'NOT_FOUND');
  });
});
