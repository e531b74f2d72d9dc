import { expect, it } from 'vitest';
import { clusterDescribe, twoNodes } from '../helpers/cluster.js';
import { connectPatiently } from '../helpers/live-server.js';
import { call } from '../helpers/process.js';

// Issue 5, acceptance 6 (D29, D31, D34): two server processes on one PostgreSQL (a fresh schema)
// and one Redis. A bot connected to node B receives what is committed on node A; connecting to
// one node closes the connection on the other with 4010; a session started on A resumes on B; a
// token reset on A closes the connection on B with 4004.
const ADMIN = 'cluster-gw-admin-token-0123456789';
clusterDescribe('gateway across two nodes (PostgreSQL + Redis)', () => {
  const cluster = twoNodes('gw', ADMIN);
  const nodes = cluster.nodes;
  const world = cluster.world;
  const send = async (origin: string, content: string): Promise<number> => {
    const r = await call(
      origin,
      'POST',
      `/api/v1/channels/${world().channelId}/messages`,
      world().human.token,
      {
        content,
      },
    );
    expect(r.status).toBe(200);
    return r.body.id as number;
  };

  it('a bot connected to node B receives events committed on node A, in order', async () => {
    const { A, B } = nodes();
    const c = await connectPatiently(B.gatewayUrl, world().bot.token);
    await c.ready();
    const ids: number[] = [];
    for (let i = 0; i < 10; i++) ids.push(await send(A.origin, `from A ${i}`));
    for (let i = 0; i < 10; i++) {
      const f = await c.dispatch('MESSAGE_CREATE');
      expect([f.s, f.d.id]).toEqual([2 + i, ids[i]]);
    }
    await c.close();
  });

  it('D29: connecting to B while connected to A closes the A connection with 4010', async () => {
    const { A, B } = nodes();
    const onA = await connectPatiently(A.gatewayUrl, world().bot.token);
    await onA.ready();
    const onB = await connectPatiently(B.gatewayUrl, world().bot.token);
    await onB.ready();
    expect(await onA.closed).toMatchObject({ code: 4010 });
    const id = await send(A.origin, 'only B hears this');
    expect((await onB.dispatch('MESSAGE_CREATE')).d.id).toBe(id);
    await onB.close();
  });

  it('D31: a session started on A resumes on B with everything committed meanwhile', async () => {
    const { A, B } = nodes();
    const onA = await connectPatiently(A.gatewayUrl, world().bot.token);
    const { sessionId } = await onA.ready();
    onA.terminate();
    await onA.closed;
    const ids = [await send(A.origin, 'missed 1'), await send(B.origin, 'missed 2')];
    const onB = await connectPatiently(B.gatewayUrl, world().bot.token, {
      query: `sessionId=${sessionId}&seq=1`,
    });
    await onB.next(); // HELLO
    expect((await onB.dispatch('MESSAGE_CREATE')).d.id).toBe(ids[0]);
    expect((await onB.dispatch('MESSAGE_CREATE')).d.id).toBe(ids[1]);
    expect((await onB.dispatch('RESUMED')).s).toBe(4);
    await onB.close();
  });

  it('D8: a token reset through node A closes the connection on node B with 4004', async () => {
    const { A, B } = nodes();
    const onB = await connectPatiently(B.gatewayUrl, world().bot.token);
    await onB.ready();
    const started = Date.now();
    const reset = await call(A.origin, 'POST', `/admin/v1/bots/${world().bot.id}/token`, ADMIN);
    expect(reset.status).toBe(200);
    expect(await onB.closed).toMatchObject({ code: 4004 });
    expect(Date.now() - started).toBeLessThan(1000);
    world().bot.token = reset.body.token as string;
  });
});
