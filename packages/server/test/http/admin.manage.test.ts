import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_EVERYONE_PERMISSIONS } from '@parley/protocol';
import {
  expectError,
  expectStatus,
  join,
  makeBot,
  makeUser,
  type Harness,
} from '../helpers/harness.js';
import { startLiveServer, type GatewayClient, type LiveServer } from '../helpers/live-server.js';
import { dbDescribe } from '../helpers/harness.js';

// Issue #13 / D52: the operator reads, changes and deletes what it creates. A real listening
// server: bots watch what the deletions send them on real gateway connections (D34, D50).

let live: LiveServer;
let h: Harness;

async function guildWith(name: string, ownerId: number): Promise<{ id: number; channel: number }> {
  const g = await expectStatus(await h.admin.post('/guilds', { name, ownerId }), 201);
  const c = await expectStatus(
    await h.admin.post(`/guilds/${g.body.id}/channels`, { name: 'general' }),
    201,
  );
  return { id: g.body.id, channel: c.body.id };
}

/** A bot in the guild, connected and past READY. */
async function connectedBot(
  ownerId: number,
  guildId: number,
  name: string,
): Promise<{ bot: Awaited<ReturnType<typeof makeBot>>; gw: GatewayClient }> {
  const bot = await makeBot(h, ownerId, name);
  await join(h, guildId, bot.userId);
  const gw = await live.connect(bot.token);
  await gw.ready();
  return { bot, gw };
}

dbDescribe('operator API: lists, reads and changes (D52)', () => {
  beforeAll(async () => {
    live = await startLiveServer();
    h = live.h;
  });
  afterAll(async () => live.close());

  describe('cursor-paged lists with a name search', () => {
    const ids: Record<string, number> = {};
    beforeAll(async () => {
      for (const name of [
        'alice',
        'ALFRED',
        'bob',
        '50%_off',
        '500 off',
        'x_y',
        'xzy',
        'back\\slash',
      ])
        ids[name] = (await makeUser(h, name)).id;
    });

    it('GET /users: id ascending, {items, hasMore}, after and limit page through everything', async () => {
      const all: number[] = [];
      let after = 0;
      for (;;) {
        const r = await expectStatus(await h.admin.get(`/users?after=${after}&limit=3`), 200);
        expect(Object.keys(r.body).sort()).toEqual(['hasMore', 'items']);
        expect(r.body.items.length).toBeLessThanOrEqual(3);
        all.push(...r.body.items.map((u: { id: number }) => u.id));
        if (!r.body.hasMore) break;
        after = r.body.items.at(-1).id;
      }
      expect(all).toEqual([...all].sort((a, b) => a - b));
      expect(all).toEqual(expect.arrayContaining(Object.values(ids)));
      const first = (await h.admin.get('/users')).body.items[0];
      expect(Object.keys(first).sort()).toEqual(
        ['avatar', 'createdAt', 'disabled', 'id', 'isBot', 'name'].sort(),
      );
      expect(first.avatar).toMatch(/^http:\/\/parley\.test\/cdn\/avatars\/default\.png$/);
    });

    it('?q= is a case-insensitive "contains", with LIKE wildcards taken literally', async () => {
      const names = async (q: string): Promise<string[]> =>
        (
          await expectStatus(await h.admin.get(`/users?q=${encodeURIComponent(q)}`), 200)
        ).body.items.map((u: { name: string }) => u.name);
      expect((await names('al')).sort()).toEqual(['ALFRED', 'alice']);
      expect(await names('AL')).toHaveLength(2);
      expect(await names('50%')).toEqual(['50%_off']); // not "500 off"
      expect(await names('x_y')).toEqual(['x_y']); // not "xzy"
      expect(await names('%')).toEqual(['50%_off']);
      expect(await names('k\\s')).toEqual(['back\\slash']);
      expect(await names('nobody')).toEqual([]);
    });

    it('bad paging input is 400, not clamped (D16)', async () => {
      for (const q of ['limit=0', 'limit=1001', 'limit=1e2', 'limit=x', 'after=abc', 'after=-1'])
        expectError(await h.admin.get(`/users?${q}`), 400, 'VALIDATION_ERROR', q);
      expect((await h.admin.get('/users?limit=1000')).status).toBe(200);
      expect((await h.admin.get('/users?limit=1')).body.items).toHaveLength(1);
    });

    it('GET /guilds and /bots page and search the same way', async () => {
      const owner = ids['alice'] as number;
      await guildWith('Rust Lovers', owner);
      await guildWith('rusty tools', owner);
      await guildWith('Go', owner);
      const g = await expectStatus(await h.admin.get('/guilds?q=RUST&limit=1'), 200);
      expect(g.body.items).toHaveLength(1);
      expect(g.body.hasMore).toBe(true);
      expect(g.body.items[0]).toMatchObject({
        name: 'Rust Lovers',
        ownerId: owner,
        memberCount: 1,
      });
      const next = await h.admin.get(`/guilds?q=rust&after=${g.body.items[0].id}`);
      expect(next.body.items.map((x: { name: string }) => x.name)).toEqual(['rusty tools']);
      expect(next.body.hasMore).toBe(false);

      await makeBot(h, owner, 'Helper');
      await makeBot(h, owner, 'other');
      const b = await expectStatus(await h.admin.get('/bots?q=help'), 200);
      expect(b.body.items).toHaveLength(1);
      expect(b.body.items[0]).toMatchObject({ name: 'Helper', ownerId: owner, webhookUrl: null });
      expect(b.body.items[0].botUser).toMatchObject({ name: 'Helper', isBot: true });
    });
  });

  describe('users', () => {
    it('GET one user: what hangs on it; unknown → 404, malformed → 400', async () => {
      const u = await makeUser(h, 'carol');
      const g = await guildWith('carols', u.id);
      const r = await expectStatus(await h.admin.get(`/users/${u.id}`), 200);
      expect(r.body).toMatchObject({
        id: u.id,
        name: 'carol',
        isBot: false,
        disabled: false,
        guilds: [g.id],
        ownedGuilds: [g.id],
        bots: [],
        sessions: 1,
      });
      expectError(await h.admin.get('/users/999999999'), 404, 'NOT_FOUND');
      expectError(await h.admin.get('/users/01'), 400, 'VALIDATION_ERROR');
    });

    it('PATCH name and avatar with the shared name rules (D46, D54)', async () => {
      const u = await makeUser(h, 'dave');
      const r = await expectStatus(
        await h.admin.patch(`/users/${u.id}`, { name: 'David', avatar: 'https://img.test/d.png' }),
        200,
      );
      expect(r.body).toMatchObject({ name: 'David', avatar: 'https://img.test/d.png' });
      const cleared = await h.admin.patch(`/users/${u.id}`, { avatar: null });
      expect(cleared.body.avatar).toMatch(/default\.png$/);
      for (const body of [
        { name: 'a' },
        { name: ' padded ' },
        { name: 'bad\u202Ename' },
        { avatar: 'javascript:alert(1)' },
        { password: 'short' },
        {},
        { nope: 1 },
      ])
        expectError(
          await h.admin.patch(`/users/${u.id}`, body),
          400,
          'VALIDATION_ERROR',
          JSON.stringify(body),
        );
    });

    it('PATCH password ends every session; DELETE …/sessions ends them too (401 after)', async () => {
      const u = await makeUser(h, 'erin');
      expect((await h.as(u.token).get('/bot/me')).status).toBe(403); // authenticated, not a bot
      await expectStatus(
        await h.admin.patch(`/users/${u.id}`, { password: 'new-password-1' }),
        200,
      );
      expectError(await h.as(u.token).get('/bot/me'), 401, 'UNAUTHORIZED');
      const again = await expectStatus(await h.admin.post(`/users/${u.id}/sessions`), 201);
      expect((await h.as(again.body.token).get('/bot/me')).status).toBe(403);
      expect((await h.admin.get(`/users/${u.id}`)).body.sessions).toBe(1);
      await expectStatus(await h.admin.delete(`/users/${u.id}/sessions`), 204);
      expectError(await h.as(again.body.token).get('/bot/me'), 401, 'UNAUTHORIZED');
      expect((await h.admin.get(`/users/${u.id}`)).body.sessions).toBe(0);
      expectError(await h.admin.delete('/users/999999999/sessions'), 404, 'NOT_FOUND');
    });
  });

  describe('guilds, channels and roles', () => {
    it('GET / PATCH a guild: detail with channels, roles and bots; the new owner must be a member', async () => {
      const owner = await makeUser(h, 'frank');
      const other = await makeUser(h, 'gina');
      const g = await guildWith('Frank’s', owner.id);
      const bot = await makeBot(h, owner.id, 'fbot');
      await join(h, g.id, bot.userId);
      const r = await expectStatus(await h.admin.get(`/guilds/${g.id}`), 200);
      expect(r.body).toMatchObject({ id: g.id, ownerId: owner.id, memberCount: 2, bots: [bot.id] });
      expect(r.body.channels).toEqual([
        { id: g.channel, guildId: g.id, name: 'general', type: 0, topic: '' },
      ]);
      // D57: the new default
      expect(r.body.roles).toEqual([
        {
          id: g.id,
          name: '@everyone',
          permissions: DEFAULT_EVERYONE_PERMISSIONS,
          // D58 adds
          position: 0,
          color: null,
          mentionable: false,
        },
      ]);
      const renamed = await expectStatus(
        await h.admin.patch(`/guilds/${g.id}`, { name: 'New' }),
        200,
      );
      expect(renamed.body.name).toBe('New');
      expectError(await h.admin.patch(`/guilds/${g.id}`, { ownerId: other.id }), 404, 'NOT_FOUND');
      await join(h, g.id, other.id);
      const moved = await h.admin.patch(`/guilds/${g.id}`, { ownerId: other.id });
      expect(moved.body.ownerId).toBe(other.id);
      expectError(await h.admin.patch(`/guilds/${g.id}`, { name: '' }), 400, 'VALIDATION_ERROR');
      expectError(
        await h.admin.patch(`/guilds/${g.id}`, { name: 'a\u0000b' }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(await h.admin.get('/guilds/999999999'), 404, 'NOT_FOUND');
    });

    it('channels: GET, PATCH name/topic, DELETE with its messages', async () => {
      const owner = await makeUser(h, 'hank');
      const g = await guildWith('hanks', owner.id);
      const r = await expectStatus(
        await h.admin.patch(`/channels/${g.channel}`, { name: 'lobby', topic: 'welcome' }),
        200,
      );
      expect(r.body).toEqual({
        id: g.channel,
        guildId: g.id,
        name: 'lobby',
        type: 0,
        topic: 'welcome',
      });
      expect((await h.admin.get(`/channels/${g.channel}`)).body.topic).toBe('welcome');
      await expectStatus(
        await h.as(owner.token).post(`/channels/${g.channel}/messages`, { content: 'hi' }),
        200,
      );
      await expectStatus(await h.admin.delete(`/channels/${g.channel}`), 204);
      expectError(await h.admin.get(`/channels/${g.channel}`), 404, 'NOT_FOUND');
      expectError(await h.as(owner.token).get(`/channels/${g.channel}/messages`), 404, 'NOT_FOUND');
      expectError(await h.admin.delete(`/channels/${g.channel}`), 404, 'NOT_FOUND');
    });

    it('roles: GET, PATCH, DELETE (members and overwrites lose it); @everyone cannot go (409)', async () => {
      const owner = await makeUser(h, 'ivan');
      const member = await makeUser(h, 'jane');
      const g = await guildWith('ivans', owner.id);
      const role = await expectStatus(
        await h.admin.post(`/guilds/${g.id}/roles`, { name: 'mods', permissions: 1 }),
        201,
      );
      await join(h, g.id, member.id, [role.body.id]);
      await expectStatus(
        await h.admin.put(`/channels/${g.channel}/overwrites/${role.body.id}`, {
          allow: 0,
          deny: 2,
        }),
        200,
      );
      expect((await h.admin.get(`/roles/${role.body.id}`)).body).toEqual({
        id: role.body.id,
        guildId: g.id,
        name: 'mods',
        permissions: 1,
        // D58 adds
        position: 1,
        color: null,
        mentionable: false,
      });
      const p = await expectStatus(
        await h.admin.patch(`/roles/${role.body.id}`, { name: 'admins', permissions: 8 }),
        200,
      );
      expect(p.body).toMatchObject({ name: 'admins', permissions: 8 });
      expectError(
        await h.admin.patch(`/roles/${role.body.id}`, { permissions: 131072 }),
        400,
        'VALIDATION_ERROR',
      );
      await expectStatus(await h.admin.delete(`/roles/${role.body.id}`), 204);
      expectError(await h.admin.get(`/roles/${role.body.id}`), 404, 'NOT_FOUND');
      const m = await expectStatus(
        await h.as(member.token).get(`/guilds/${g.id}/members/${member.id}`),
        200,
      );
      expect(m.body.roles).toEqual([]);
      // The deny on SEND_MESSAGES went with the role.
      await expectStatus(
        await h.as(member.token).post(`/channels/${g.channel}/messages`, { content: 'free' }),
        200,
      );
      // D59 revises: the operator's and the people's role changes are one function, whose
      // answer for @everyone's name or deletion is D49's 400 (it was the operator's 409).
      expectError(await h.admin.delete(`/roles/${g.id}`), 400, 'VALIDATION_ERROR');
      expectError(await h.admin.patch(`/roles/${g.id}`, { name: 'all' }), 400, 'VALIDATION_ERROR');
      const e = await expectStatus(await h.admin.patch(`/roles/${g.id}`, { permissions: 1 }), 200);
      expect(e.body).toMatchObject({ name: '@everyone', permissions: 1 });
    });
  });

  describe('deleting, and what bots are told', () => {
    it('DELETE any message: 204, MESSAGE_DELETE to the bots that see it (D34); another channel → 404', async () => {
      const owner = await makeUser(h, 'kim');
      const g = await guildWith('kims', owner.id);
      const { gw } = await connectedBot(owner.id, g.id, 'watcher');
      const sent = await expectStatus(
        await h.as(owner.token).post(`/channels/${g.channel}/messages`, { content: 'spam' }),
        200,
      );
      await gw.dispatch('MESSAGE_CREATE');
      const other = await guildWith('elsewhere', owner.id);
      expectError(
        await h.admin.delete(`/channels/${other.channel}/messages/${sent.body.id}`),
        404,
        'NOT_FOUND',
      );
      await expectStatus(
        await h.admin.delete(`/channels/${g.channel}/messages/${sent.body.id}`),
        204,
      );
      const del = await gw.dispatch('MESSAGE_DELETE');
      expect(del.d).toEqual({ id: sent.body.id, channelId: g.channel, guildId: g.id });
      const list = await h.as(owner.token).get(`/channels/${g.channel}/messages`);
      expect(list.body.messages).toEqual([]);
      expectError(
        await h.admin.delete(`/channels/${g.channel}/messages/${sent.body.id}`),
        404,
        'NOT_FOUND',
      );
    });

    it('DELETE a guild: everything in it goes in one transaction; each bot gets its GUILD_MEMBER_REMOVE', async () => {
      const owner = await makeUser(h, 'leo');
      const g = await guildWith('doomed', owner.id);
      const a = await connectedBot(owner.id, g.id, 'a-bot');
      const b = await connectedBot(owner.id, g.id, 'b-bot');
      await a.gw.dispatch('GUILD_MEMBER_ADD'); // b joined
      await expectStatus(
        await h.as(owner.token).post(`/channels/${g.channel}/messages`, { content: 'bye' }),
        200,
      );
      await a.gw.dispatch('MESSAGE_CREATE');
      await b.gw.dispatch('MESSAGE_CREATE');
      await expectStatus(await h.admin.delete(`/guilds/${g.id}`), 204);
      for (const [me, gw] of [
        [a.bot, a.gw],
        [b.bot, b.gw],
      ] as const) {
        const removed = new Set<number>();
        for (let i = 0; i < 2; i++) {
          const f = await gw.dispatch('GUILD_MEMBER_REMOVE');
          expect(f.d.guildId).toBe(g.id);
          removed.add(f.d.user.id);
        }
        expect(removed.has(me.userId)).toBe(true);
      }
      expectError(await h.admin.get(`/guilds/${g.id}`), 404, 'NOT_FOUND');
      expectError(await h.admin.get(`/channels/${g.channel}`), 404, 'NOT_FOUND');
      expectError(await h.as(a.bot.token).get(`/guilds/${g.id}/channels`), 404, 'NOT_FOUND');
      const db = h.services.domain.db;
      for (const table of ['members', 'roles', 'channels', 'member_roles'] as const)
        expect(
          await db.selectFrom(table).selectAll().where('guild_id', '=', g.id).execute(),
          table,
        ).toEqual([]);
      expect((await h.admin.get(`/users/${a.bot.userId}`)).body.guilds).toEqual([]);
      expectError(await h.admin.delete(`/guilds/${g.id}`), 404, 'NOT_FOUND');
    });

    it('DELETE a bot: token dies (401), its connection closes 4004, it leaves every guild (GUILD_MEMBER_REMOVE), its owner may make another', async () => {
      const owner = await makeUser(h, 'mia');
      const g = await guildWith('mias', owner.id);
      const g2 = await guildWith('mias2', owner.id);
      const gone = await connectedBot(owner.id, g.id, 'gone');
      await join(h, g2.id, gone.bot.userId);
      await makeBot(h, owner.id, 'two');
      const stay = await connectedBot(owner.id, g.id, 'stay');
      await expectStatus(
        await h.as(gone.bot.token).post(`/channels/${g.channel}/messages`, { content: 'mine' }),
        200,
      );
      await stay.gw.dispatch('MESSAGE_CREATE');
      expectError(
        await h.admin.post('/bots', { ownerId: owner.id, name: 'four' }),
        409,
        'CONFLICT',
      );
      await expectStatus(await h.admin.delete(`/bots/${gone.bot.id}`), 204);
      const closed = await gone.gw.closed;
      expect(closed.code).toBe(4004);
      expectError(await h.as(gone.bot.token).get('/bot/me'), 401, 'UNAUTHORIZED');
      // The bot that stays hears the departure and the deletion of its message.
      const seen = [await stay.gw.next(), await stay.gw.next()].map((f) => f.t).sort();
      expect(seen).toEqual(['GUILD_MEMBER_REMOVE', 'MESSAGE_DELETE']);
      expect(
        (await h.as(owner.token).get(`/channels/${g.channel}/messages`)).body.messages,
      ).toEqual([]);
      expectError(await h.admin.get(`/bots/${gone.bot.id}`), 404, 'NOT_FOUND');
      expectError(await h.admin.get(`/users/${gone.bot.userId}`), 404, 'NOT_FOUND');
      const members = await h.as(owner.token).get(`/guilds/${g2.id}/members`);
      expect(members.body.members.map((m: { user: { id: number } }) => m.user.id)).toEqual([
        owner.id,
      ]);
      await expectStatus(await h.admin.post('/bots', { ownerId: owner.id, name: 'again' }), 201);
    });

    it('GET / PATCH a bot', async () => {
      const owner = await makeUser(h, 'nina');
      const g = await guildWith('ninas', owner.id);
      const { bot } = await connectedBot(owner.id, g.id, 'nbot');
      const r = await expectStatus(await h.admin.get(`/bots/${bot.id}`), 200);
      expect(r.body).toMatchObject({
        id: bot.id,
        ownerId: owner.id,
        guilds: [g.id],
        connected: true,
      });
      const p = await expectStatus(
        await h.admin.patch(`/bots/${bot.id}`, { name: 'Renamed', description: 'does things' }),
        200,
      );
      expect(p.body).toMatchObject({ name: 'Renamed', description: 'does things' });
      expect((await h.as(bot.token).get('/bot/me')).body.name).toBe('Renamed');
      expectError(await h.admin.patch(`/bots/${bot.id}`, { name: '' }), 400, 'VALIDATION_ERROR');
    });

    it('DELETE a person: owned guilds, owned bots, memberships and messages go; bots are told', async () => {
      const victim = await makeUser(h, 'oscar');
      const host = await makeUser(h, 'pat');
      const own = await guildWith('oscars', victim.id);
      const theirs = await guildWith('pats', host.id);
      const ownBot = await connectedBot(victim.id, own.id, 'obot');
      const watcher = await connectedBot(host.id, theirs.id, 'pbot');
      await join(h, theirs.id, victim.id);
      await watcher.gw.dispatch('GUILD_MEMBER_ADD');
      const sent = await expectStatus(
        await h.as(victim.token).post(`/channels/${theirs.channel}/messages`, { content: 'x' }),
        200,
      );
      await watcher.gw.dispatch('MESSAGE_CREATE');
      await expectStatus(await h.admin.delete(`/users/${victim.id}`), 204);
      const del = await watcher.gw.dispatch('MESSAGE_DELETE');
      expect(del.d.id).toBe(sent.body.id);
      const rem = await watcher.gw.dispatch('GUILD_MEMBER_REMOVE');
      expect(rem.d).toMatchObject({ guildId: theirs.id, user: { id: victim.id, name: 'oscar' } });
      expect((await ownBot.gw.closed).code).toBe(4004);
      expectError(await h.admin.get(`/users/${victim.id}`), 404, 'NOT_FOUND');
      expectError(await h.admin.get(`/guilds/${own.id}`), 404, 'NOT_FOUND');
      expectError(await h.admin.get(`/bots/${ownBot.bot.id}`), 404, 'NOT_FOUND');
      expectError(await h.as(victim.token).get('/bot/me'), 401, 'UNAUTHORIZED');
      expectError(await h.admin.delete(`/users/${watcher.bot.userId}`), 400, 'VALIDATION_ERROR');
    });
  });

  it('GET /stats counts everything, connected bots included', async () => {
    const before = await expectStatus(await h.admin.get('/stats'), 200);
    expect(Object.keys(before.body).sort()).toEqual(
      [
        'bots',
        'channels',
        'connections',
        'guilds',
        'messages',
        'people',
        'users',
        'webhookBacklog',
      ].sort(),
    );
    const owner = await makeUser(h, 'quinn');
    const g = await guildWith('quinns', owner.id);
    const { gw } = await connectedBot(owner.id, g.id, 'qbot');
    await expectStatus(
      await h.as(owner.token).post(`/channels/${g.channel}/messages`, { content: 'count me' }),
      200,
    );
    const after = (await h.admin.get('/stats')).body;
    expect(after.people).toBe(before.body.people + 1);
    expect(after.bots).toBe(before.body.bots + 1);
    expect(after.users).toBe(after.people + after.bots);
    expect(after.guilds).toBe(before.body.guilds + 1);
    expect(after.channels).toBe(before.body.channels + 1);
    expect(after.messages).toBe(before.body.messages + 1);
    expect(after.connections.bots).toBeGreaterThanOrEqual(1);
    expect(after.connections.people).toBe(0);
    await gw.close(1000);
    const deadline = Date.now() + 3000;
    let n = after.connections.bots;
    while (n >= after.connections.bots && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 25));
      n = (await h.admin.get('/stats')).body.connections.bots;
    }
    expect(n).toBe(after.connections.bots - 1);
  });
});
