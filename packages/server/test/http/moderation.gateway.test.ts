import { Permission } from '@parley/protocol';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  dbDescribe,
  expectError,
  expectStatus,
  join,
  makeBot,
  makeUser,
  type Reply,
} from '../helpers/harness.js';
import { startLiveServer, type GatewayClient, type LiveServer } from '../helpers/live-server.js';

// Issue 23, "a bot moderating over its gateway-connected session": a bot whose role holds
// MODERATE_MEMBERS, KICK_MEMBERS, BAN_MEMBERS, MANAGE_MESSAGES and MANAGE_ROLES (D57), connected
// to the gateway, times a member out, deletes their message, kicks, bans and edits a role under
// /api/v1 (D59) with X-Audit-Log-Reason; it receives the events of what it did — D34's
// MESSAGE_DELETE and GUILD_MEMBER_REMOVE always, GUILD_MEMBER_UPDATE (with timeoutUntil, D58) and
// GUILD_ROLES_UPDATE because it subscribed to them (D63) — and the audit log lists each action
// with its reason, actorType "bot" and the bot user's id (D60). A second bot that subscribes to
// nothing sees only D34's eight types of the same actions (D56).
const P = Permission;
const MOD_BITS =
  P.MODERATE_MEMBERS | P.KICK_MEMBERS | P.BAN_MEMBERS | P.MANAGE_MESSAGES | P.MANAGE_ROLES;
const EIGHT = new Set([
  'MESSAGE_CREATE',
  'MESSAGE_UPDATE',
  'MESSAGE_DELETE',
  'DM_MESSAGE_CREATE',
  'DM_MESSAGE_UPDATE',
  'DM_MESSAGE_DELETE',
  'GUILD_MEMBER_ADD',
  'GUILD_MEMBER_REMOVE',
]);
const AVATAR = 'http://parley.test/cdn/avatars/default.png';

dbDescribe('a bot moderating over its gateway session (D57–D60, D63)', () => {
  let live: LiveServer;

  beforeAll(async () => {
    live = await startLiveServer();
  });
  afterAll(async () => live.close());

  /** A bot's request under /api/v1 with an X-Audit-Log-Reason header (URL-encoded, D59). */
  const withReason = (
    token: string,
    method: 'PUT' | 'DELETE' | 'PATCH',
    url: string,
    reason: string,
    body?: unknown,
  ): Promise<Reply> =>
    live.h.request({
      method,
      url: '/api/v1' + url,
      headers: {
        authorization: `Bearer ${token}`,
        'x-audit-log-reason': encodeURIComponent(reason),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });

  /** The next dispatch of type `t`, skipping none: the bot's session sees events in order. */
  const expectDispatch = async (c: GatewayClient, t: string) => {
    const f = await c.dispatch(t, 15_000);
    return f.d;
  };

  it('times out, deletes, kicks, bans and edits a role; sees each event; the audit log has each with its reason', async () => {
    const { h } = live;
    const owner = await makeUser(h, 'owner');
    const g = await expectStatus(
      await h.people(owner.token).post('/guilds', { name: 'Mods' }),
      201,
    );
    const guildId = g.body.id as number;
    const channelId = g.body.channels[0].id as number;
    const mkRole = async (name: string, permissions: number): Promise<number> =>
      (
        await expectStatus(
          await h.as(owner.token).post(`/guilds/${guildId}/roles`, { name, permissions }),
          201,
        )
      ).body.id;
    // D58: a role is created just above @everyone, so the later one ranks lower than "modbots".
    const helpers = await mkRole('helpers', 0);
    const modbots = await mkRole('modbots', MOD_BITS);
    const order = await expectStatus(
      await h.as(owner.token).patch(`/guilds/${guildId}/roles`, [
        { id: helpers, position: 1 },
        { id: modbots, position: 2 },
      ]),
      200,
    );
    expect(order.body.roles.map((r: { id: number }) => r.id).slice(1)).toEqual([helpers, modbots]);

    const bot = await makeBot(h, owner.id, 'modbot');
    const quiet = await makeBot(h, owner.id, 'quietbot');
    const noisy = await makeUser(h, 'noisy');
    const kicked = await makeUser(h, 'kicked');
    const banned = await makeUser(h, 'banned');
    await join(h, guildId, bot.userId, [modbots]);
    await join(h, guildId, quiet.userId);
    await join(h, guildId, noisy.id, [helpers]);
    await join(h, guildId, kicked.id);
    await join(h, guildId, banned.id);

    // D63: the moderating bot subscribes to the member and role updates it causes.
    const sub = await expectStatus(
      await h.as(bot.token).patch('/bot/me', {
        events: ['GUILD_MEMBER_UPDATE', 'GUILD_ROLES_UPDATE'],
      }),
      200,
    );
    expect(sub.body.events).toEqual(['GUILD_MEMBER_UPDATE', 'GUILD_ROLES_UPDATE']);

    const c = await live.connect(bot.token);
    const ready = await c.ready();
    expect(ready.frame.d.guilds).toEqual([{ id: guildId }]);
    const q = await live.connect(quiet.token);
    await q.ready();

    // The member says something the bot will remove; the bot sees it (D34).
    const said = await expectStatus(
      await h.as(noisy.token).post(`/channels/${channelId}/messages`, { content: 'spam spam' }),
      200,
    );
    expect((await expectDispatch(c, 'MESSAGE_CREATE')).id).toBe(said.body.id);

    // 1. Time out (MODERATE_MEMBERS, D58): GUILD_MEMBER_UPDATE with timeoutUntil.
    const until = new Date(live.clock.now() + 10 * 60_000).toISOString();
    const t = await expectStatus(
      await withReason(
        bot.token,
        'PATCH',
        `/guilds/${guildId}/members/${noisy.id}`,
        'spam: 10 min',
        {
          timeoutUntil: until,
        },
      ),
      200,
    );
    expect(t.body).toMatchObject({ guildId, user: { id: noisy.id }, roles: [helpers] });
    expect(Date.parse(t.body.timeoutUntil)).toBe(Date.parse(until));
    const upd = await expectDispatch(c, 'GUILD_MEMBER_UPDATE');
    expect(upd).toStrictEqual({
      guildId,
      user: { id: noisy.id, name: 'noisy', avatar: AVATAR },
      roles: [helpers],
      timeoutUntil: t.body.timeoutUntil,
    });
    // …and the member can only read now (D58).
    expectError(
      await h.as(noisy.token).post(`/channels/${channelId}/messages`, { content: 'more' }),
      403,
      'TIMED_OUT',
    );

    // 2. Delete their message (MANAGE_MESSAGES, D59): MESSAGE_DELETE {id, channelId, guildId}.
    await expectStatus(
      await withReason(
        bot.token,
        'DELETE',
        `/channels/${channelId}/messages/${said.body.id}`,
        'spam removed',
      ),
      204,
    );
    expect(await expectDispatch(c, 'MESSAGE_DELETE')).toStrictEqual({
      id: said.body.id,
      channelId,
      guildId,
    });

    // 3. Kick (KICK_MEMBERS): GUILD_MEMBER_REMOVE {guildId, user} (D34, D35).
    await expectStatus(
      await withReason(bot.token, 'DELETE', `/guilds/${guildId}/members/${kicked.id}`, 'ä kick ✓'),
      204,
    );
    expect(await expectDispatch(c, 'GUILD_MEMBER_REMOVE')).toStrictEqual({
      guildId,
      user: { id: kicked.id, name: 'kicked', avatar: AVATAR },
    });

    // 4. Ban (BAN_MEMBERS): the member is removed — GUILD_MEMBER_REMOVE — and cannot rejoin.
    await expectStatus(
      await withReason(bot.token, 'PUT', `/guilds/${guildId}/bans/${banned.id}`, 'raid', {}),
      204,
    );
    expect(await expectDispatch(c, 'GUILD_MEMBER_REMOVE')).toStrictEqual({
      guildId,
      user: { id: banned.id, name: 'banned', avatar: AVATAR },
    });
    const bans = await expectStatus(await h.as(bot.token).get(`/guilds/${guildId}/bans`), 200);
    expect(bans.body.bans.map((b: { user: { id: number } }) => b.user.id)).toEqual([banned.id]);

    // 5. Edit a role below its own (MANAGE_ROLES, D58): GUILD_ROLES_UPDATE {guildId, roles}.
    const edited = await expectStatus(
      await withReason(bot.token, 'PATCH', `/roles/${helpers}`, 'recolour', {
        name: 'trusted',
        color: 0x33aa55,
        mentionable: true,
      }),
      200,
    );
    expect(edited.body).toMatchObject({ id: helpers, name: 'trusted', color: 0x33aa55 });
    const roles = await expectDispatch(c, 'GUILD_ROLES_UPDATE');
    expect(roles.guildId).toBe(guildId);
    expect(roles.roles.find((r: { id: number }) => r.id === helpers)).toMatchObject({
      name: 'trusted',
      color: 0x33aa55,
      mentionable: true,
      position: 1,
    });
    // Its own role and one above are out of its reach (D58): refused, nothing written.
    expectError(
      await withReason(bot.token, 'PATCH', `/roles/${modbots}`, 'self', { name: 'x' }),
      403,
      'FORBIDDEN',
    );

    // The end of the run: the person's next message — once it arrives, everything before it did.
    await expectStatus(
      await h.as(owner.token).post(`/channels/${channelId}/messages`, { content: 'done' }),
      200,
    );
    expect((await expectDispatch(c, 'MESSAGE_CREATE')).content).toBe('done');
    expect(c.pending().filter((f) => f.op === 0)).toEqual([]);

    // D56/D63: the bot that subscribed to nothing saw D34's eight types only, the same actions.
    const quietTypes: string[] = [];
    for (;;) {
      const f = await q.next({ timeoutMs: 15_000 });
      if (f.op !== 0) continue;
      quietTypes.push(f.t as string);
      if (f.t === 'MESSAGE_CREATE' && f.d.content === 'done') break;
    }
    expect(quietTypes).toEqual([
      'MESSAGE_CREATE',
      'MESSAGE_DELETE',
      'GUILD_MEMBER_REMOVE',
      'GUILD_MEMBER_REMOVE',
      'MESSAGE_CREATE',
    ]);
    expect(quietTypes.every((x) => EIGHT.has(x))).toBe(true);

    // D60: the audit log lists each action, newest first, by the bot with its reason.
    const log = await expectStatus(
      await h.as(owner.token).get(`/guilds/${guildId}/audit-log?actorId=${bot.userId}`),
      200,
    );
    expect(
      log.body.entries.map((e: { action: string; targetId: number; reason: string | null }) => [
        e.action,
        e.targetId,
        e.reason,
      ]),
    ).toEqual([
      ['ROLE_UPDATE', helpers, 'recolour'],
      ['MEMBER_BAN_ADD', banned.id, 'raid'],
      ['MEMBER_KICK', kicked.id, 'ä kick ✓'],
      ['MESSAGE_DELETE', noisy.id, 'spam removed'],
      ['MEMBER_TIMEOUT', noisy.id, 'spam: 10 min'],
    ]);
    for (const e of log.body.entries)
      expect(e).toMatchObject({ actorType: 'bot', actorId: bot.userId });
    const timeout = log.body.entries[4];
    expect(timeout.changes).toEqual([{ key: 'timeoutUntil', old: null, new: t.body.timeoutUntil }]);
    const roleChange = log.body.entries[0];
    expect(roleChange.changes).toEqual(
      expect.arrayContaining([
        { key: 'name', old: 'helpers', new: 'trusted' },
        { key: 'color', old: null, new: 0x33aa55 },
      ]),
    );
    await c.close();
    await q.close();
  }, 120_000);
});
