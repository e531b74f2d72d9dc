import { Permission } from '@parley/protocol';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { FakeClock } from '../helpers/clock.js';
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

// D57–D60 over HTTP: bits instead of ADMINISTRATOR, rank (D58), time-outs with their end (fake
// clock), the audit entries of every action with their reason (D60), bots administering under
// /api/v1 (D59) and the D56 isBot marks.
const P = Permission;
const DAY = 86_400_000;

dbDescribe('roles with rank, time-outs and the audit log (D56–D60)', () => {
  let h: Harness;
  let clock: FakeClock;
  let owner: { id: number; token: string };
  let g: { id: number; channel: number };
  const api = (token: string | undefined) => h.as(token);
  const withReason = (
    token: string,
    method: 'PUT' | 'DELETE' | 'PATCH' | 'POST',
    url: string,
    reason: string,
    body?: unknown,
  ) =>
    h.request({
      method,
      url: '/api/v1' + url,
      headers: {
        authorization: `Bearer ${token}`,
        'x-audit-log-reason': encodeURIComponent(reason),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  const role = async (name: string, permissions: number): Promise<number> =>
    (
      await expectStatus(
        await api(owner.token).post(`/guilds/${g.id}/roles`, { name, permissions }),
        201,
      )
    ).body.id;
  const audit = async (q = '') =>
    (await expectStatus(await api(owner.token).get(`/guilds/${g.id}/audit-log${q}`), 200)).body;

  beforeAll(async () => {
    clock = new FakeClock();
    h = await createHarness({ clock });
  });
  afterAll(async () => {
    await h.close();
  });
  beforeEach(async () => {
    clock.advance(1000);
    owner = await makeUser(h, `owner${clock.ms}`);
    const guild = await expectStatus(
      await h.people(owner.token).post('/guilds', { name: 'Ranked' }),
      201,
    );
    g = { id: guild.body.id, channel: guild.body.channels[0].id };
  });

  it('D58: a moderator (not an administrator) kicks, bans and times out only members ranked below; the owner is above all', async () => {
    const mods = await role('mods', P.KICK_MEMBERS | P.BAN_MEMBERS | P.MODERATE_MEMBERS);
    const helpers = await role('helpers', 0); // created after: position 1, mods moved to 2
    const mod = await makeUser(h, `mod${clock.ms}`);
    const peer = await makeUser(h, `peer${clock.ms}`);
    const helper = await makeUser(h, `helper${clock.ms}`);
    const plain = await makeUser(h, `plain${clock.ms}`);
    await join(h, g.id, mod.id, [mods]);
    await join(h, g.id, peer.id, [mods]);
    await join(h, g.id, helper.id, [helpers]);
    await join(h, g.id, plain.id);
    const roles = (await expectStatus(await api(mod.token).get(`/guilds/${g.id}/roles`), 200)).body
      .roles;
    expect(roles.map((r: { id: number; position: number }) => [r.id, r.position])).toEqual([
      [g.id, 0],
      [helpers, 1],
      [mods, 2],
    ]);
    // Equal rank and the owner: refused, naming the reason.
    const same = await api(mod.token).delete(`/guilds/${g.id}/members/${peer.id}`);
    expectError(same, 403, 'FORBIDDEN');
    expect(same.body.error.message).toMatch(/ranked below/);
    expectError(
      await api(mod.token).delete(`/guilds/${g.id}/members/${owner.id}`),
      409,
      'CONFLICT',
    );
    // Below: allowed, without ADMINISTRATOR.
    await expectStatus(await api(mod.token).delete(`/guilds/${g.id}/members/${plain.id}`), 204);
    await expectStatus(await api(mod.token).put(`/guilds/${g.id}/bans/${helper.id}`), 204);
    // A member without the bit: 403 naming it.
    const none = await api(peer.token).patch(`/guilds/${g.id}/roles`, [
      { id: helpers, position: 1 },
    ]);
    expectError(none, 403, 'FORBIDDEN');
    expect(none.body.error.message).toMatch(/MANAGE_ROLES/);
  });

  it('D58: ADMINISTRATOR grants bits, not rank: a lower administrator cannot strip a higher one', async () => {
    const low = await role('low-admins', P.ADMINISTRATOR);
    const high = await role('high-admins', P.ADMINISTRATOR); // high at 1, low moved to 2
    // Put high above low.
    const order = await expectStatus(
      await api(owner.token).patch(`/guilds/${g.id}/roles`, [{ id: high, position: 2 }]),
      200,
    );
    expect(order.body.roles.map((r: { id: number }) => r.id)).toEqual([g.id, low, high]);
    const a = await makeUser(h, `lowadmin${clock.ms}`);
    const b = await makeUser(h, `highadmin${clock.ms}`);
    await join(h, g.id, a.id, [low]);
    await join(h, g.id, b.id, [high]);
    expectError(
      await api(a.token).put(`/guilds/${g.id}/members/${b.id}/roles`, { roles: [] }),
      403,
      'FORBIDDEN',
    );
    expectError(await api(a.token).put(`/guilds/${g.id}/bans/${b.id}`), 403, 'FORBIDDEN');
    expectError(await api(a.token).delete(`/roles/${high}`), 403, 'FORBIDDEN');
    expectError(await api(a.token).patch(`/roles/${low}`, { name: 'mine' }), 403, 'FORBIDDEN');
    // Moving a role to (or above) one's own rank is refused; the higher one may act downwards.
    expectError(
      await api(a.token).patch(`/guilds/${g.id}/roles`, [{ id: low, position: 2 }]),
      403,
      'FORBIDDEN',
    );
    await expectStatus(
      await api(b.token).put(`/guilds/${g.id}/members/${a.id}/roles`, { roles: [] }),
      200,
    );
    await expectStatus(
      await api(b.token).patch(`/roles/${low}`, { color: 0xff8800, mentionable: true }),
      200,
    );
    // @everyone stays at 0; unknown bits are 400 (D57).
    expectError(
      await api(owner.token).patch(`/guilds/${g.id}/roles`, [{ id: g.id, position: 1 }]),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await api(owner.token).post(`/guilds/${g.id}/roles`, { name: 'x', permissions: 1 << 17 }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('D58: a role cannot be given bits its creator lacks (MANAGE_ROLES alone grants nothing more)', async () => {
    const managers = await role('managers', P.MANAGE_ROLES | P.KICK_MEMBERS);
    const m = await makeUser(h, `manager${clock.ms}`);
    await join(h, g.id, m.id, [managers]);
    const refused = await api(m.token).post(`/guilds/${g.id}/roles`, {
      name: 'evil',
      permissions: P.ADMINISTRATOR,
    });
    expectError(refused, 403, 'FORBIDDEN');
    expect(refused.body.error.message).toMatch(/ADMINISTRATOR/);
    await expectStatus(
      await api(m.token).post(`/guilds/${g.id}/roles`, {
        name: 'kickers',
        permissions: P.KICK_MEMBERS,
      }),
      201,
    );
  });

  it('D58: a time-out stops sending and typing with 403 TIMED_OUT until it ends (fake clock); reading goes on', async () => {
    const mods = await role('mods', P.MODERATE_MEMBERS);
    const mod = await makeUser(h, `tmod${clock.ms}`);
    const m = await makeUser(h, `talker${clock.ms}`);
    await join(h, g.id, mod.id, [mods]);
    await join(h, g.id, m.id);
    const until = new Date(clock.ms + 60_000).toISOString();
    const t = await expectStatus(
      await withReason(mod.token, 'PATCH', `/guilds/${g.id}/members/${m.id}`, 'cool down', {
        timeoutUntil: until,
      }),
      200,
    );
    expect(t.body).toMatchObject({ guildId: g.id, user: { id: m.id }, timeoutUntil: until });
    expect((await api(m.token).get(`/guilds/${g.id}/members/${m.id}`)).body.timeoutUntil).toBe(
      until,
    );
    expectError(
      await api(m.token).post(`/channels/${g.channel}/messages`, { content: 'hi' }),
      403,
      'TIMED_OUT',
    );
    expectError(await h.people(m.token).post(`/channels/${g.channel}/typing`), 403, 'TIMED_OUT');
    await expectStatus(await api(m.token).get(`/channels/${g.channel}/messages`), 200);
    // Its end: one millisecond later, everything is back, and the field is gone.
    clock.advance(60_001);
    await expectStatus(
      await api(m.token).post(`/channels/${g.channel}/messages`, { content: 'back' }),
      200,
    );
    expect(
      (await api(m.token).get(`/guilds/${g.id}/members/${m.id}`)).body.timeoutUntil,
    ).toBeUndefined();
    // At most 28 days; null ends one early; the owner cannot be timed out.
    expectError(
      await api(mod.token).patch(`/guilds/${g.id}/members/${m.id}`, {
        timeoutUntil: new Date(clock.ms + 29 * DAY).toISOString(),
      }),
      400,
      'VALIDATION_ERROR',
    );
    await expectStatus(
      await api(mod.token).patch(`/guilds/${g.id}/members/${m.id}`, {
        timeoutUntil: new Date(clock.ms + 28 * DAY).toISOString(),
      }),
      200,
    );
    expectError(
      await api(m.token).post(`/channels/${g.channel}/messages`, { content: 'x' }),
      403,
      'TIMED_OUT',
    );
    await expectStatus(
      await api(mod.token).patch(`/guilds/${g.id}/members/${m.id}`, { timeoutUntil: null }),
      200,
    );
    await expectStatus(
      await api(m.token).post(`/channels/${g.channel}/messages`, { content: 'free' }),
      200,
    );
    expectError(
      await api(mod.token).patch(`/guilds/${g.id}/members/${owner.id}`, { timeoutUntil: null }),
      409,
      'CONFLICT',
    );
  });

  it('D60: every action writes its entry with its reason, newest first, filtered by action and actor; VIEW_AUDIT_LOG needed', async () => {
    const mods = await role(
      'mods',
      P.KICK_MEMBERS | P.BAN_MEMBERS | P.MODERATE_MEMBERS | P.MANAGE_MESSAGES,
    );
    const mod = await makeUser(h, `amod${clock.ms}`);
    const m = await makeUser(h, `victim${clock.ms}`);
    const n = await makeUser(h, `other${clock.ms}`);
    await join(h, g.id, mod.id, [mods]);
    await join(h, g.id, m.id);
    await join(h, g.id, n.id);
    const O = owner.token;
    const msg = await expectStatus(
      await api(m.token).post(`/channels/${g.channel}/messages`, { content: 'spam' }),
      200,
    );
    const steps: Array<[string, Promise<unknown>]> = [];
    const act = async (
      action: string,
      token: string,
      method: 'PUT' | 'DELETE' | 'PATCH' | 'POST',
      url: string,
      body?: unknown,
    ) => {
      const r = await withReason(token, method, url, `why ${action} ✓`, body);
      expect(r.status, `${action} ${r.raw}`).toBeLessThan(300);
      steps.push([action, Promise.resolve(r)]);
      return r;
    };
    await act('GUILD_UPDATE', O, 'PATCH', `/guilds/${g.id}`, { name: 'Renamed' });
    const ch = await act('CHANNEL_CREATE', O, 'POST', `/guilds/${g.id}/channels`, { name: 'side' });
    await act('CHANNEL_UPDATE', O, 'PATCH', `/channels/${ch.body.id}`, { topic: 'topic' });
    await act('OVERWRITE_UPDATE', O, 'PUT', `/channels/${ch.body.id}/overwrites/${g.id}`, {
      allow: 0,
      deny: 1,
    });
    const r = await act('ROLE_CREATE', O, 'POST', `/guilds/${g.id}/roles`, {
      name: 'temp',
      permissions: 0,
    });
    await act('ROLE_UPDATE', O, 'PATCH', `/roles/${r.body.id}`, { name: 'temp2' });
    await act('MEMBER_ROLE_UPDATE', O, 'PUT', `/guilds/${g.id}/members/${n.id}/roles`, {
      roles: [r.body.id],
    });
    await act('ROLE_DELETE', O, 'DELETE', `/roles/${r.body.id}`);
    await act('CHANNEL_DELETE', O, 'DELETE', `/channels/${ch.body.id}`);
    const inv = await act('INVITE_CREATE', O, 'POST', `/guilds/${g.id}/invites`, {});
    await act('INVITE_DELETE', O, 'DELETE', `/invites/${inv.body.code}`);
    await act(
      'MESSAGE_DELETE',
      mod.token,
      'DELETE',
      `/channels/${g.channel}/messages/${msg.body.id}`,
    );
    await act('MEMBER_TIMEOUT', mod.token, 'PATCH', `/guilds/${g.id}/members/${m.id}`, {
      timeoutUntil: new Date(clock.ms + 1000).toISOString(),
    });
    await act('MEMBER_KICK', mod.token, 'DELETE', `/guilds/${g.id}/members/${m.id}`);
    await act('MEMBER_BAN_ADD', mod.token, 'PUT', `/guilds/${g.id}/bans/${n.id}`);
    await act('MEMBER_BAN_REMOVE', mod.token, 'DELETE', `/guilds/${g.id}/bans/${n.id}`);
    const log = await audit('?limit=100');
    const mine = log.entries.filter((e: { reason: string | null }) => e.reason?.startsWith('why'));
    // Newest first; exactly one entry per action, each with its reason and actor.
    expect(mine.map((e: { action: string }) => e.action)).toEqual(steps.map(([a]) => a).reverse());
    for (const e of mine) {
      expect(e.reason).toBe(`why ${e.action} ✓`);
      expect(e.actorType).toBe('user');
      expect(typeof e.createdAt).toBe('string');
    }
    const kick = mine.find((e: { action: string }) => e.action === 'MEMBER_KICK');
    expect(kick).toMatchObject({ actorId: mod.id, targetId: m.id, changes: [] });
    expect(mine.find((e: { action: string }) => e.action === 'GUILD_UPDATE').changes).toEqual([
      { key: 'name', old: 'Ranked', new: 'Renamed' },
    ]);
    // Filters.
    const kicks = await audit(`?action=MEMBER_KICK`);
    expect(kicks.entries.map((e: { id: number }) => e.id)).toEqual([kick.id]);
    const byMod = await audit(`?actorId=${mod.id}`);
    expect(byMod.entries.every((e: { actorId: number }) => e.actorId === mod.id)).toBe(true);
    expect(byMod.entries).toHaveLength(5);
    const page = await audit('?limit=2');
    expect(page.entries).toHaveLength(2);
    expect(page.hasMore).toBe(true);
    const next = await audit(`?limit=2&before=${page.entries[1].id}`);
    expect(next.entries[0].id).toBeLessThan(page.entries[1].id);
    // Without VIEW_AUDIT_LOG: 403 naming it. A reason over 512 characters: 400.
    const denied = await api(mod.token).get(`/guilds/${g.id}/audit-log`);
    expectError(denied, 403, 'FORBIDDEN');
    expect(denied.body.error.message).toMatch(/VIEW_AUDIT_LOG/);
    expectError(
      await withReason(O, 'PATCH', `/guilds/${g.id}`, 'x'.repeat(513), { name: 'n' }),
      400,
      'VALIDATION_ERROR',
    );
    // A refused action writes nothing.
    expect((await audit()).entries[0].id).toBe(log.entries[0].id);
  });

  it('D59/D60: a bot administers under /api/v1 by its bits (actorType bot); GET guild and roles; D56 isBot on its author and member entry', async () => {
    const botRole = await role('bots', P.KICK_MEMBERS | P.MANAGE_MESSAGES);
    const bot = await makeBot(h, owner.id, `modbot${clock.ms}`);
    const m = await makeUser(h, `target${clock.ms}`);
    await join(h, g.id, bot.userId, [botRole]);
    await join(h, g.id, m.id);
    const guild = await expectStatus(await api(bot.token).get(`/guilds/${g.id}`), 200);
    expect(guild.body).toMatchObject({
      id: g.id,
      ownerId: owner.id,
      bots: [bot.userId],
      myPermissions: expect.any(Number),
    });
    const roles = await expectStatus(await api(bot.token).get(`/guilds/${g.id}/roles`), 200);
    expect(roles.body.roles.map((r: { name: string }) => r.name)).toEqual(['@everyone', 'bots']);
    // Without the bit: refused by bits, not by being a bot.
    expectError(await api(bot.token).put(`/guilds/${g.id}/bans/${m.id}`), 403, 'FORBIDDEN');
    const said = await expectStatus(
      await api(m.token).post(`/channels/${g.channel}/messages`, { content: 'bad' }),
      200,
    );
    await expectStatus(
      await withReason(
        bot.token,
        'DELETE',
        `/channels/${g.channel}/messages/${said.body.id}`,
        'auto-mod',
      ),
      204,
    );
    await expectStatus(
      await withReason(bot.token, 'DELETE', `/guilds/${g.id}/members/${m.id}`, 'auto-kick'),
      204,
    );
    const log = await audit();
    expect(log.entries.slice(0, 2)).toMatchObject([
      {
        action: 'MEMBER_KICK',
        actorType: 'bot',
        actorId: bot.userId,
        targetId: m.id,
        reason: 'auto-kick',
      },
      {
        action: 'MESSAGE_DELETE',
        actorType: 'bot',
        actorId: bot.userId,
        targetId: m.id,
        reason: 'auto-mod',
      },
    ]);
    // D56: the bot's own message says isBot: true; a person's author has no such field.
    const b = await expectStatus(
      await api(bot.token).post(`/channels/${g.channel}/messages`, { content: 'beep' }),
      200,
    );
    expect(b.body.author).toEqual({ id: bot.userId, name: expect.any(String), isBot: true });
    const list = await expectStatus(
      await api(owner.token).get(`/channels/${g.channel}/messages?limit=1`),
      200,
    );
    expect(list.body.messages[0].author.isBot).toBe(true);
    const p = await expectStatus(
      await api(owner.token).post(`/channels/${g.channel}/messages`, { content: 'hi' }),
      200,
    );
    expect(p.body.author).toEqual({ id: owner.id, name: expect.any(String) });
    const members = await expectStatus(await api(bot.token).get(`/guilds/${g.id}/members`), 200);
    const byId = new Map(
      members.body.members.map((e: { user: { id: number } }) => [e.user.id, e.user]),
    );
    expect(byId.get(bot.userId)).toMatchObject({ isBot: true });
    expect(Object.keys(byId.get(owner.id) as object).sort()).toEqual(['avatar', 'id', 'name']);
  });

  it("D60: the operator's changes are in the guild's log (actorType operator, actorId null) and in the operator's own log with every other /admin/v1 change", async () => {
    const r = await h.request({
      method: 'PATCH',
      url: `/admin/v1/guilds/${g.id}`,
      headers: {
        authorization: 'Bearer test-admin-token-0123456789',
        'content-type': 'application/json',
        'x-audit-log-reason': 'support%20ticket',
      },
      payload: JSON.stringify({ name: 'Op' }),
    });
    expect(r.status).toBe(200);
    const u = await expectStatus(
      await h.admin.post('/users', { name: `opmade${clock.ms}`, password: 'a-long-password-1' }),
      201,
    );
    const entry = (await audit()).entries[0];
    expect(entry).toMatchObject({
      action: 'GUILD_UPDATE',
      actorType: 'operator',
      actorId: null,
      reason: 'support ticket',
    });
    const own = await expectStatus(await h.admin.get('/audit-log?limit=5'), 200);
    expect(own.body.entries[0]).toMatchObject({
      action: 'OPERATOR_CHANGE',
      actorType: 'operator',
      actorId: null,
    });
    expect(own.body.entries[0].changes[0]).toEqual({ key: 'change', new: 'POST /admin/v1/users' });
    // D54: no secret is copied into the log.
    expect(JSON.stringify(own.body.entries[0])).not.toContain('a-long-password-1');
    expect(own.body.entries[0].changes).toContainEqual({ key: 'name', new: `opmade${clock.ms}` });
    expect(u.body.id).toEqual(expect.any(Number));
    expect(own.body.entries[1]).toMatchObject({ action: 'GUILD_UPDATE', targetId: g.id });
    const theirs = await expectStatus(await h.admin.get(`/guilds/${g.id}/audit-log`), 200);
    expect(theirs.body.entries[0].id).toBe(entry.id);
  });

  it('D60: entries older than PARLEY_AUDIT_RETENTION_DAYS (default 180) go', async () => {
    const { pruneAudit } = await import('../../src/domain/audit/audit.service.js');
    expect(h.config.auditRetentionDays).toBe(180);
    await expectStatus(await api(owner.token).patch(`/guilds/${g.id}`, { name: 'Old' }), 200);
    clock.advance(181 * DAY);
    // (the owner's session has expired meanwhile: the operator renames and reads)
    await expectStatus(await h.admin.patch(`/guilds/${g.id}`, { name: 'New' }), 200);
    await pruneAudit(h.services.domain, h.config.auditRetentionDays);
    const left = (await expectStatus(await h.admin.get(`/guilds/${g.id}/audit-log`), 200)).body
      .entries;
    expect(left.map((e: { changes: Array<{ new: unknown }> }) => e.changes[0]?.new)).toEqual([
      'New',
    ]);
  });
});
