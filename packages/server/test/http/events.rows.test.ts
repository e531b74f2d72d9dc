import { sql } from 'kysely';
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

// Issue 15, "row writes per message with N recipient bots connected: ≤ 4, independent of N".
// SQLite counts every row an INSERT, UPDATE or DELETE changes on its connection
// (total_changes()); the server has one connection, so the difference over one send is exactly
// the rows that send wrote. On PostgreSQL the same code path runs (one event_log row per event);
// what is checked there is that no table grows per recipient.
dbDescribe('row writes per message (issue 15)', () => {
  let live: LiveServer;
  let w: World;
  const N = 50;
  let bots: Array<{ token: string }> = [];

  beforeAll(async () => {
    live = await startLiveServer();
    w = await makeWorld(live.h);
    bots = [w.bot];
    for (let i = 1; i < N; i++) {
      // D49: an account owns at most 3 bots; each bot gets an owner of its own.
      const owner = await makeUser(live.h, `owner${i}`);
      const b = await makeBot(live.h, owner.id, `b${i}`);
      await join(live.h, w.guildId, b.userId);
      bots.push(b);
    }
  });
  afterAll(async () => live.close());

  const db = () => live.h.services.domain.db;
  const changes = async () =>
    Number((await sql<{ n: number }>`select total_changes() as n`.execute(db())).rows[0]?.n);
  const counts = async () => {
    const out: Record<string, number> = {};
    for (const t of [
      'messages',
      'event_log',
      'recipient_sets',
      'gateway_sessions',
      'gateway_claims',
    ] as const)
      out[t] = Number(
        (
          await db()
            .selectFrom(t)
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    return out;
  };

  /** rows written by one send (SQLite), or the growth of each table (both) */
  const oneSend = async (content: string) => {
    const c0 = live.h.services.domain.dialect === 'sqlite' ? await changes() : 0;
    const t0 = await counts();
    await expectStatus(
      await live.h.as(w.human.token).post(`/channels/${w.channelId}/messages`, { content }),
      200,
    );
    const c1 = live.h.services.domain.dialect === 'sqlite' ? await changes() : 0;
    const t1 = await counts();
    const growth = Object.fromEntries(Object.keys(t0).map((k) => [k, (t1[k] ?? 0) - (t0[k] ?? 0)]));
    return { rows: c1 - c0, growth };
  };

  it(`the same rows with 0 and ${N} recipient bots connected, at most 4`, async () => {
    await oneSend('warm-up'); // first-use rows (daily quota row) out of the way
    const idle = await oneSend('nobody connected');
    live.clock.advance(1000);
    const conns: GatewayClient[] = [];
    for (const b of bots) {
      const c = await live.connect(b.token);
      await c.ready();
      conns.push(c);
    }
    // The connections' own rows (a session and a claim each) may still be landing after READY on a
    // loaded machine: measure the send only once they have settled.
    for (let last = '', i = 0; i < 100; i++) {
      const now = JSON.stringify(await counts());
      if (now === last) break;
      last = now;
      await new Promise((r) => setTimeout(r, 100));
    }
    const busy = await oneSend(`${N} connected`);
    for (const c of conns)
      expect((await c.dispatch('MESSAGE_CREATE')).d.content).toBe(`${N} connected`);
    const frameBytes = Buffer.byteLength(conns[0]?.raw.at(-1) ?? '');
    await Promise.all(conns.map((c) => c.close()));
    // One message row and one event row, whoever is listening (the channel's recipient set was
    // written by the warm-up send, once).
    expect(idle.growth).toEqual({
      messages: 1,
      event_log: 1,
      recipient_sets: 0,
      gateway_sessions: 0,
      gateway_claims: 0,
    });
    expect(busy.growth).toEqual(idle.growth);
    if (live.h.services.domain.dialect === 'sqlite') {
      expect(busy.rows).toBe(idle.rows);
      expect(busy.rows).toBeLessThanOrEqual(4);
      console.log(
        `row writes per message: ${idle.rows} (0 connected), ${busy.rows} (${N} connected); ` +
          `MESSAGE_CREATE frame ${frameBytes} bytes`,
      );
    }
  });
});
