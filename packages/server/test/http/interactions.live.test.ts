import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { WebhookWorker } from '../../src/webhooks/worker.js';
import {
  createHarness,
  dbDescribe,
  dialect,
  expectStatus,
  makeBot,
  join,
  makeUser,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';
import { openGateway, type Frame, type GatewayClient } from '../helpers/live-server.js';
import { Receiver } from '../helpers/receiver.js';

// D65 over real sockets: INTERACTION_CREATE at the bot's gateway; an ephemeral reply reaches the
// invoker's gateway and never another member's; a webhook bot answering in its 2xx body; and two
// nodes on one database — invoked on node A, the bot connected to node B (answering through B),
// the reply seen at the invoker's gateway on node A.
dbDescribe('interactions over gateways, webhooks and two nodes (D65)', () => {
  let a: Harness;
  let b: Harness;
  let w: World;
  let dir: string | undefined;
  let gwA: string;
  let gwB: string;
  let originB: string;
  let rollId: number;
  let other: { id: number; token: string };
  const clients: GatewayClient[] = [];

  const listen = async (h: Harness): Promise<{ gw: string; origin: string }> => {
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = h.app.server.address() as AddressInfo;
    return { gw: `ws://127.0.0.1:${port}/gateway`, origin: `http://127.0.0.1:${port}` };
  };
  const connect = async (url: string, token: string): Promise<GatewayClient> => {
    const at = await openGateway(url, token);
    if (at.kind !== 'open') throw new Error(`refused ${at.status}`);
    clients.push(at.client);
    await at.client.ready();
    return at.client;
  };
  /** The next dispatch of type `t` (others skipped), or an error after `ms`. */
  const until = async (c: GatewayClient, t: string, ms = 5000): Promise<Frame> => {
    const deadline = Date.now() + ms;
    for (;;) {
      const f = await c.next({ timeoutMs: Math.max(1, deadline - Date.now()) });
      if (f.op === 0 && f.t === t) return f;
    }
  };

  beforeAll(async () => {
    if (dialect === 'sqlite') dir = mkdtempSync(path.join(tmpdir(), 'parley-interactions-'));
    const hooks = { PARLEY_WEBHOOK_ALLOW_INSECURE: 'true', PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true' };
    a = await createHarness({
      env: dir ? { ...hooks, PARLEY_DATABASE_URL: `sqlite:${path.join(dir, 'parley.db')}` } : hooks,
    });
    b = await createHarness({ sameDatabaseAs: a, env: { ...hooks, PARLEY_NODE_ID: '2' } });
    gwA = (await listen(a)).gw;
    const lb = await listen(b);
    gwB = lb.gw;
    originB = lb.origin;
    w = await makeWorld(a);
    other = await makeUser(a, 'other');
    await join(a, w.guildId, other.id);
    const put = await expectStatus(
      await a.as(w.bot.token).put('/applications/@me/commands', [
        {
          name: 'roll',
          description: 'Roll',
          options: [{ type: 4, name: 'sides', description: 'S', required: true }],
        },
      ]),
      200,
    );
    rollId = put.body[0].id;
  });
  afterAll(async () => {
    for (const c of clients) c.terminate();
    await b?.close();
    await a?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const invoke = async (h: Harness) =>
    expectStatus(
      await h.as(w.human.token).post('/interactions', {
        type: 2,
        channelId: w.channelId,
        commandId: rollId,
        options: [{ name: 'sides', value: 6 }],
      }),
      202,
    );

  it('two nodes: invoked on A, the bot on B gets INTERACTION_CREATE and answers through B; the invoker on A sees the reply', async () => {
    const bot = await connect(gwB, w.bot.token);
    const human = await connect(gwA, w.human.token);
    const r = await invoke(a);
    const ic = await until(bot, 'INTERACTION_CREATE');
    expect(ic.d).toMatchObject({
      id: r.body.id,
      type: 2,
      user: { id: w.human.id },
      data: { name: 'roll' },
    });
    // the bot answers on node B, over HTTP
    const cb = await fetch(`${originB}/api/v1/interactions/${ic.d.id}/${ic.d.token}/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 4, data: { content: 'cross-node 4' } }),
    });
    expect(cb.status).toBe(204);
    const seen = await until(human, 'MESSAGE_CREATE');
    expect(seen.d).toMatchObject({
      content: 'cross-node 4',
      interaction: { id: r.body.id, name: 'roll', userId: w.human.id },
    });
    bot.terminate();
    human.terminate();
  });

  it("ephemeral: the invoker's gateway gets it (flags 1); another member's gateway and history never do", async () => {
    const human = await connect(gwA, w.human.token);
    const watcher = await connect(gwA, other.token);
    const r = await invoke(a);
    const token = (
      await a.services.domain.db
        .selectFrom('event_log')
        .select('data')
        .where('type', '=', 'INTERACTION_CREATE')
        .execute()
    )
      .map((x) => JSON.parse(x.data) as { id: number; token: string })
      .find((x) => x.id === r.body.id)?.token;
    await expectStatus(
      await a.as(undefined).post(`/interactions/${r.body.id}/${token}/callback`, {
        type: 4,
        data: { content: 'for your eyes', flags: 1 },
      }),
      204,
    );
    const mine = await until(human, 'MESSAGE_CREATE');
    expect(mine.d).toMatchObject({ content: 'for your eyes', flags: 1 });
    // a marker sent afterwards is the watcher's next MESSAGE_CREATE: the ephemeral one never came
    await expectStatus(
      await a.as(w.owner.token).post(`/channels/${w.channelId}/messages`, { content: 'marker' }),
      200,
    );
    const next = await until(watcher, 'MESSAGE_CREATE');
    expect(next.d.content).toBe('marker');
    expect(watcher.raw.some((t) => t.includes('for your eyes'))).toBe(false);
    const hist = await expectStatus(
      await a.as(other.token).get(`/channels/${w.channelId}/messages?limit=100`),
      200,
    );
    expect(hist.raw).not.toContain('for your eyes');
    // node B's people never see it either (it is the invoker's alone)
    const watcherB = await connect(gwB, other.token);
    await expectStatus(
      await a.as(w.owner.token).post(`/channels/${w.channelId}/messages`, { content: 'marker 2' }),
      200,
    );
    // (node B reads the event log behind its own commits, D72: a session opened meanwhile may
    // still be handed the first marker, committed just before it connected)
    let seenB = await until(watcherB, 'MESSAGE_CREATE');
    if (seenB.d.content === 'marker') seenB = await until(watcherB, 'MESSAGE_CREATE');
    expect(seenB.d.content).toBe('marker 2');
    expect(watcherB.raw.some((t) => t.includes('for your eyes'))).toBe(false);
  });

  it("a webhook bot's 2xx JSON body is its callback (D65), whatever its event subscription", async () => {
    const receiver = await new Receiver().listen();
    const worker = new WebhookWorker(a.services.domain, { pollMs: 20 });
    const off = a.services.events.onWebhooks(() => worker.wake());
    worker.start();
    try {
      const hook = await makeBot(a, w.owner.id, 'hooked');
      await join(a, w.guildId, hook.userId);
      await a.services.domain.db
        .updateTable('bots')
        .set({ webhook_url: receiver.url })
        .where('id', '=', hook.id)
        .execute();
      const put = await expectStatus(
        await a
          .as(hook.token)
          .put(`/guilds/${w.guildId}/commands`, [{ name: 'ping', description: 'Ping' }]),
        200,
      );
      receiver.always((res, req) => {
        const e = JSON.parse(req.body.toString()) as { type: string };
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          e.type === 'INTERACTION_CREATE'
            ? JSON.stringify({ type: 4, data: { content: 'pong from the body' } })
            : '',
        );
      });
      const human = await connect(gwA, w.human.token);
      const r = await expectStatus(
        await a
          .as(w.human.token)
          .post('/interactions', { type: 2, channelId: w.channelId, commandId: put.body[0].id }),
        202,
      );
      const seen = await until(human, 'MESSAGE_CREATE', 10_000);
      expect(seen.d).toMatchObject({
        content: 'pong from the body',
        author: { id: hook.userId },
        interaction: { id: r.body.id, name: 'ping' },
      });
      const got = receiver.received.find(
        (x) => x.headers['x-service-event'] === 'INTERACTION_CREATE',
      );
      expect(got).toBeDefined();
    } finally {
      off();
      await worker.stop();
      await receiver.close();
    }
  });
});
