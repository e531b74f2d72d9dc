import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  dialect,
  expectError,
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
  type GatewayClient,
  type LiveServer,
} from '../helpers/live-server.js';
import { PushService } from '../helpers/push-service.js';
import { dropPrefix, redisDescribe, redisUrlWithPrefix, uniquePrefix } from '../helpers/redis.js';

// D66: Web Push end to end. The server's sender encrypts (RFC 8291 aes128gcm) and signs (VAPID,
// RFC 8292); a local push service written for the test checks the JWT and decrypts the payload
// with the subscription's own private key. The push service is on 127.0.0.1 over http, which
// D37's rules allow only with PARLEY_WEBHOOK_ALLOW_INSECURE and _PRIVATE (development/tests).
const DEV = { PARLEY_WEBHOOK_ALLOW_INSECURE: 'true', PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true' };

dbDescribe('Web Push (D66)', () => {
  let live: LiveServer;
  let h: Harness;
  let w: World;
  let third: { id: number; token: string };
  const push = new PushService();
  /** each person's one subscription: its path on the push service */
  const sub: Record<string, { path: string; id: number }> = {};
  const open: GatewayClient[] = [];

  const subscribe = async (token: string): Promise<{ path: string; id: number }> => {
    const s = push.subscribe();
    const r = await expectStatus(
      await h.people(token).post('/push-subscriptions', { endpoint: s.endpoint, keys: s.keys }),
      201,
    );
    expect(Object.keys(r.body)).toEqual(['id']);
    return { path: s.path, id: r.body.id as number };
  };

  /** A person's tab: connected, READY, then op 3 as the web app sends it. */
  const tab = async (token: string, visible: boolean): Promise<GatewayClient> => {
    const c = await live.connect(token);
    await c.ready();
    c.send({ op: 3, d: { visible } });
    open.push(c);
    // op 3 has no answer: a heartbeat's ACK after it says the server has read it (in order).
    c.send({ op: 1, d: c.lastSeq });
    await c.next({ acks: true });
    return c;
  };

  const say = async (token: string, content: string, channelId = w.channelId) =>
    (
      await expectStatus(
        await h.as(token).post(`/channels/${channelId}/messages`, { content }),
        200,
      )
    ).body as { id: number };

  beforeAll(async () => {
    await push.start();
    live = await startLiveServer({ env: DEV });
    h = live.h;
    w = await makeWorld(h);
    third = await makeUser(h, 'third');
    await join(h, w.guildId, third.id);
    sub['human'] = await subscribe(w.human.token);
    sub['third'] = await subscribe(third.token);
    sub['owner'] = await subscribe(w.owner.token);
  });

  afterAll(async () => {
    for (const c of open) c.terminate();
    await live?.close();
    await push.close();
  });

  it('GET the VAPID key: the uncompressed P-256 key the pushes are signed with', async () => {
    const r = await expectStatus(
      await h.people(w.human.token).get('/push-subscriptions/vapid-key'),
      200,
    );
    expect(Object.keys(r.body)).toEqual(['publicKey']);
    const raw = Buffer.from(r.body.publicKey as string, 'base64url');
    expect(raw.length).toBe(65);
    expect(raw[0]).toBe(4);
    expectError(
      await h.people(undefined).get('/push-subscriptions/vapid-key'),
      401,
      'UNAUTHORIZED',
    );
  });

  it('a mention of a person with no tab open: one push, signed and encrypted, with the right text', async () => {
    const before = push.to(sub['human']!.path).length;
    await say(w.owner.token, `look here <@${w.human.id}>, the build is green`);
    const got = (await push.waitFor(sub['human']!.path, before + 1))[before]!;
    const key = await h.people(w.human.token).get('/push-subscriptions/vapid-key');
    expect(got.k).toBe(key.body.publicKey);
    expect(got.jwt.claims.aud).toBe(push.origin);
    expect(got.jwt.claims.sub).toMatch(/^mailto:operator@parley\.test$/);
    expect(got.headers['urgency']).toBe('high');
    expect(got.payload).toStrictEqual({
      title: 'owner in #general',
      body: 'look here @human, the build is green',
      url: `/g/${w.guildId}/${w.channelId}`,
      tag: `channel:${w.channelId}`,
    });
    // the author is not notified of their own message; nobody else was mentioned
    expect(push.to(sub['owner']!.path)).toHaveLength(0);
  });

  it('a person with a visible tab gets none; hidden again (or closed), they do', async () => {
    const c = await tab(w.human.token, true);
    const human0 = push.to(sub['human']!.path).length;
    const third0 = push.to(sub['third']!.path).length;
    // One message mentions both: third (no tab) is the witness that the push was planned.
    await say(w.owner.token, `<@${w.human.id}> <@${third.id}> standup`);
    await push.waitFor(sub['third']!.path, third0 + 1);
    await new Promise((r) => setTimeout(r, 300)); // both were queued together; let any stray land
    expect(push.to(sub['human']!.path)).toHaveLength(human0);

    // the tab goes to the background (op 3 visible:false): the next mention pushes
    c.send({ op: 3, d: { visible: false } });
    c.send({ op: 1, d: c.lastSeq });
    await c.next({ acks: true });
    await say(w.owner.token, `<@${w.human.id}> again`);
    const after = await push.waitFor(sub['human']!.path, human0 + 1);
    expect(after[human0]!.payload.body).toBe('@human again');

    // visible again, then closed: a closed tab sees nothing
    c.send({ op: 3, d: { visible: true } });
    c.send({ op: 1, d: c.lastSeq });
    await c.next({ acks: true });
    await c.close();
    await say(w.owner.token, `<@${w.human.id}> after close`);
    const closed = await push.waitFor(sub['human']!.path, human0 + 2, 15_000);
    expect(closed[human0 + 1]!.payload.body).toBe('@human after close');
  });

  it("op 3 is a person's only: a malformed one is an ERROR frame; a bot sending it is closed 4001 (D56)", async () => {
    const c = await live.connect(w.human.token);
    await c.ready();
    open.push(c);
    c.send({ op: 3, d: { visible: 'yes' } });
    let err = await c.next();
    while (err.t !== 'ERROR') err = await c.next(); // presence may come first
    expect(err.d.code).toBe('INVALID_PAYLOAD');
    const bot = await live.connect(w.bot.token);
    await bot.ready();
    bot.send({ op: 3, d: { visible: true } });
    expect((await bot.closed).code).toBe(4001);
  });

  it('a DM: the other party gets a push titled with the author, opening the DM', async () => {
    const dm = await expectStatus(await h.as(w.owner.token).post(`/users/${third.id}/dm`), 200);
    const ch = dm.body.channelId as number;
    const before = push.to(sub['third']!.path).length;
    await expectStatus(
      await h.as(w.owner.token).post(`/dm/channels/${ch}/messages`, { content: 'lunch?' }),
      200,
    );
    const got = (await push.waitFor(sub['third']!.path, before + 1))[before]!;
    expect(got.payload).toStrictEqual({
      title: 'owner',
      body: 'lunch?',
      url: `/dm/${ch}`,
      tag: `channel:${ch}`,
    });
  });

  it("a spoiler is not shown on the lock screen: the push says '(spoiler)' (D62)", async () => {
    const dm = await expectStatus(await h.as(w.owner.token).post(`/users/${third.id}/dm`), 200);
    const ch = dm.body.channelId as number;
    const before = push.to(sub['third']!.path).length;
    await expectStatus(
      await h.as(w.owner.token).post(`/dm/channels/${ch}/messages`, {
        content: 'the ending: ||he was a ghost\nall along|| — and `a||b` stays',
      }),
      200,
    );
    const got = (await push.waitFor(sub['third']!.path, before + 1))[before]!;
    expect(got.payload.body).toBe('the ending: (spoiler) — and `a||b` stays');
  });

  it("a role's mention reads its name; a role of another guild does not (D66)", async () => {
    const role = await expectStatus(
      await h.admin.post(`/guilds/${w.guildId}/roles`, { name: 'reviewers', permissions: 0 }),
      201,
    );
    await expectStatus(
      await h.admin.put(`/guilds/${w.guildId}/members/${third.id}`, { roles: [role.body.id] }),
      200,
    );
    const before = push.to(sub['third']!.path).length;
    await say(w.owner.token, `<@&${role.body.id}> please look, not <@&${w.guildId + 999}>`);
    const got = (await push.waitFor(sub['third']!.path, before + 1))[before]!;
    expect(got.payload.body).toBe('@reviewers please look, not @role');
  });

  it('a message that notifies nobody pushes nothing', async () => {
    const counts = () => push.received.length;
    const before = counts();
    await say(w.owner.token, 'no mention at all');
    // a witness after it: a DM-free mention of third
    const t0 = push.to(sub['third']!.path).length;
    await say(w.owner.token, `<@${third.id}> witness`);
    await push.waitFor(sub['third']!.path, t0 + 1);
    expect(push.received.length).toBe(before + 1);
  });

  it('as the settings say (D66): level none and a mute notify nothing; level all notifies every message', async () => {
    const me = h.people(w.human.token);
    const setting = (body: Record<string, unknown>) =>
      me.put('/users/@me/notification-settings', { channelId: w.channelId, ...body });
    /** a mention of human and of third: third's push is the witness that it was planned */
    const mentionBoth = async (text: string): Promise<void> => {
      const t0 = push.to(sub['third']!.path).length;
      await say(w.owner.token, `<@${w.human.id}> <@${third.id}> ${text}`);
      await push.waitFor(sub['third']!.path, t0 + 1);
      await new Promise((r) => setTimeout(r, 300));
    };
    const h0 = push.to(sub['human']!.path).length;
    await expectStatus(await setting({ level: 'none' }), 204);
    await mentionBoth('level none');
    expect(push.to(sub['human']!.path)).toHaveLength(h0);

    const hour = new Date(Date.now() + 3_600_000).toISOString();
    await expectStatus(await setting({ level: 'mentions', muteUntil: hour }), 204);
    await mentionBoth('muted');
    expect(push.to(sub['human']!.path)).toHaveLength(h0);

    await expectStatus(await setting({ level: 'mentions', muteUntil: null }), 204);
    await mentionBoth('unmuted');
    const got = await push.waitFor(sub['human']!.path, h0 + 1);
    expect(got[h0]!.payload.body).toBe('@human @third unmuted');

    // level all: a message that mentions nobody reaches third too
    await expectStatus(
      await h.people(third.token).put('/users/@me/notification-settings', {
        guildId: w.guildId,
        level: 'all',
      }),
      204,
    );
    const t0 = push.to(sub['third']!.path).length;
    await say(w.owner.token, 'plain news for everyone');
    const all = await push.waitFor(sub['third']!.path, t0 + 1);
    expect(all[t0]!.payload).toMatchObject({
      title: 'owner in #general',
      body: 'plain news for everyone',
    });
    await expectStatus(
      await h.people(third.token).put('/users/@me/notification-settings', {
        guildId: w.guildId,
        level: 'mentions',
      }),
      204,
    );
  });

  it('410 from the push service deletes the subscription; later pushes skip it', async () => {
    const gone = await subscribe(w.human.token);
    push.answers.set(gone.path, 410);
    await say(w.owner.token, `<@${w.human.id}> are you there`);
    await push.waitFor(gone.path, 1);
    const db = h.services.domain.db;
    const deadline = Date.now() + 10_000;
    for (;;) {
      const row = await db
        .selectFrom('push_subscriptions')
        .select('id')
        .where('id', '=', gone.id)
        .executeTakeFirst();
      if (!row) break;
      if (Date.now() > deadline) throw new Error('the 410 subscription was not removed');
      await new Promise((r) => setTimeout(r, 50));
    }
    // the person's other device still gets the next one; the gone one does not
    const n = push.to(sub['human']!.path).length;
    await say(w.owner.token, `<@${w.human.id}> once more`);
    await push.waitFor(sub['human']!.path, n + 1);
    expect(push.to(gone.path)).toHaveLength(1);
  });

  it('validation: https (D37), key sizes, own subscriptions only, bots refused', async () => {
    const s = push.subscribe();
    const me = h.people(w.human.token);
    expectError(
      await me.post('/push-subscriptions', { endpoint: 'ftp://push.example/x', keys: s.keys }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await me.post('/push-subscriptions', {
        endpoint: s.endpoint,
        keys: { p256dh: s.keys.p256dh.slice(0, 40), auth: s.keys.auth },
      }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await me.post('/push-subscriptions', {
        endpoint: s.endpoint,
        keys: { p256dh: s.keys.p256dh, auth: 'A'.repeat(30) },
      }),
      400,
      'VALIDATION_ERROR',
    );
    // a point that is 65 bytes but not uncompressed (0x05 …)
    const bad = Buffer.from(s.keys.p256dh, 'base64url');
    bad[0] = 5;
    expectError(
      await me.post('/push-subscriptions', {
        endpoint: s.endpoint,
        keys: { p256dh: bad.toString('base64url'), auth: s.keys.auth },
      }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await me.post('/push-subscriptions', { endpoint: s.endpoint }),
      400,
      'VALIDATION_ERROR',
    );
    // someone else's subscription: 404, and it stays
    expectError(
      await h.people(third.token).delete(`/push-subscriptions/${sub['human']!.id}`),
      404,
      'NOT_FOUND',
    );
    const mine = await subscribe(third.token);
    await expectStatus(await h.people(third.token).delete(`/push-subscriptions/${mine.id}`), 204);
    expectError(
      await h.people(third.token).delete(`/push-subscriptions/${mine.id}`),
      404,
      'NOT_FOUND',
    );
    // the same endpoint subscribed again replaces its row (one device, one subscription)
    const again = await expectStatus(
      await h
        .people(third.token)
        .post('/push-subscriptions', { endpoint: s.endpoint, keys: s.keys }),
      201,
    );
    const twice = await expectStatus(
      await h
        .people(third.token)
        .post('/push-subscriptions', { endpoint: s.endpoint, keys: s.keys }),
      201,
    );
    expect(twice.body.id).not.toBe(again.body.id);
    const rows = await h.services.domain.db
      .selectFrom('push_subscriptions')
      .select('id')
      .where('endpoint', '=', s.endpoint)
      .execute();
    expect(rows.map((r) => Number(r.id))).toEqual([twice.body.id]);
    await h.people(third.token).delete(`/push-subscriptions/${twice.body.id}`);
    // a bot has no devices to notify
    const r = await h
      .people(w.bot.token)
      .post('/push-subscriptions', { endpoint: s.endpoint, keys: s.keys });
    expect([401, 403]).toContain(r.status);
  });

  it('a subscription goes with its session (logout / session ended)', async () => {
    const p = await makeUser(h, 'leaver');
    const s = await subscribe(p.token);
    await expectStatus(await h.people(p.token).post('/auth/logout'), 204);
    const row = await h.services.domain.db
      .selectFrom('push_subscriptions')
      .select('id')
      .where('id', '=', s.id)
      .executeTakeFirst();
    expect(row).toBeUndefined();
  });
});

dbDescribe('Web Push without the operator allowing private targets (D37)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('an http or loopback endpoint is refused: https and a public address only', async () => {
    const w = await makeWorld(h);
    const keys = {
      p256dh: Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 7)]).toString('base64url'),
      auth: Buffer.alloc(16, 1).toString('base64url'),
    };
    for (const endpoint of [
      'http://push.example.com/x',
      'https://127.0.0.1/x',
      'https://[::1]/x',
      'https://10.0.0.8/x',
      'https://user:pw@push.example.com/x',
    ]) {
      const r = await h.people(w.human.token).post('/push-subscriptions', { endpoint, keys });
      expectError(r, 400, 'VALIDATION_ERROR', endpoint);
      expect(r.body.error.details[0].field).toBe('endpoint');
    }
  });
});

// D66 across nodes: a visible tab on node B keeps node A from pushing (Redis carries who has one).
redisDescribe('Web Push: a visible tab on another node counts (D66)', () => {
  dbDescribe('two nodes', () => {
    let a: Harness;
    let b: Harness;
    let dir: string | undefined;
    const prefix = uniquePrefix();
    const push = new PushService();
    let tabB: GatewayClient | undefined;

    beforeAll(async () => {
      await push.start();
      if (dialect === 'sqlite') dir = mkdtempSync(path.join(tmpdir(), 'parley-push-'));
      const env = { ...DEV, PARLEY_REDIS_URL: redisUrlWithPrefix(prefix) };
      a = await createHarness({
        env: {
          ...env,
          PARLEY_NODE_ID: '27',
          ...(dir ? { PARLEY_DATABASE_URL: `sqlite:${path.join(dir, 'parley.db')}` } : {}),
        },
      });
      b = await createHarness({ sameDatabaseAs: a, env: { ...env, PARLEY_NODE_ID: '28' } });
      await b.app.listen({ host: '127.0.0.1', port: 0 });
    });

    afterAll(async () => {
      tabB?.terminate();
      await b?.close();
      await a?.close();
      await push.close();
      await dropPrefix(prefix);
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it('a mention sent through A: no push while B holds a visible tab; one once it is hidden', async () => {
      const w = await makeWorld(a);
      const third = await makeUser(a, 'third');
      await join(a, w.guildId, third.id);
      const subs: Record<string, string> = {};
      for (const [name, token] of [
        ['human', w.human.token],
        ['third', third.token],
      ] as const) {
        const s = push.subscribe();
        await expectStatus(
          await a.people(token).post('/push-subscriptions', { endpoint: s.endpoint, keys: s.keys }),
          201,
        );
        subs[name] = s.path;
      }
      // The same VAPID key on both nodes (generated once, kept in the shared database).
      expect(b.services.push.sender.publicKey).toBe(a.services.push.sender.publicKey);
      const { port } = b.app.server.address() as AddressInfo;
      const opened = await openGateway(`ws://127.0.0.1:${port}/gateway`, w.human.token);
      if (opened.kind !== 'open') throw new Error(`refused ${opened.status}`);
      tabB = opened.client;
      await tabB.ready();
      tabB.send({ op: 3, d: { visible: true } });
      // wait until A can see it through Redis (B writes its set as the frame arrives)
      const deadline = Date.now() + 10_000;
      while (!(await a.services.push.visibility.visibleAnywhere([w.human.id])).has(w.human.id)) {
        if (Date.now() > deadline) throw new Error('A never saw the tab on B');
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(a.services.push.visibility.isVisibleHere(w.human.id)).toBe(false);
      const say = (content: string) =>
        a.as(w.owner.token).post(`/channels/${w.channelId}/messages`, { content });
      await expectStatus(await say(`<@${w.human.id}> <@${third.id}> from A`), 200);
      await push.waitFor(subs['third']!, 1);
      await new Promise((r) => setTimeout(r, 300));
      expect(push.to(subs['human']!)).toHaveLength(0);

      tabB.send({ op: 3, d: { visible: false } });
      const until = Date.now() + 10_000;
      while ((await a.services.push.visibility.visibleAnywhere([w.human.id])).has(w.human.id)) {
        if (Date.now() > until) throw new Error('A still sees the hidden tab on B');
        await new Promise((r) => setTimeout(r, 25));
      }
      await expectStatus(await say(`<@${w.human.id}> hidden now`), 200);
      const got = await push.waitFor(subs['human']!, 1);
      expect(got[0]!.payload.body).toBe('@human hidden now');
    });
  });
});
