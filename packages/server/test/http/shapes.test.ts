import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';

// Acceptance 3 (issue 2): every endpoint answers the exact shapes of INTERFACE.md + DECISIONS.md,
// field by field — no extra fields, none missing, ids as JSON numbers, timestamps ISO UTC + ms.
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const isId = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
const keys = (o: object): string[] => Object.keys(o).sort();

dbDescribe('response shapes', () => {
  let h: Harness;
  let w: World;
  beforeAll(async () => {
    h = await createHarness();
    w = await makeWorld(h);
  });
  afterAll(async () => h.close());

  it('GET /bot/me is a Bot with its bot user (D4: the two ids differ; D20: absolute avatar)', async () => {
    const r = await h.as(w.bot.token).get('/bot/me');
    expect(r.status).toBe(200);
    expect(keys(r.body)).toEqual(['avatar', 'botUser', 'description', 'id', 'name']);
    expect(r.body).toEqual({
      id: w.bot.id,
      name: 'bot',
      avatar: 'http://parley.test/cdn/avatars/default.png',
      description: '',
      botUser: { id: w.bot.userId, name: 'bot', isBot: true },
    });
    expect(w.bot.id).not.toBe(w.bot.userId);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
  });

  it('POST /channels/:id/messages returns the Message (D17, D18: no editedTimestamp, no msgType)', async () => {
    const r = await h
      .as(w.bot.token)
      .post(`/channels/${w.channelId}/messages`, { content: 'hello', msgType: 0 });
    expect(r.status).toBe(200);
    expect(keys(r.body)).toEqual(['author', 'channelId', 'content', 'guildId', 'id', 'timestamp']);
    expect(isId(r.body.id)).toBe(true);
    expect(r.body.channelId).toBe(w.channelId);
    expect(r.body.guildId).toBe(w.guildId);
    expect(r.body.content).toBe('hello');
    // D56 revises D18: a bot author gains `isBot: true` (people's authors stay {id, name})
    expect(r.body.author).toEqual({ id: w.bot.userId, name: 'bot', isBot: true });
    expect(r.body.timestamp).toMatch(ISO_MS);
  });

  it('PUT edits and answers exactly {id, channelId, content, editedTimestamp}; lists show editedTimestamp', async () => {
    const sent = await h
      .as(w.bot.token)
      .post(`/channels/${w.channelId}/messages`, { content: 'draft' });
    const r = await h
      .as(w.bot.token)
      .put(`/channels/${w.channelId}/messages/${sent.body.id}`, { content: 'final' });
    expect(r.status).toBe(200);
    expect(keys(r.body)).toEqual(['channelId', 'content', 'editedTimestamp', 'id']);
    expect(r.body).toMatchObject({ id: sent.body.id, channelId: w.channelId, content: 'final' });
    expect(r.body.editedTimestamp).toMatch(ISO_MS);
    const list = await h.as(w.bot.token).get(`/channels/${w.channelId}/messages?limit=100`);
    const edited = list.body.messages.find((m: { id: number }) => m.id === sent.body.id);
    expect(keys(edited)).toEqual([
      'author',
      'channelId',
      'content',
      'editedTimestamp',
      'guildId',
      'id',
      'timestamp',
    ]);
    expect(edited.editedTimestamp).toBe(r.body.editedTimestamp);
  });

  it('DELETE answers 204 with no body (D18)', async () => {
    const sent = await h
      .as(w.bot.token)
      .post(`/channels/${w.channelId}/messages`, { content: 'bye' });
    const r = await h.as(w.bot.token).delete(`/channels/${w.channelId}/messages/${sent.body.id}`);
    expect(r.status).toBe(204);
    expect(r.raw).toBe('');
  });

  it('GET /channels/:id/messages is {messages, hasMore}', async () => {
    const r = await h.as(w.bot.token).get(`/channels/${w.channelId}/messages`);
    expect(r.status).toBe(200);
    expect(keys(r.body)).toEqual(['hasMore', 'messages']);
    expect(typeof r.body.hasMore).toBe('boolean');
    for (const m of r.body.messages) expect(isId(m.id)).toBe(true);
  });

  it('channel list entries are {id, guildId, name, type}; the single read adds topic (D19)', async () => {
    const list = await h.as(w.bot.token).get(`/guilds/${w.guildId}/channels`);
    expect(list.status).toBe(200);
    expect(keys(list.body)).toEqual(['channels']);
    expect(list.body.channels).toEqual([
      { id: w.channelId, guildId: w.guildId, name: 'general', type: 0 },
    ]);
    const one = await h.as(w.bot.token).get(`/channels/${w.channelId}`);
    expect(one.body).toEqual({
      id: w.channelId,
      guildId: w.guildId,
      name: 'general',
      type: 0,
      topic: 'hi',
    });
    const bare = await h.admin.post(`/guilds/${w.guildId}/channels`, { name: 'no-topic' });
    expect((await h.as(w.bot.token).get(`/channels/${bare.body.id}`)).body.topic).toBe('');
  });

  it('member list entries are {user:{id,name,avatar}, joinedAt}; the single read adds roles (D20)', async () => {
    const list = await h.as(w.bot.token).get(`/guilds/${w.guildId}/members`);
    expect(list.status).toBe(200);
    expect(keys(list.body)).toEqual(['hasMore', 'members']);
    for (const m of list.body.members) {
      expect(keys(m)).toEqual(['joinedAt', 'user']);
      expect(keys(m.user)).toEqual(['avatar', 'id', 'name']);
      expect(m.joinedAt).toMatch(ISO_MS);
      expect(m.user.avatar).toMatch(/^http:\/\/parley\.test\//);
    }
    const role = await h.admin.post(`/guilds/${w.guildId}/roles`, { name: 'mod', permissions: 7 });
    await h.admin.put(`/guilds/${w.guildId}/members/${w.human.id}`, {
      roles: [role.body.id, w.guildId],
    });
    const one = await h.as(w.bot.token).get(`/guilds/${w.guildId}/members/${w.human.id}`);
    expect(keys(one.body)).toEqual(['joinedAt', 'roles', 'user']);
    // D20: @everyone (id = guild id) is never listed.
    expect(one.body.roles).toEqual([role.body.id]);
    expect(one.body.user).toEqual({
      id: w.human.id,
      name: 'human',
      avatar: 'http://parley.test/cdn/avatars/default.png',
    });
  });

  it('DM open returns {channelId, recipientId}; DM send/list use the Message without guildId (D17)', async () => {
    const open = await h.as(w.bot.token).post(`/users/${w.human.id}/dm`);
    expect(open.status).toBe(200);
    expect(keys(open.body)).toEqual(['channelId', 'recipientId']);
    expect(open.body.recipientId).toBe(w.human.id);
    const sent = await h
      .as(w.bot.token)
      .post(`/dm/channels/${open.body.channelId}/messages`, { content: 'psst' });
    expect(sent.status).toBe(200);
    expect(keys(sent.body)).toEqual(['author', 'channelId', 'content', 'id', 'timestamp']);
    const list = await h.as(w.human.token).get(`/dm/channels/${open.body.channelId}/messages`);
    expect(list.body).toEqual({ messages: [sent.body], hasMore: false });
    const edited = await h
      .as(w.bot.token)
      .put(`/dm/channels/${open.body.channelId}/messages/${sent.body.id}`, { content: 'psst!' });
    expect(keys(edited.body)).toEqual(['channelId', 'content', 'editedTimestamp', 'id']);
    const del = await h
      .as(w.bot.token)
      .delete(`/dm/channels/${open.body.channelId}/messages/${sent.body.id}`);
    expect(del.status).toBe(204);
  });

  it('the default avatar is a real PNG (D20)', async () => {
    const r = await h.request({ method: 'GET', url: '/cdn/avatars/default.png' });
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('image/png');
    const res = await h.app.inject({ method: 'GET', url: '/cdn/avatars/default.png' });
    expect(res.rawPayload.subarray(0, 8)).toEqual(
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    );
  });

  it('every response carries X-Request-Id (D7)', async () => {
    for (const r of [
      await h.as(w.bot.token).get('/bot/me'),
      await h.as(undefined).get('/bot/me'),
      await h.request({ method: 'GET', url: '/nope' }),
    ]) {
      expect(r.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
