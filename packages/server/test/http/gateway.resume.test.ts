import { afterAll, beforeAll, expect, it } from 'vitest';
import { dbDescribe, expectStatus, makeWorld, type World } from '../helpers/harness.js';
import { startLiveServer, type GatewayClient, type LiveServer } from '../helpers/live-server.js';

// Issue 5, acceptance 3 (D31): a dropped session resumes with ?sessionId&seq — every dispatch
// after seq, in order, with its original s, then RESUMED, then live events; a resume that cannot
// be served gets op 9 and a fresh READY. D28's one-second rule is stepped over with the clock.
dbDescribe('gateway resume (D31)', () => {
  let live: LiveServer;
  let w: World;

  beforeAll(async () => {
    live = await startLiveServer();
    w = await makeWorld(live.h);
  });
  afterAll(async () => live.close());

  const say = async (content: string): Promise<number> =>
    (
      await expectStatus(
        await live.h.as(w.human.token).post(`/channels/${w.channelId}/messages`, { content }),
        200,
      )
    ).body.id as number;

  /** D28: the next attempt of the same bot must come at least 1 s later. */
  const later = (): void => live.clock.advance(1000);

  const connectFresh = async (): Promise<{ c: GatewayClient; sessionId: string }> => {
    later();
    const c = await live.connect(w.bot.token);
    const { sessionId } = await c.ready();
    return { c, sessionId };
  };

  it('disconnect, 50 messages, resume with the last seq: exactly those 50 in order, original s, RESUMED, live', async () => {
    const { c, sessionId } = await connectFresh();
    const first = await say('before');
    const f = await c.dispatch('MESSAGE_CREATE');
    expect(f.d.id).toBe(first);
    expect(f.s).toBe(2);
    c.terminate(); // a dropped TCP connection leaves the session resumable (D31)
    await c.closed;

    const ids: number[] = [];
    for (let i = 0; i < 50; i++) ids.push(await say(`missed ${i}`));

    later();
    const r = await live.connect(w.bot.token, { query: `sessionId=${sessionId}&seq=2` });
    expect((await r.next()).op).toBe(10);
    for (let i = 0; i < 50; i++) {
      const m = await r.dispatch('MESSAGE_CREATE');
      expect(m.s).toBe(3 + i);
      expect(m.d.id).toBe(ids[i]);
      expect(m.d.content).toBe(`missed ${i}`);
    }
    const resumed = await r.dispatch('RESUMED');
    expect(resumed.s).toBe(53);
    expect(resumed.d).toStrictEqual({ sessionId, replayed: 50 });
    const after = await say('live again');
    const l = await r.dispatch('MESSAGE_CREATE');
    expect(l.d.id).toBe(after);
    expect(l.s).toBe(54);
    await r.close();
  });

  it('replayed dispatches are the very frames first sent (same s, same d)', async () => {
    const { c, sessionId } = await connectFresh();
    for (let i = 0; i < 3; i++) {
      await say(`seen ${i}`);
      await c.dispatch('MESSAGE_CREATE');
    }
    c.terminate();
    await c.closed;
    const missed = await say('unseen');

    later();
    const r = await live.connect(w.bot.token, { query: `sessionId=${sessionId}&seq=1` });
    await r.next(); // HELLO
    for (let i = 0; i < 4; i++) await r.dispatch('MESSAGE_CREATE');
    const resumed = await r.dispatch('RESUMED');
    expect(resumed.s).toBe(6);
    const dispatches = (frames: string[]) => frames.filter((f) => f.includes('MESSAGE_CREATE'));
    // The frames the client had processed nothing of (seq=1): byte for byte what it got before.
    expect(dispatches(r.raw).slice(0, 3)).toEqual(dispatches(c.raw));
    expect(dispatches(c.raw)).toHaveLength(3);
    expect(JSON.parse(dispatches(r.raw)[3] ?? '{}')).toMatchObject({ s: 5, d: { id: missed } });
    await r.close();
  });

  it('unknown session: op 9 {d:false}, then a fresh READY (s 1, a new session id)', async () => {
    later();
    const r = await live.connect(w.bot.token, { query: 'sessionId=nope&seq=3' });
    expect(await r.next()).toStrictEqual({ op: 10, d: { heartbeatInterval: 30_000 } });
    expect(await r.next()).toStrictEqual({ op: 9, d: false });
    const ready = await r.dispatch('READY');
    expect(ready.s).toBe(1);
    expect(ready.d.sessionId).not.toBe('nope');
    const id = await say('fresh session');
    const m = await r.dispatch('MESSAGE_CREATE');
    expect([m.s, m.d.id]).toEqual([2, id]);
    await r.close();
  });

  it('op 9 for a seq the session never reached, a malformed seq, and a session ended by close 1000', async () => {
    const { c, sessionId } = await connectFresh();
    c.terminate();
    await c.closed;
    for (const query of [`sessionId=${sessionId}&seq=99`, `sessionId=${sessionId}&seq=x`]) {
      later();
      const r = await live.connect(w.bot.token, { query });
      await r.next();
      expect(await r.next()).toStrictEqual({ op: 9, d: false });
      const ready = await r.dispatch('READY');
      // D31: closing with 1000 ends the session: not resumable any more.
      expect(await r.close(1000)).toMatchObject({ code: 1000 });
      expect(await live.sessionSettled(ready.d.sessionId as string)).toEqual({ ended: true });
      later();
      const again = await live.connect(w.bot.token, {
        query: `sessionId=${ready.d.sessionId as string}&seq=1`,
      });
      await again.next();
      expect(await again.next()).toStrictEqual({ op: 9, d: false });
      await again.dispatch('READY');
      await again.close();
    }
  });

  it('a session past its resume window gets op 9', async () => {
    const { c, sessionId } = await connectFresh();
    await c.close(4000); // any close but 1000/1001 keeps the session resumable (D31) …
    expect(await live.sessionSettled(sessionId)).toEqual({ ended: false });
    live.clock.advance(301_000); // … for 300 s (resumeWindowS)
    const r = await live.connect(w.bot.token, { query: `sessionId=${sessionId}&seq=1` });
    await r.next();
    expect(await r.next()).toStrictEqual({ op: 9, d: false });
    await r.dispatch('READY');
    await r.close();
  });

  it('D29: a new connection replaces the old one (4010), and the replaced session cannot be resumed', async () => {
    const { c: old, sessionId } = await connectFresh();
    const { c: now } = await connectFresh();
    expect(await old.closed).toMatchObject({ code: 4010 });
    const id = await say('to the newest');
    expect((await now.dispatch('MESSAGE_CREATE')).d.id).toBe(id);
    await now.close(1000);
    later();
    const r = await live.connect(w.bot.token, { query: `sessionId=${sessionId}&seq=1` });
    await r.next();
    expect(await r.next()).toStrictEqual({ op: 9, d: false });
    await r.close();
  });

  it('resuming a session whose connection is still open takes it over (the old one gets 4010)', async () => {
    const { c, sessionId } = await connectFresh();
    const id = await say('seen by the first');
    const f = await c.dispatch('MESSAGE_CREATE');
    later();
    const r = await live.connect(w.bot.token, { query: `sessionId=${sessionId}&seq=${f.s}` });
    await r.next();
    const resumed = await r.dispatch('RESUMED');
    expect(resumed.d).toStrictEqual({ sessionId, replayed: 0 });
    expect(resumed.s).toBe((f.s ?? 0) + 1);
    expect(await c.closed).toMatchObject({ code: 4010 });
    expect(f.d.id).toBe(id);
    const next = await say('after takeover');
    const m = await r.dispatch('MESSAGE_CREATE');
    expect([m.s, m.d.id]).toEqual([(resumed.s ?? 0) + 1, next]);
    await r.close();
  });
});
