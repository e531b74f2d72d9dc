import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  dialect,
  expectStatus,
  join,
  makeUser,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';
import {
  openGateway,
  startLiveServer,
  type Frame,
  type GatewayClient,
  type LiveServer,
} from '../helpers/live-server.js';
import { dropPrefix, redisAvailable, redisUrlWithPrefix, uniquePrefix } from '../helpers/redis.js';

// D66: READY's `presences` (the online among those sharing a guild or a DM — across nodes, where
// presence travels through Redis), each channel's and DM's `lastMessageId`, read states with
// `mentionCount`; MESSAGE_ACK to the person's other sessions.

/** The next dispatch of type `t` matching `match`, passing over any other frame. */
async function until(
  c: GatewayClient,
  t: string,
  match: (f: Frame) => boolean = () => true,
  timeoutMs = 10_000,
): Promise<Frame> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const f = await c.next({ timeoutMs: Math.max(1, deadline - Date.now()) });
    if (f.op === 0 && f.t === t && match(f)) return f;
  }
}

const ready = async (c: GatewayClient) => (await c.ready()).frame.d;

dbDescribe('D66 READY: presences, lastMessageId, mention counts, MESSAGE_ACK', () => {
  let live: LiveServer;
  let w: World;

  beforeAll(async () => {
    live = await startLiveServer();
    w = await makeWorld(live.h);
  });
  afterAll(async () => live.close());

  it('a person connecting later sees who is online; channels and DMs carry lastMessageId; counts are right on a fresh load', async () => {
    const h = live.h;
    // A DM partner who shares no guild with the owner (any more: a DM opens between members).
    const pal = await makeUser(h, 'pal');
    const g2 = (
      await expectStatus(await h.admin.post('/guilds', { name: 'Two', ownerId: w.owner.id }), 201)
    ).body.id as number;
    await join(h, g2, pal.id);
    const dm = (await expectStatus(await h.as(pal.token).post(`/users/${w.owner.id}/dm`), 200)).body
      .channelId as number;
    const inDm = await expectStatus(
      await h.as(pal.token).post(`/dm/channels/${dm}/messages`, { content: 'hello owner' }),
      200,
    );
    await expectStatus(await h.admin.delete(`/guilds/${g2}`), 204);
    const m1 = await expectStatus(
      await h.as(w.human.token).post(`/channels/${w.channelId}/messages`, {
        content: `<@${w.owner.id}> look`,
      }),
      200,
    );
    const m2 = await expectStatus(
      await h.as(w.human.token).post(`/channels/${w.channelId}/messages`, { content: '@everyone' }),
      200,
    );
    // human lacks MENTION_EVERYONE: only m1 counts. human, pal and the bot come online first.
    const human = await live.connect(w.human.token);
    await ready(human);
    const palC = await live.connect(pal.token);
    await ready(palC);
    const bot = await live.connect(w.bot.token);
    await bot.ready();

    const owner = await live.connect(w.owner.token);
    const r = await ready(owner);
    // D66: the online among those sharing a guild (human, the bot) or a DM (pal), not oneself.
    expect(r.presences).toEqual(
      [w.human.id, pal.id, w.bot.userId]
        .sort((a, b) => a - b)
        .map((userId) => ({ userId, status: 'online' })),
    );
    const general = r.guilds[0].channels.find((c: { id: number }) => c.id === w.channelId);
    expect(general).toEqual({
      id: w.channelId,
      guildId: w.guildId,
      type: 0,
      name: 'general',
      topic: 'hi',
      lastMessageId: m2.body.id,
    });
    expect(r.dms).toEqual([
      {
        channelId: dm,
        recipient: { id: pal.id, name: 'pal', avatar: expect.any(String), isBot: false },
        lastMessageId: inDm.body.id,
      },
    ]);
    expect(r.readStates).toEqual(
      [
        { channelId: w.channelId, lastReadId: 0, mentionCount: 1 },
        { channelId: dm, lastReadId: 0, mentionCount: 1 },
      ].sort((a, b) => a.channelId - b.channelId),
    );
    expect(m1.body.mentions).toEqual([w.owner.id]);

    // MESSAGE_ACK: a read through one session reaches the person's other sessions with the count.
    const owner2 = await live.connect(w.owner.token);
    await ready(owner2);
    expect(
      (
        await h
          .people(w.owner.token)
          .put(`/channels/${w.channelId}/read`, { messageId: m1.body.id })
      ).status,
    ).toBe(204);
    for (const c of [owner, owner2])
      expect((await until(c, 'MESSAGE_ACK')).d).toEqual({
        channelId: w.channelId,
        lastReadId: m1.body.id,
        mentionCount: 0,
      });
    // Nobody else hears it.
    await new Promise((res) => setTimeout(res, 300));
    expect(human.pending().some((f) => f.t === 'MESSAGE_ACK')).toBe(false);

    // D66: a DM partner hears presence changes too (they share no guild).
    await palC.close();
    expect((await until(owner, 'PRESENCE_UPDATE', (f) => f.d.userId === pal.id)).d.status).toBe(
      'offline',
    );
    const again = await live.connect(w.owner.token);
    const r2 = await ready(again);
    expect(r2.presences.map((p: { userId: number }) => p.userId)).not.toContain(pal.id);
    for (const c of [human, bot, owner, owner2, again]) await c.close();
  });
});

const redisOk = await redisAvailable();

dbDescribe('D66 READY presences across two nodes (presence through Redis)', () => {
  const prefix = uniquePrefix();
  let a: Harness;
  let b: Harness;
  let urlA: string;
  let urlB: string;
  let w: World;
  let dir: string | undefined;
  const clients: GatewayClient[] = [];

  const listen = async (h: Harness): Promise<string> => {
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    return `ws://127.0.0.1:${(h.app.server.address() as AddressInfo).port}/gateway`;
  };
  const connect = async (url: string, token: string): Promise<GatewayClient> => {
    const at = await openGateway(url, token);
    if (at.kind !== 'open') throw new Error(`refused: ${at.status}`);
    clients.push(at.client);
    return at.client;
  };

  beforeAll(async () => {
    if (!redisOk) return;
    const redis = { PARLEY_REDIS_URL: redisUrlWithPrefix(prefix) };
    if (dialect === 'sqlite') dir = mkdtempSync(path.join(tmpdir(), 'parley-presence-'));
    a = await createHarness({
      env: {
        ...redis,
        PARLEY_NODE_ID: '1',
        ...(dir ? { PARLEY_DATABASE_URL: `sqlite:${path.join(dir, 'parley.db')}` } : {}),
      },
    });
    b = await createHarness({ sameDatabaseAs: a, env: { ...redis, PARLEY_NODE_ID: '2' } });
    urlA = await listen(a);
    urlB = await listen(b);
    w = await makeWorld(a);
  });
  afterAll(async () => {
    if (!redisOk) return;
    for (const c of clients) c.terminate();
    await b?.close();
    await a?.close();
    await dropPrefix(prefix);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it.skipIf(!redisOk)(
    'a person on node B sees in READY who is online on node A, and not once they left',
    async () => {
      const cat = await makeUser(a, 'cat');
      await join(a, w.guildId, cat.id);
      // owner watches on B; human comes online on A.
      const owner = await connect(urlB, w.owner.token);
      expect((await ready(owner)).presences).toEqual([]);
      const human = await connect(urlA, w.human.token);
      await ready(human);
      // B's owner hears it (through the shared event flow): A has written it to Redis by then.
      await until(owner, 'PRESENCE_UPDATE', (f) => f.d.userId === w.human.id);
      // cat connects to B: READY on B lists human, online on A only, and owner (here).
      const catC = await connect(urlB, cat.token);
      const r = await ready(catC);
      expect(r.presences).toEqual(
        [w.owner.id, w.human.id]
          .sort((x, y) => x - y)
          .map((userId) => ({ userId, status: 'online' })),
      );
      // and on A, human's fresh READY lists owner and cat (online on B).
      const human2 = await connect(urlA, w.human.token);
      expect((await ready(human2)).presences).toEqual(
        [w.owner.id, cat.id].sort((x, y) => x - y).map((userId) => ({ userId, status: 'online' })),
      );
      // human leaves A (after the grace, offline): a fresh READY on B no longer lists them.
      await human.close();
      await human2.close();
      expect(
        (await until(owner, 'PRESENCE_UPDATE', (f) => f.d.userId === w.human.id)).d.status,
      ).toBe('offline');
      const cat2 = await connect(urlB, cat.token);
      expect((await ready(cat2)).presences).toEqual([{ userId: w.owner.id, status: 'online' }]);
    },
    30_000,
  );
});
