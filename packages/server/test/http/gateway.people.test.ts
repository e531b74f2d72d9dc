import { afterAll, beforeAll, expect, it } from 'vitest';
import { hashSessionToken } from '../../src/domain/auth/session-token.js';
import {
  dbDescribe,
  expectStatus,
  join,
  makeBot,
  makeUser,
  makeWorld,
  type Reply,
  type World,
} from '../helpers/harness.js';
import {
  startLiveServer,
  type Frame,
  type GatewayClient,
  type LiveServer,
} from '../helpers/live-server.js';

// Issue 11 (D51, D47): people on the gateway — by bearer or by cookie from this site; READY with
// full guilds and read states; the bots' event types for what they can see plus the people's
// types; live fan-out from memory with a gapless `s` per connection; many connections per
// person; resume on the same node; an ended session closes with 4004; typing and presence.
const ORIGIN = 'http://parley.test'; // the harness's PARLEY_PUBLIC_URL
const AVATAR = `${ORIGIN}/cdn/avatars/default.png`;

/** Every dispatch's `s` a client received so far, in order (READY's 1 first). */
const seqs = (c: GatewayClient): number[] =>
  c.raw
    .map((t) => JSON.parse(t) as Frame)
    .filter((f) => f.op === 0 && typeof f.s === 'number')
    .map((f) => f.s as number);

/** The next dispatch of type `t`, passing over presence updates (they come whenever anyone connects). */
async function next(c: GatewayClient, t: string, timeoutMs = 5000): Promise<Frame> {
  for (;;) {
    const f = await c.next({ timeoutMs });
    if (f.op === 0 && f.t === t) return f;
    if (f.op === 0 && f.t === 'PRESENCE_UPDATE') continue;
    throw new Error(`expected ${t}, got ${JSON.stringify(f)}`);
  }
}

/** The next PRESENCE_UPDATE about `userId` (others' come and go meanwhile). */
async function presenceOf(c: GatewayClient, userId: number, timeoutMs = 8000): Promise<string> {
  for (;;) {
    const f = await c.dispatch('PRESENCE_UPDATE', timeoutMs);
    if (f.d.userId === userId) return f.d.status as string;
  }
}

/** Nothing but presence updates arrives within `ms`. */
async function quiet(c: GatewayClient, ms = 300): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
  const other = c.pending().filter((f) => f.op === 0 && f.t !== 'PRESENCE_UPDATE');
  expect(other).toEqual([]);
}

dbDescribe("people's gateway (D51)", () => {
  let live: LiveServer;
  let w: World;
  let secretId: number;

  beforeAll(async () => {
    live = await startLiveServer();
    w = await makeWorld(live.h);
    const secret = await expectStatus(
      await live.h.admin.post(`/guilds/${w.guildId}/channels`, { name: 'secret' }),
      201,
    );
    secretId = secret.body.id;
    // @everyone may not VIEW #secret; the owner still can (owners are above overwrites, D11).
    await expectStatus(
      await live.h.admin.put(`/channels/${secretId}/overwrites/${w.guildId}`, {
        allow: 0,
        deny: 1,
      }),
      200,
    );
  });
  afterAll(async () => live.close());

  const app = (
    token: string,
    method: 'GET' | 'POST',
    url: string,
    headers: Record<string, string> = {},
  ): Promise<Reply> =>
    live.h.request({
      method,
      url: `/app/v1${url}`,
      headers: { authorization: `Bearer ${token}`, ...headers },
    });
  const say = async (token: string, channelId: number, content: string): Promise<number> =>
    (
      await expectStatus(
        await live.h.as(token).post(`/channels/${channelId}/messages`, { content }),
        200,
      )
    ).body.id as number;

  it('READY by bearer: {sessionId, user, guilds as GET /app/v1/guilds/:id, readStates, resumeWindowS}', async () => {
    const db = live.h.services.domain.db;
    await db
      .insertInto('read_states')
      .values({ user_id: w.human.id, channel_id: w.channelId, last_read_id: 12345 })
      .execute();
    const c = await live.connect(w.human.token);
    expect(await c.next()).toStrictEqual({ op: 10, d: { heartbeatInterval: 30_000 } });
    const ready = await c.dispatch('READY');
    expect(ready.s).toBe(1);
    expect(ready.d).toStrictEqual({
      sessionId: ready.d.sessionId,
      user: { id: w.human.id, name: 'human', avatar: AVATAR, isBot: false },
      guilds: [
        {
          id: w.guildId,
          name: 'Guild',
          ownerId: w.owner.id,
          // D58 adds a role's position, color and mentionable
          roles: [
            {
              id: w.guildId,
              name: '@everyone',
              permissions: expect.any(Number),
              position: 0,
              color: null,
              mentionable: false,
            },
          ],
          // #secret is not listed: the person cannot VIEW it
          channels: [
            { id: w.channelId, guildId: w.guildId, type: 0, name: 'general', topic: 'hi' },
          ],
          bots: [w.bot.userId],
          myPermissions: expect.any(Number),
        },
      ],
      // D66 adds mentionCount, presences (nobody else online here) and dms
      readStates: [{ channelId: w.channelId, lastReadId: 12345, mentionCount: 0 }],
      resumeWindowS: 300,
      presences: [],
      dms: [],
    });
    expect(typeof ready.d.sessionId).toBe('string');
    await c.close();
  });

  it('D51/D47: the session cookie opens the gateway from this site only (else 403 in the error form)', async () => {
    const cookie = { cookie: `other=1; parley_session=${w.human.token}` };
    const ok = await live.connect(undefined as unknown as string, {
      headers: { ...cookie, origin: ORIGIN },
    });
    expect((await ok.ready()).frame.d.user.id).toBe(w.human.id);
    await ok.close();
    for (const headers of [
      { ...cookie, origin: 'https://evil.example' },
      cookie, // no Origin at all
    ]) {
      const a = await live.attempt(undefined, { headers });
      if (a.kind !== 'refused') throw new Error('expected a refusal');
      expect(a.status).toBe(403);
      expect(a.body.error.code).toBe('FORBIDDEN');
      expect(a.headers['content-type']).toMatch(/^application\/json/);
    }
    // An unknown session cookie: 401.
    const bad = await live.attempt(undefined, {
      headers: { cookie: 'parley_session=pus_nope', origin: ORIGIN },
    });
    expect(bad.kind === 'refused' && bad.status).toBe(401);
  });

  it('many connections per person: no 4010, no 429, each its own session and s', async () => {
    const cs = [];
    for (let i = 0; i < 4; i++) cs.push(await live.connect(w.owner.token));
    const ids = new Set<string>();
    for (const c of cs) ids.add((await c.ready()).sessionId);
    expect(ids.size).toBe(4);
    const id = await say(w.human.token, w.channelId, 'to every tab');
    for (const c of cs) {
      const f = await next(c, 'MESSAGE_CREATE');
      expect(f.d.id).toBe(id);
    }
    for (const c of cs) expect(c.pending().filter((f) => f.op !== 0 && f.op !== 11)).toEqual([]);
    await Promise.all(cs.map((c) => c.close()));
  });

  it('D34 for people: a message reaches those who can VIEW its channel, with a gapless s, and never a person who cannot', async () => {
    const owner = await live.connect(w.owner.token);
    const human = await live.connect(w.human.token);
    await owner.ready();
    await human.ready();
    const a = await say(w.human.token, w.channelId, 'hello all');
    expect((await next(owner, 'MESSAGE_CREATE')).d).toMatchObject({ id: a, content: 'hello all' });
    expect((await next(human, 'MESSAGE_CREATE')).d.id).toBe(a); // their own too (D34)
    const hidden = await say(w.owner.token, secretId, 'owners only');
    expect((await next(owner, 'MESSAGE_CREATE')).d.id).toBe(hidden);
    await expectStatus(
      await live.h
        .as(w.owner.token)
        .put(`/channels/${secretId}/messages/${hidden}`, { content: 'x' }),
      200,
    );
    expect((await next(owner, 'MESSAGE_UPDATE')).d.id).toBe(hidden);
    const b = await say(w.owner.token, w.channelId, 'after the secret');
    const f = await next(human, 'MESSAGE_CREATE');
    expect(f.d.id).toBe(b); // nothing of #secret came in between
    await expectStatus(
      await live.h.as(w.owner.token).delete(`/channels/${w.channelId}/messages/${b}`),
      204,
    );
    expect((await next(human, 'MESSAGE_DELETE')).d).toStrictEqual({
      id: b,
      channelId: w.channelId,
      guildId: w.guildId,
    });
    for (const c of [owner, human]) {
      const s = seqs(c);
      expect(s).toEqual(s.map((_, i) => i + 1)); // 1, 2, 3, … without a gap
    }
    await owner.close();
    await human.close();
  });

  it('joining and leaving: GUILD_CREATE (the full guild) then its events; GUILD_DELETE then nothing; bots get no people-only type', async () => {
    const newcomer = await makeUser(live.h, 'newcomer');
    const c = await live.connect(newcomer.token);
    const ready = await c.ready();
    expect(ready.frame.d.guilds).toEqual([]);
    live.clock.advance(1000); // D28 for the bot
    const bot = await live.connect(w.bot.token);
    await bot.ready();
    await join(live.h, w.guildId, newcomer.id);
    expect((await next(c, 'GUILD_MEMBER_ADD')).d.user.id).toBe(newcomer.id);
    const created = await next(c, 'GUILD_CREATE');
    expect(created.d).toMatchObject({ id: w.guildId, name: 'Guild', ownerId: w.owner.id });
    expect(created.d.channels.map((x: { id: number }) => x.id)).toEqual([w.channelId]);
    // the bot hears the join as a bot does, nothing else
    expect((await bot.dispatch('GUILD_MEMBER_ADD')).d.user.id).toBe(newcomer.id);
    const id = await say(w.human.token, w.channelId, 'welcome');
    expect((await next(c, 'MESSAGE_CREATE')).d.id).toBe(id);
    expect((await bot.dispatch('MESSAGE_CREATE')).d.id).toBe(id);
    await expectStatus(
      await live.h.admin.delete(`/guilds/${w.guildId}/members/${newcomer.id}`),
      204,
    );
    expect((await next(c, 'GUILD_MEMBER_REMOVE')).d.user.id).toBe(newcomer.id);
    expect((await next(c, 'GUILD_DELETE')).d).toStrictEqual({ id: w.guildId });
    expect((await bot.dispatch('GUILD_MEMBER_REMOVE')).d.user.id).toBe(newcomer.id);
    await say(w.human.token, w.channelId, 'gone');
    expect((await bot.dispatch('MESSAGE_CREATE')).d.content).toBe('gone');
    await quiet(c);
    // the bot saw exactly its eight types: no GUILD_CREATE, GUILD_DELETE, TYPING_START, PRESENCE_UPDATE
    const types = bot.raw.map((t) => (JSON.parse(t) as Frame).t).filter(Boolean);
    expect(
      types.every((t) =>
        ['READY', 'GUILD_MEMBER_ADD', 'GUILD_MEMBER_REMOVE', 'MESSAGE_CREATE'].includes(
          t as string,
        ),
      ),
    ).toBe(true);
    await c.close();
    await bot.close();
  });

  it('D47: an ended session closes its connections with 4004 (other sessions stay)', async () => {
    const d = live.h.services.domain;
    const other = await expectStatus(await live.h.admin.post(`/users/${w.human.id}/sessions`), 201);
    const doomed = await live.connect(other.body.token);
    const stays = await live.connect(w.human.token);
    await doomed.ready();
    await stays.ready();
    await d.db
      .deleteFrom('user_sessions')
      .where('token_hash', '=', hashSessionToken(other.body.token))
      .execute();
    d.people.sessionsChanged(d.db, w.human.id);
    expect(await doomed.closed).toMatchObject({ code: 4004 });
    const id = await say(w.owner.token, w.channelId, 'still here?');
    expect((await next(stays, 'MESSAGE_CREATE')).d.id).toBe(id);
    await stays.close();
  });

  it('D51 typing: POST /app/v1/channels/:id/typing → 204 and TYPING_START to those who see the channel; bots never', async () => {
    const owner = await live.connect(w.owner.token);
    live.clock.advance(1000); // D28 for the bot
    const bot = await live.connect(w.bot.token);
    await owner.ready();
    await bot.ready();
    const r = await app(w.human.token, 'POST', `/channels/${w.channelId}/typing`);
    expect(r.status).toBe(204);
    const t = await next(owner, 'TYPING_START');
    expect(t.d).toStrictEqual({
      channelId: w.channelId,
      userId: w.human.id,
      at: expect.any(String),
    });
    expect(Date.parse(t.d.at)).toBeGreaterThan(0);
    // refusals: a channel the person cannot see (403), an unknown one (404), a bot token (403)
    expect((await app(w.human.token, 'POST', `/channels/${secretId}/typing`)).status).toBe(403);
    expect((await app(w.human.token, 'POST', `/channels/999999999/typing`)).status).toBe(404);
    expect((await app(w.bot.token, 'POST', `/channels/${w.channelId}/typing`)).status).toBe(403);
    // the owner typing in #secret: the human must not hear it
    const human = await live.connect(w.human.token);
    await human.ready();
    expect((await app(w.owner.token, 'POST', `/channels/${secretId}/typing`)).status).toBe(204);
    await quiet(human);
    await quiet(bot);
    expect(bot.raw.some((x) => x.includes('TYPING_START') || x.includes('PRESENCE_UPDATE'))).toBe(
      false,
    );
    await Promise.all([owner.close(), bot.close(), human.close()]);
  });

  it('D51 presence: online with the first connection, offline after the last closes (and a short grace)', async () => {
    const friend = await makeUser(live.h, 'friend');
    await join(live.h, w.guildId, friend.id);
    const owner = await live.connect(w.owner.token);
    await owner.ready();
    const a = await live.connect(friend.token);
    await a.ready();
    expect(await presenceOf(owner, friend.id)).toBe('online');
    const b = await live.connect(friend.token); // a second tab: no second "online"
    await b.ready();
    await a.close();
    await new Promise((r) => setTimeout(r, 500)); // b still holds a connection: no offline
    expect(
      owner.pending().filter((f) => f.t === 'PRESENCE_UPDATE' && f.d.userId === friend.id),
    ).toEqual([]);
    await b.close();
    expect(await presenceOf(owner, friend.id)).toBe('offline');
    // bots count too
    live.clock.advance(1000); // D28 for the bot
    const bot = await live.connect(w.bot.token);
    await bot.ready();
    expect(await presenceOf(owner, w.bot.userId)).toBe('online');
    await bot.close();
    await owner.close();
  });

  it('D51 resume on the same node: the missed dispatches with their original s, then RESUMED; a closed (1000) session cannot', async () => {
    const c = await live.connect(w.human.token);
    const { sessionId } = await c.ready();
    const first = await say(w.owner.token, w.channelId, 'seen');
    const seen = await next(c, 'MESSAGE_CREATE');
    expect(seen.d.id).toBe(first);
    c.terminate();
    await c.closed;
    await new Promise((r) => setTimeout(r, 100)); // the server notices the drop
    const missed = [
      await say(w.owner.token, w.channelId, 'missed 1'),
      await say(w.owner.token, w.channelId, 'missed 2'),
    ];
    const r = await live.connect(w.human.token, { query: `sessionId=${sessionId}&seq=${seen.s}` });
    expect((await r.next()).op).toBe(10);
    const m1 = await next(r, 'MESSAGE_CREATE');
    const m2 = await next(r, 'MESSAGE_CREATE');
    expect([m1.d.id, m2.d.id]).toEqual(missed);
    expect(m2.s).toBe((m1.s as number) + 1);
    expect(m1.s).toBeGreaterThan(seen.s as number);
    const resumed = await next(r, 'RESUMED');
    expect(resumed.s).toBe((m2.s as number) + 1);
    expect(resumed.d.sessionId).toBe(sessionId);
    const live1 = await say(w.owner.token, w.channelId, 'live again');
    const l = await next(r, 'MESSAGE_CREATE');
    expect([l.d.id, l.s]).toEqual([live1, (resumed.s as number) + 1]);
    await r.close(1000); // ends the session (D31)
    const again = await live.connect(w.human.token, { query: `sessionId=${sessionId}&seq=${l.s}` });
    expect((await again.next()).op).toBe(10);
    expect(await again.next()).toStrictEqual({ op: 9, d: false });
    const fresh = await next(again, 'READY');
    expect(fresh.s).toBe(1);
    expect(fresh.d.sessionId).not.toBe(sessionId);
    again.terminate(); // dropped: resumable, but only by its own person
    await again.closed;
    await new Promise((r) => setTimeout(r, 100));
    // another person's session id: op 9 as well
    const ownerConn = await live.connect(w.owner.token, {
      query: `sessionId=${fresh.d.sessionId}&seq=1`,
    });
    expect((await ownerConn.next()).op).toBe(10);
    expect(await ownerConn.next()).toStrictEqual({ op: 9, d: false });
    await ownerConn.close();
  });

  it('D63: a bot that subscribed to TYPING_START and PRESENCE_UPDATE receives them (gateway and webhook); it still sees nothing of a channel it cannot view', async () => {
    const sub = await makeBot(live.h, w.owner.id, 'listener');
    await join(live.h, w.guildId, sub.userId);
    await expectStatus(
      // a public address (D37): the test reads the queued deliveries, none needs to arrive
      await live.h.admin.put(`/bots/${sub.id}/webhook`, { url: 'https://93.184.215.14/hook' }),
      200,
    );
    await expectStatus(
      await live.h.as(sub.token).patch('/bot/me', { events: ['TYPING_START', 'PRESENCE_UPDATE'] }),
      200,
    );
    live.clock.advance(1000); // D28
    const bot = await live.connect(sub.token);
    await bot.ready();
    expect((await app(w.human.token, 'POST', `/channels/${w.channelId}/typing`)).status).toBe(204);
    const t = await next(bot, 'TYPING_START', 8000); // past presences (its own "online")
    expect(t.d).toStrictEqual({
      channelId: w.channelId,
      userId: w.human.id,
      at: expect.any(String),
    });
    // D34 still decides what it may see: typing in #secret (no VIEW_CHANNEL for the bot) never comes
    expect((await app(w.owner.token, 'POST', `/channels/${secretId}/typing`)).status).toBe(204);
    const friend = await makeUser(live.h, 'presence-friend');
    await join(live.h, w.guildId, friend.id);
    const f = await live.connect(friend.token);
    await f.ready();
    for (;;) {
      const p = await bot.next({ timeoutMs: 8000 }); // GUILD_MEMBER_ADD comes first
      if (p.t === 'PRESENCE_UPDATE' && p.d.userId === friend.id) {
        expect(p.d).toStrictEqual({ userId: friend.id, status: 'online' });
        break;
      }
    }
    await f.close();
    const typings = bot.raw
      .map((x) => JSON.parse(x) as Frame)
      .filter((x) => x.t === 'TYPING_START');
    expect(typings.map((x) => x.d.channelId)).toEqual([w.channelId]);
    // the same events went to its webhook queue (D63: one subscription for both)
    const hooks = await live.h.services.domain.db
      .selectFrom('webhook_deliveries')
      .select(['event_type'])
      .where('bot_id', '=', sub.id)
      .execute();
    const kinds = new Set(hooks.map((r) => r.event_type));
    expect(kinds.has('TYPING_START')).toBe(true);
    expect(kinds.has('PRESENCE_UPDATE')).toBe(true);
    await bot.close();
  });
});
