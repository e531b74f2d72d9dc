import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  dbDescribe,
  expectStatus,
  join,
  makeBot,
  makeUser,
  makeWorld,
  type World,
} from '../helpers/harness.js';
import { startLiveServer, type GatewayClient, type LiveServer } from '../helpers/live-server.js';

// Issue 5, acceptance 1 and 2: a client that only connects with the header and heartbeats
// (D31: no identify step) receives HELLO, READY and then every one of the eight event types,
// with s increasing by 1 and d exactly the D35 shape; recipients follow D34.
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const AVATAR = 'http://parley.test/cdn/avatars/default.png';

dbDescribe('gateway events (D30, D31, D34, D35)', () => {
  let live: LiveServer;
  let w: World;

  beforeAll(async () => {
    live = await startLiveServer();
    w = await makeWorld(live.h);
  });
  afterAll(async () => live.close());

  // docs/interface.md: at most 3 bots per account, so each extra bot gets an owner of its own.
  const freshBot = async (name: string) =>
    makeBot(live.h, (await makeUser(live.h, `${name}-owner`)).id, name);

  it('HELLO, READY, then all eight event types with s +1 each and d exactly the D35 shape', async () => {
    const { h } = live;
    const c = await live.connect(w.bot.token);
    const hello = await c.next();
    expect(hello).toStrictEqual({ op: 10, d: { heartbeatInterval: 30_000 } });
    const ready = await c.dispatch('READY');
    // D31: READY {sessionId, bot, user, guilds, resumeWindowS}; it is the first dispatch (s 1).
    expect(ready.s).toBe(1);
    expect(typeof ready.d.sessionId).toBe('string');
    expect(ready.d).toStrictEqual({
      sessionId: ready.d.sessionId,
      bot: {
        id: w.bot.id,
        name: 'bot',
        avatar: AVATAR,
        description: '',
        botUser: { id: w.bot.userId, name: 'bot', isBot: true },
      },
      user: { id: w.bot.userId, name: 'bot', isBot: true },
      guilds: [{ id: w.guildId }],
      resumeWindowS: 300,
    });
    let s = 1;
    const expectNext = async (t: string, d: unknown): Promise<void> => {
      const f = await c.dispatch(t);
      expect(f.s).toBe(++s);
      expect(f.d).toStrictEqual(d);
      expect(Object.keys(f).sort()).toEqual(['d', 'op', 's', 't']);
    };

    // MESSAGE_CREATE: a person sends; d is the Message of docs/interface.md (D35), the REST answer.
    const human = h.as(w.human.token);
    const sent = await expectStatus(
      await human.post(`/channels/${w.channelId}/messages`, { content: 'hello bots' }),
      200,
    );
    await expectNext('MESSAGE_CREATE', {
      id: sent.body.id,
      channelId: w.channelId,
      guildId: w.guildId,
      content: 'hello bots',
      author: { id: w.human.id, name: 'human' },
      timestamp: sent.body.timestamp,
    });
    expect(sent.body.timestamp).toMatch(ISO_MS);

    // MESSAGE_UPDATE: the message with editedTimestamp (D35, D18).
    const edited = await expectStatus(
      await human.put(`/channels/${w.channelId}/messages/${sent.body.id}`, { content: 'edited' }),
      200,
    );
    await expectNext('MESSAGE_UPDATE', {
      id: sent.body.id,
      channelId: w.channelId,
      guildId: w.guildId,
      content: 'edited',
      author: { id: w.human.id, name: 'human' },
      timestamp: sent.body.timestamp,
      editedTimestamp: edited.body.editedTimestamp,
    });

    // MESSAGE_DELETE = {id, channelId, guildId}.
    await expectStatus(
      await human.delete(`/channels/${w.channelId}/messages/${sent.body.id}`),
      204,
    );
    await expectNext('MESSAGE_DELETE', {
      id: sent.body.id,
      channelId: w.channelId,
      guildId: w.guildId,
    });

    // DM_* : the person opens a DM with the bot (D21) and writes, edits, deletes (D17).
    const dm = await expectStatus(await human.post(`/users/${w.bot.userId}/dm`), 200);
    const dmId = dm.body.channelId as number;
    const dmSent = await expectStatus(
      await human.post(`/dm/channels/${dmId}/messages`, { content: 'psst' }),
      200,
    );
    const dmMessage = {
      id: dmSent.body.id,
      channelId: dmId,
      content: 'psst',
      author: { id: w.human.id, name: 'human' },
      timestamp: dmSent.body.timestamp,
    };
    expect(dmSent.body).toStrictEqual(dmMessage);
    await expectNext('DM_MESSAGE_CREATE', dmMessage);
    const dmEdited = await expectStatus(
      await human.put(`/dm/channels/${dmId}/messages/${dmSent.body.id}`, { content: 'psst!' }),
      200,
    );
    await expectNext('DM_MESSAGE_UPDATE', {
      ...dmMessage,
      content: 'psst!',
      editedTimestamp: dmEdited.body.editedTimestamp,
    });
    await expectStatus(await human.delete(`/dm/channels/${dmId}/messages/${dmSent.body.id}`), 204);
    await expectNext('DM_MESSAGE_DELETE', { id: dmSent.body.id, channelId: dmId });

    // GUILD_MEMBER_ADD = {guildId, user:{id,name,avatar}, roles, joinedAt} (D35, D20).
    const newcomer = await makeUser(h, 'newcomer');
    const added = await expectStatus(
      await h.admin.put(`/guilds/${w.guildId}/members/${newcomer.id}`, {}),
      201,
    );
    await expectNext('GUILD_MEMBER_ADD', {
      guildId: w.guildId,
      user: { id: newcomer.id, name: 'newcomer', avatar: AVATAR },
      roles: [],
      joinedAt: added.body.joinedAt,
    });

    // GUILD_MEMBER_REMOVE = {guildId, user}.
    await expectStatus(await h.admin.delete(`/guilds/${w.guildId}/members/${newcomer.id}`), 204);
    await expectNext('GUILD_MEMBER_REMOVE', {
      guildId: w.guildId,
      user: { id: newcomer.id, name: 'newcomer', avatar: AVATAR },
    });

    // D34: the bot's own messages reach it too.
    const own = await expectStatus(
      await h.as(w.bot.token).post(`/channels/${w.channelId}/messages`, { content: 'mine' }),
      200,
    );
    await expectNext('MESSAGE_CREATE', own.body);
    await c.close();
  });

  // Issue 29: a send answers with the JSON text its event recorded (http/answer.ts) — one
  // serialization for both; the answer's bytes are the dispatch's `d`, for a plain message and a
  // reply with a mention alike, with the same content type as every other JSON answer.
  it('a send answers with exactly the text of its MESSAGE_CREATE d', async () => {
    const { h } = live;
    live.clock.advance(1_500); // D28: the bot connected in the test before
    const c = await live.connect(w.bot.token);
    await c.ready();
    const human = h.as(w.human.token);
    const plain = await expectStatus(
      await human.post(`/channels/${w.channelId}/messages`, { content: 'one text' }),
      200,
    );
    const rich = await expectStatus(
      await human.post(`/channels/${w.channelId}/messages`, {
        content: `<@${w.bot.userId}> and "quotes" \\ é 🎉`,
        messageReference: { messageId: plain.body.id },
      }),
      200,
    );
    expect(rich.body.referencedMessage.id).toBe(plain.body.id);
    expect(rich.body.mentions).toEqual([w.bot.userId]);
    for (const sent of [plain, rich]) {
      await c.dispatch('MESSAGE_CREATE');
      const frame = c.raw[c.raw.length - 1] ?? '';
      expect(frame.slice(frame.indexOf(',"d":') + 5, -1)).toBe(sent.raw);
      expect(sent.headers['content-type']).toBe('application/json; charset=utf-8');
    }
    // an answer without an event of its own keeps the route's serializer and the same type
    const listed = await expectStatus(
      await human.get(`/channels/${w.channelId}/messages?limit=2`),
      200,
    );
    expect(listed.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(listed.body.messages.map((m: { id: number }) => m.id)).toEqual([
      rich.body.id,
      plain.body.id,
    ]);
    c.ws.close();
  });

  it('D34: a bot outside the guild, or without VIEW_CHANNEL, gets nothing', async () => {
    const { h } = live;
    const outsider = await freshBot('outsider');
    const blind = await freshBot('blind');
    // `blind` holds a role that is denied VIEW_CHANNEL on the channel, and sees another one.
    const role = await expectStatus(
      await h.admin.post(`/guilds/${w.guildId}/roles`, { name: 'muted', permissions: 0 }),
      201,
    );
    await join(h, w.guildId, blind.userId, [role.body.id]);
    await expectStatus(
      await h.admin.put(`/channels/${w.channelId}/overwrites/${role.body.id}`, {
        allow: 0,
        deny: 1,
      }),
      200,
    );
    const other = await expectStatus(
      await h.admin.post(`/guilds/${w.guildId}/channels`, { name: 'other' }),
      201,
    );
    const co = await live.connect(outsider.token);
    const cb = await live.connect(blind.token);
    await co.ready();
    await cb.ready();

    const hidden = await expectStatus(
      await h.as(w.human.token).post(`/channels/${w.channelId}/messages`, { content: 'secret' }),
      200,
    );
    // The sentinels: the next thing each receives is something it may see, not `secret`.
    const visible = await expectStatus(
      await h.as(w.human.token).post(`/channels/${other.body.id}/messages`, { content: 'open' }),
      200,
    );
    const f = await cb.dispatch('MESSAGE_CREATE');
    expect(f.d.id).toBe(visible.body.id);
    expect(f.s).toBe(2);
    expect(f.d.id).not.toBe(hidden.body.id);

    await join(h, w.guildId, outsider.userId);
    const joined = await co.dispatch('GUILD_MEMBER_ADD');
    expect(joined.d.user.id).toBe(outsider.userId);
    expect(joined.s).toBe(2); // nothing came before its own join
    await Promise.all([co.close(), cb.close()]);
  });

  it('D34: a removed bot gets its own GUILD_MEMBER_REMOVE and nothing after it', async () => {
    const { h } = live;
    const leaver = await freshBot('leaver');
    await join(h, w.guildId, leaver.userId);
    const c: GatewayClient = await live.connect(leaver.token);
    await c.ready();
    await expectStatus(await h.admin.delete(`/guilds/${w.guildId}/members/${leaver.userId}`), 204);
    const removed = await c.dispatch('GUILD_MEMBER_REMOVE');
    expect(removed.d).toStrictEqual({
      guildId: w.guildId,
      // D56 (adds a field): the removed member is a bot
      user: { id: leaver.userId, name: 'leaver', avatar: AVATAR, isBot: true },
    });
    await expectStatus(
      await h.as(w.human.token).post(`/channels/${w.channelId}/messages`, { content: 'gone?' }),
      200,
    );
    await join(h, w.guildId, leaver.userId); // the sentinel: its own join comes next
    const back = await c.dispatch('GUILD_MEMBER_ADD');
    expect(back.s).toBe((removed.s ?? 0) + 1);
    await c.close();
  });
});
