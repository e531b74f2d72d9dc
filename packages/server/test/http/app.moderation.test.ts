import { afterAll, beforeAll, expect, it } from 'vitest';
import { WebhookWorker } from '../../src/webhooks/worker.js';
import { dbDescribe, expectError, expectStatus, join, makeBot } from '../helpers/harness.js';
import { makeAppGuild, makePerson, PeopleEvents, type AppCaller } from '../helpers/guild-admin.js';
import { startLiveServer, type LiveServer } from '../helpers/live-server.js';
import { Receiver } from '../helpers/receiver.js';

// D49 moderation over a real server: a guild administrator deletes anyone's message (a bot on
// the real gateway and at its webhook gets MESSAGE_DELETE, D34/D35), kicks and bans members
// (the bot gets GUILD_MEMBER_REMOVE, the removed person GUILD_DELETE, D51); the owner cannot be
// kicked or banned (409, as the owner leaving is in D48).
const AVATAR = 'http://parley.test/cdn/avatars/default.png';
type Person = { id: number; token: string; app: AppCaller };

dbDescribe('moderation (D49, D34, D35, D51)', () => {
  let live: LiveServer;
  let worker: WebhookWorker;
  let receiver: Receiver;
  let ev: PeopleEvents;
  let owner: Person;
  let member: Person;
  let guild: { id: number; generalId: number };
  let bot: Awaited<ReturnType<typeof makeBot>>;

  beforeAll(async () => {
    live = await startLiveServer({
      env: { PARLEY_WEBHOOK_ALLOW_INSECURE: 'true', PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true' },
    });
    const { h } = live;
    worker = new WebhookWorker(h.services.domain, { pollMs: 20 });
    h.services.events.onWebhooks(() => worker.wake());
    worker.start();
    receiver = await new Receiver().listen();
    ev = new PeopleEvents(h);
    owner = await makePerson(h, 'owner');
    member = await makePerson(h, 'member');
    guild = await makeAppGuild(owner, 'Moderated');
    await join(h, guild.id, member.id);
    bot = await makeBot(h, owner.id, 'modbot');
    await join(h, guild.id, bot.userId);
    await expectStatus(await h.admin.put(`/bots/${bot.id}/webhook`, { url: receiver.url }), 200);
  });
  afterAll(async () => {
    ev.stop();
    await worker.stop();
    await receiver.close();
    await live.close();
  });

  const hooked = async (type: string, n = 1) => {
    for (let i = 0; ; i++) {
      const got = receiver.received
        .map((r) => JSON.parse(r.body.toString('utf8')))
        .filter((e) => e.type === type);
      if (got.length >= n) return got;
      if (i > 400) throw new Error(`no ${type} webhook`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  it("moderation delete of someone else's message → 204; the bot gets MESSAGE_DELETE (gateway and webhook)", async () => {
    const { h } = live;
    const c = await live.connect(bot.token);
    await c.ready();
    const sent = await expectStatus(
      await h.as(member.token).post(`/channels/${guild.generalId}/messages`, { content: 'spam' }),
      200,
    );
    await c.dispatch('MESSAGE_CREATE');
    // Only an administrator: the author's fellow member cannot (403), even on the app route.
    const third = await makePerson(h, 'third');
    await join(h, guild.id, third.id);
    await c.dispatch('GUILD_MEMBER_ADD');
    expectError(
      await third.app.delete(`/channels/${guild.generalId}/messages/${sent.body.id}`),
      403,
      'FORBIDDEN',
    );
    await expectStatus(
      await owner.app.delete(`/channels/${guild.generalId}/messages/${sent.body.id}`),
      204,
    );
    const del = await c.dispatch('MESSAGE_DELETE');
    const data = { id: sent.body.id, channelId: guild.generalId, guildId: guild.id };
    expect(del.d).toStrictEqual(data);
    const hooks = await hooked('MESSAGE_DELETE');
    expect(hooks[0].data).toStrictEqual(data);
    // Gone for everyone; a second delete or a message of another channel → 404.
    const list = await expectStatus(
      await h.as(member.token).get(`/channels/${guild.generalId}/messages`),
      200,
    );
    expect(list.body.messages.map((m: { id: number }) => m.id)).not.toContain(sent.body.id);
    expectError(
      await owner.app.delete(`/channels/${guild.generalId}/messages/${sent.body.id}`),
      404,
      'NOT_FOUND',
    );
    const other = await expectStatus(
      await owner.app.post(`/guilds/${guild.id}/channels`, { name: 'other' }),
      201,
    );
    const elsewhere = await expectStatus(
      await h.as(member.token).post(`/channels/${other.body.id}/messages`, { content: 'x' }),
      200,
    );
    await c.dispatch('MESSAGE_CREATE');
    expectError(
      await owner.app.delete(`/channels/${guild.generalId}/messages/${elsewhere.body.id}`),
      404,
      'NOT_FOUND',
    );
    // The bot's own message too (any author).
    const own = await expectStatus(
      await h.as(bot.token).post(`/channels/${guild.generalId}/messages`, { content: 'mine' }),
      200,
    );
    await c.dispatch('MESSAGE_CREATE');
    await expectStatus(
      await owner.app.delete(`/channels/${guild.generalId}/messages/${own.body.id}`),
      204,
    );
    expect((await c.dispatch('MESSAGE_DELETE')).d.id).toBe(own.body.id);
    // Kick: the bot gets GUILD_MEMBER_REMOVE on the gateway; the person GUILD_DELETE.
    ev.clear();
    await expectStatus(await owner.app.delete(`/guilds/${guild.id}/members/${third.id}`), 204);
    const removed = await c.dispatch('GUILD_MEMBER_REMOVE');
    expect(removed.d).toStrictEqual({
      guildId: guild.id,
      user: { id: third.id, name: 'third', avatar: AVATAR },
    });
    expect(ev.toUser('GUILD_DELETE', third.id).map((e) => e.data)).toEqual([{ id: guild.id }]);
    expectError(await third.app.get(`/guilds/${guild.id}`), 403, 'FORBIDDEN');
    expectError(
      await owner.app.delete(`/guilds/${guild.id}/members/${third.id}`),
      404,
      'NOT_FOUND',
    );
    await c.close();
  });

  it('the owner cannot be kicked or banned (409); an administrator may kick others; banning an unknown user is 404', async () => {
    const { h } = live;
    const admin = await makePerson(h, 'admin');
    await join(h, guild.id, admin.id);
    const role = await expectStatus(
      await owner.app.post(`/guilds/${guild.id}/roles`, { name: 'admin', permissions: 8 }),
      201,
    );
    await expectStatus(
      await owner.app.put(`/guilds/${guild.id}/members/${admin.id}/roles`, {
        roles: [role.body.id],
      }),
      200,
    );
    expectError(await admin.app.delete(`/guilds/${guild.id}/members/${owner.id}`), 409, 'CONFLICT');
    expectError(await admin.app.put(`/guilds/${guild.id}/bans/${owner.id}`), 409, 'CONFLICT');
    expectError(await owner.app.delete(`/guilds/${guild.id}/members/${owner.id}`), 409, 'CONFLICT');
    expectError(await owner.app.put(`/guilds/${guild.id}/bans/9007199254740991`), 404, 'NOT_FOUND');
    // An administrator can kick another member.
    const victim = await makePerson(h, 'victim');
    await join(h, guild.id, victim.id);
    await expectStatus(await admin.app.delete(`/guilds/${guild.id}/members/${victim.id}`), 204);
  });

  it('ban: removes the member (GUILD_MEMBER_REMOVE to the bot, GUILD_DELETE to the person), listed, lifted', async () => {
    const { h } = live;
    live.clock.advance(1100); // D28: one connection attempt per second
    const c = await live.connect(bot.token);
    await c.ready();
    const troll = await makePerson(h, 'troll');
    await join(h, guild.id, troll.id);
    await c.dispatch('GUILD_MEMBER_ADD');
    ev.clear();
    await expectStatus(await owner.app.put(`/guilds/${guild.id}/bans/${troll.id}`), 204);
    const removed = await c.dispatch('GUILD_MEMBER_REMOVE');
    expect(removed.d.user.id).toBe(troll.id);
    expect(ev.toUser('GUILD_DELETE', troll.id)).toHaveLength(1);
    // Idempotent (an empty JSON body is fine too); banning a non-member is allowed when the
    // caller knows them — revised by D70: someone sharing no guild or DM with the caller is 404,
    // exactly like an unknown id (a ban must not reveal a stranger's name and avatar).
    await expectStatus(await owner.app.put(`/guilds/${guild.id}/bans/${troll.id}`, {}), 204);
    const stranger = await makePerson(h, 'stranger');
    expectError(await owner.app.put(`/guilds/${guild.id}/bans/${stranger.id}`), 404, 'NOT_FOUND');
    const elsewhere = await expectStatus(
      await owner.app.post('/guilds', { name: 'Elsewhere' }),
      201,
    );
    await join(h, elsewhere.body.id, stranger.id);
    await expectStatus(await owner.app.put(`/guilds/${guild.id}/bans/${stranger.id}`), 204);
    const bans = await expectStatus(await owner.app.get(`/guilds/${guild.id}/bans`), 200);
    expect(bans.body).toStrictEqual({
      bans: [
        { user: { id: troll.id, name: 'troll', avatar: AVATAR }, createdAt: expect.any(String) },
        {
          user: { id: stranger.id, name: 'stranger', avatar: AVATAR },
          createdAt: expect.any(String),
        },
      ],
    });
    expect(bans.body.bans[0].createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // The ban refuses rejoining by invite (403).
    const inv = await expectStatus(await owner.app.post(`/guilds/${guild.id}/invites`, {}), 201);
    expectError(await troll.app.post(`/invites/${inv.body.code}/accept`), 403, 'FORBIDDEN');
    await expectStatus(await owner.app.delete(`/guilds/${guild.id}/bans/${troll.id}`), 204);
    expectError(await owner.app.delete(`/guilds/${guild.id}/bans/${troll.id}`), 404, 'NOT_FOUND');
    const after = await expectStatus(await owner.app.get(`/guilds/${guild.id}/bans`), 200);
    expect(after.body.bans.map((b: { user: { id: number } }) => b.user.id)).toEqual([stranger.id]);
    await expectStatus(await troll.app.post(`/invites/${inv.body.code}/accept`), 200);
    await c.dispatch('GUILD_MEMBER_ADD');
    await c.close();
  });
});
