import { afterAll, beforeAll, expect, it } from 'vitest';
import { decodeMarks, MarkKind } from '../../src/gateway/session-marks.js';
import {
  dbDescribe,
  expectStatus,
  join,
  makeBot,
  makeWorld,
  type World,
} from '../helpers/harness.js';
import { startLiveServer, type GatewayClient, type LiveServer } from '../helpers/live-server.js';

// Issue 15: a session's `s` is derived from the shared event log and the session's marks
// (READY, RESUMED, and checkpoints written at client heartbeats). Resumes from before a
// checkpoint, from after it, and across an earlier RESUMED must all give every dispatch its
// original `s` (D31), with the earlier RESUMED's number skipped, not replayed.
dbDescribe('gateway checkpoints (issue 15, D31)', () => {
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
    ).body.id;

  const marksOf = async (sessionId: string) =>
    decodeMarks(
      (
        await live.h.services.domain.db
          .selectFrom('gateway_sessions')
          .select('marks')
          .where('id', '=', sessionId)
          .executeTakeFirstOrThrow()
      ).marks,
    );

  const until = async (check: () => Promise<boolean>): Promise<void> => {
    const deadline = Date.now() + 5000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error('condition not met within 5 s');
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  /** n messages; the client receives them; returns [s, id] of each */
  const exchange = async (c: GatewayClient, n: number, tag: string) => {
    const ids: number[] = [];
    for (let i = 0; i < n; i++) ids.push(await say(`${tag}${i}`));
    const got: Array<[number, number]> = [];
    for (let i = 0; i < n; i++) {
      const f = await c.dispatch('MESSAGE_CREATE');
      got.push([f.s ?? -1, f.d.id]);
    }
    expect(got.map(([, id]) => id)).toEqual(ids);
    return got;
  };

  const drop = async (c: GatewayClient, sessionId: string) => {
    c.terminate();
    await live.sessionSettled(sessionId);
    live.clock.advance(1000);
  };

  it('resumes before a checkpoint, after it, and across an earlier RESUMED with original s', async () => {
    live.clock.advance(1000);
    const c = await live.connect(w.bot.token, { heartbeat: false });
    const { sessionId } = await c.ready();
    const first = await exchange(c, 5, 'a'); // s 2…6
    expect(first.map(([s]) => s)).toEqual([2, 3, 4, 5, 6]);
    // A heartbeat checkpoints the session: "after s 6, the log up to here is accounted for".
    c.send({ op: 1, d: 6 });
    await until(async () => (await marksOf(sessionId)).some((m) => m.k === MarkKind.CHECKPOINT));
    const ckpt = (await marksOf(sessionId)).find((m) => m.k === MarkKind.CHECKPOINT);
    expect(ckpt?.s).toBe(6);
    const second = await exchange(c, 5, 'b'); // s 7…11
    expect(second.map(([s]) => s)).toEqual([7, 8, 9, 10, 11]);
    await drop(c, sessionId);

    // From before the checkpoint: counted from READY, through the checkpoint.
    const all = [...first, ...second];
    const r1 = await live.connect(w.bot.token, { query: `sessionId=${sessionId}&seq=3` });
    await r1.next(); // HELLO
    for (const [s, id] of all.slice(2)) {
      const f = await r1.dispatch('MESSAGE_CREATE');
      expect([f.s, f.d.id]).toEqual([s, id]);
    }
    const resumed1 = await r1.dispatch('RESUMED');
    expect([resumed1.s, resumed1.d.replayed]).toEqual([12, 8]);
    const third = await exchange(r1, 2, 'c'); // s 13, 14
    expect(third.map(([s]) => s)).toEqual([13, 14]);
    await drop(r1, sessionId);

    // From after the checkpoint and before the RESUMED (s 12): s 12 is skipped, not replayed.
    const r2 = await live.connect(w.bot.token, { query: `sessionId=${sessionId}&seq=9` });
    await r2.next();
    for (const [s, id] of [...all.slice(8), ...third]) {
      const f = await r2.dispatch('MESSAGE_CREATE');
      expect([f.s, f.d.id]).toEqual([s, id]);
    }
    const resumed2 = await r2.dispatch('RESUMED');
    expect([resumed2.s, resumed2.d.replayed]).toEqual([15, 4]);
    await drop(r2, sessionId);

    // Exactly at a RESUMED: nothing before it again; and a seq never reached gets op 9.
    const r3 = await live.connect(w.bot.token, { query: `sessionId=${sessionId}&seq=15` });
    await r3.next();
    expect((await r3.dispatch('RESUMED')).s).toBe(16);
    const m = await say('live');
    const f = await r3.dispatch('MESSAGE_CREATE');
    expect([f.s, f.d.id]).toEqual([17, m]);
    await drop(r3, sessionId);
    const r4 = await live.connect(w.bot.token, { query: `sessionId=${sessionId}&seq=40` });
    await r4.next();
    expect(await r4.next()).toStrictEqual({ op: 9, d: false });
    await r4.dispatch('READY');
    await r4.close();
  });

  it('a quiet session still checkpoints as the log moves, so pruning never strands it', async () => {
    live.clock.advance(1000);
    const c = await live.connect(w.bot.token, { heartbeat: false });
    const { sessionId } = await c.ready();
    const [ready] = await marksOf(sessionId);
    // Another guild's event (for another bot) moves the log, not this session's s.
    const otherBot = await makeBot(live.h, w.owner.id, 'elsewhere');
    const g = await expectStatus(
      await live.h.admin.post('/guilds', { name: 'Elsewhere', ownerId: w.owner.id }),
      201,
    );
    await join(live.h, g.body.id, otherBot.userId);
    // The feed reads the log after the commit (on PostgreSQL, once the horizon passes it) and
    // nothing reaches this client to say when: it heartbeats as clients do (here every 100 ms)
    // until a heartbeat finds the log moved and checkpoints.
    let checks = 0;
    await until(async () => {
      if (checks++ % 5 === 0) c.send({ op: 1, d: 1 });
      return (await marksOf(sessionId)).length > 1;
    });
    const marks = await marksOf(sessionId);
    const last = marks[marks.length - 1];
    expect(last?.k).toBe(MarkKind.CHECKPOINT);
    expect(last?.s).toBe(1);
    expect(ready && last && (last.xid > ready.xid || last.pos > ready.pos)).toBe(true);
    await c.close();
  });
});
