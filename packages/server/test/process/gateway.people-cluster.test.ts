import pg from 'pg';
import { Redis } from 'ioredis';
import { expect, it } from 'vitest';
import { clusterDescribe, twoNodes } from '../helpers/cluster.js';
import { PG_URL } from '../helpers/harness.js';
import {
  connectPatiently,
  openGateway,
  type Frame,
  type GatewayClient,
} from '../helpers/live-server.js';
import { call } from '../helpers/process.js';
import { REDIS_URL } from '../helpers/redis.js';

// Issue 11 (D51): two server processes on one PostgreSQL (a fresh schema) and one Redis. A person
// connected to node B sees a message, a typing event and a presence change caused through node A;
// a person's session is not resumable on another node (op 9 and a fresh READY); a session ended
// through node A closes its connection on node B with 4004.
const ADMIN = 'cluster-people-admin-token-0123456789';
clusterDescribe("people's gateway across two nodes (PostgreSQL + Redis)", () => {
  const cluster = twoNodes('pgw', ADMIN);
  const nodes = cluster.nodes;
  const world = cluster.world;
  const person = async (
    gatewayUrl: string,
    token: string,
    query?: string,
  ): Promise<GatewayClient> => {
    const at = await openGateway(gatewayUrl, token, query ? { query } : {});
    if (at.kind !== 'open') throw new Error(`refused: ${at.status} ${JSON.stringify(at.body)}`);
    return at.client;
  };
  /** The next dispatch of type `t`, passing over presence updates. */
  const next = async (c: GatewayClient, t: string): Promise<Frame> => {
    for (;;) {
      const f = await c.next({ timeoutMs: 8000 });
      if (f.op === 0 && f.t === t) return f;
      if (f.op === 0 && f.t === 'PRESENCE_UPDATE') continue;
      throw new Error(`expected ${t}, got ${JSON.stringify(f)}`);
    }
  };
  const presenceOf = async (c: GatewayClient, userId: number): Promise<string> => {
    for (;;) {
      const f = await c.dispatch('PRESENCE_UPDATE', 10_000);
      if (f.d.userId === userId) return f.d.status as string;
    }
  };

  it('a person on node B sees a message, a typing event and a presence change caused through node A', async () => {
    const { A, B } = nodes();
    const onB = await person(B.gatewayUrl, world().human.token);
    const ready = await onB.ready();
    expect(ready.frame.d.guilds.map((g: { id: number }) => g.id)).toEqual([world().guildId]);
    // a message through A
    const sent = await call(
      A.origin,
      'POST',
      `/api/v1/channels/${world().channelId}/messages`,
      world().bot.token,
      {
        content: 'from A',
      },
    );
    expect(sent.status).toBe(200);
    expect((await next(onB, 'MESSAGE_CREATE')).d).toMatchObject({
      id: sent.body.id,
      content: 'from A',
    });
    // typing through A, by another person
    const owner = await call(A.origin, 'POST', `/admin/v1/users`, ADMIN, { name: 'typist' });
    await call(
      A.origin,
      'PUT',
      `/admin/v1/guilds/${world().guildId}/members/${owner.body.id}`,
      ADMIN,
      {},
    );
    const session = await call(
      A.origin,
      'POST',
      `/admin/v1/users/${owner.body.id}/sessions`,
      ADMIN,
    );
    const typed = await call(
      A.origin,
      'POST',
      `/app/v1/channels/${world().channelId}/typing`,
      session.body.token,
    );
    expect(typed.status).toBe(204);
    expect((await next(onB, 'GUILD_MEMBER_ADD')).d.user.id).toBe(owner.body.id); // joined through A
    expect((await next(onB, 'TYPING_START')).d).toMatchObject({
      channelId: world().channelId,
      userId: owner.body.id,
    });
    // presence: the typist connects to A, then leaves
    const onA = await person(A.gatewayUrl, session.body.token);
    await onA.ready();
    expect(await presenceOf(onB, owner.body.id)).toBe('online');
    await onA.close();
    expect(await presenceOf(onB, owner.body.id)).toBe('offline');
    // a bot's connection on A counts as well
    const bot = await connectPatiently(A.gatewayUrl, world().bot.token);
    await bot.ready();
    expect(await presenceOf(onB, world().bot.userId)).toBe('online');
    await bot.close();
    await onB.close();
  });

  it("a person's session does not resume on another node: op 9 and a fresh READY", async () => {
    const { A, B } = nodes();
    const onA = await person(A.gatewayUrl, world().human.token);
    const { sessionId } = await onA.ready();
    onA.terminate();
    await onA.closed;
    const onB = await person(B.gatewayUrl, world().human.token, `sessionId=${sessionId}&seq=1`);
    expect((await onB.next()).op).toBe(10);
    expect(await onB.next()).toStrictEqual({ op: 9, d: false });
    const fresh = await next(onB, 'READY');
    expect(fresh.d.sessionId).not.toBe(sessionId);
    await onB.close();
  });

  it('D47: a session ended through node A closes its connection on node B with 4004', async () => {
    const { A, B } = nodes();
    const s = await call(A.origin, 'POST', `/admin/v1/users/${world().human.id}/sessions`, ADMIN);
    const onB = await person(B.gatewayUrl, s.body.token);
    await onB.ready();
    // The session ends in the database, and node A's outbox says so to every node (D47:
    // PeopleRecorder.sessionsChanged publishes {k:'user'}); the same signal is sent here as node A
    // sends it, since this branch has no route that ends a session yet.
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`delete from ${cluster.schema}.user_sessions where user_id = $1`, [
      world().human.id,
    ]);
    await c.end();
    const r = new Redis(REDIS_URL);
    await r.publish(
      `${cluster.prefix}parley:signals`,
      JSON.stringify({ o: 'test', s: { k: 'user', userId: world().human.id } }),
    );
    r.disconnect();
    // every node re-checks its people's sessions periodically; Redis carries the signal sooner
    expect((await onB.closed).code).toBe(4004);
  }, 30_000);
});
