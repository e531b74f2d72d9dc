import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Principal } from '../../src/domain/auth/principal.js';
import type { Domain } from '../../src/domain/context.js';
import { guildMessages } from '../../src/domain/messages/messages.service.js';
import { removeMember } from '../../src/domain/members/members.service.js';
import { pruneEvents } from '../../src/events/pruner.js';
import { webhookBody } from '../../src/events/serialize.js';
import {
  dbDescribe,
  expectStatus,
  join,
  makeBot,
  makeUser,
  makeWorld,
  type World,
} from '../helpers/harness.js';
import { startLiveServer, type LiveServer } from '../helpers/live-server.js';

// Issue 5, acceptance 7 and the outbox's guarantees (D36, ARCHITECTURE habit 3): an event leaves
// only with the transaction that caused it, each bot's stream is gapless under concurrent
// writers, the webhook body and the gateway's d are one serialization, and pruning is safe.
dbDescribe('events outbox (D36)', () => {
  let live: LiveServer;
  let w: World;
  let d: Domain;
  let human: Principal;

  beforeAll(async () => {
    live = await startLiveServer();
    w = await makeWorld(live.h);
    d = live.h.services.domain;
    human = { userId: w.human.id, name: 'human', isBot: false, botId: undefined };
  });
  afterAll(async () => live.close());

  const ready = async (token: string) => {
    live.clock.advance(1000);
    const c = await live.connect(token);
    await c.ready();
    return c;
  };

  /** The domain with a recorder that records, then makes the transaction fail. */
  const failingAfterWrite = (): Domain => ({
    ...d,
    events: {
      record: async (trx, event) => {
        await d.events.record(trx, event);
        throw new Error('forced failure after the write');
      },
      botTokenReset: (trx, botId) => d.events.botTokenReset(trx, botId),
    },
  });

  it('no event is dispatched for a transaction that rolled back', async () => {
    const c = await ready(w.bot.token);
    await expect(
      guildMessages.send(failingAfterWrite(), human, w.channelId, { content: 'ghost' }),
    ).rejects.toThrow('forced failure');
    await expect(removeMember(failingAfterWrite(), w.guildId, w.bot.userId)).rejects.toThrow(
      'forced failure',
    );
    // Neither change happened …
    const list = await live.h.as(w.human.token).get(`/channels/${w.channelId}/messages`);
    expect(list.body.messages.map((m: { content: string }) => m.content)).not.toContain('ghost');
    expect(
      (await live.h.as(w.bot.token).get(`/guilds/${w.guildId}/members/${w.bot.userId}`)).status,
    ).toBe(200);
    // … and the next dispatch is the next committed event, at the very next s (no hole either).
    const real = await expectStatus(
      await live.h.as(w.human.token).post(`/channels/${w.channelId}/messages`, { content: 'real' }),
      200,
    );
    const f = await c.dispatch('MESSAGE_CREATE');
    expect([f.s, f.d.id]).toEqual([2, real.body.id]);
    await c.close();
  });

  it('concurrent writers: every bot gets every event once, s gapless 2…51, each bot its own stream', async () => {
    const other = await makeBot(live.h, (await makeUser(live.h, 'o2')).id, 'second');
    await join(live.h, w.guildId, other.userId);
    const a = await ready(w.bot.token);
    const b = await ready(other.token);
    const ids = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const r = await live.h
          .as(w.human.token)
          .post(`/channels/${w.channelId}/messages`, { content: `c${i}` });
        return r.body.id as number;
      }),
    );
    for (const c of [a, b]) {
      const got: number[] = [];
      for (let i = 0; i < 50; i++) {
        const f = await c.dispatch('MESSAGE_CREATE');
        expect(f.s).toBe(2 + i);
        got.push(f.d.id);
      }
      expect([...got].sort()).toEqual([...ids].sort());
    }
    await Promise.all([a.close(), b.close()]);
  });

  it('one serialization: the webhook body is {type, data} with data exactly the dispatch d', async () => {
    const c = await ready(w.bot.token);
    await live.h.as(w.human.token).post(`/channels/${w.channelId}/messages`, { content: 'same' });
    const f = await c.dispatch('MESSAGE_CREATE');
    const row = await d.db
      .selectFrom('event_log')
      .select(['type', 'data'])
      .orderBy('xid', 'desc')
      .orderBy('pos', 'desc')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(webhookBody(row.type, row.data))).toStrictEqual({
      type: 'MESSAGE_CREATE',
      data: f.d,
    });
    // The dispatch frame carries the stored text byte for byte.
    expect(c.raw.at(-1)).toContain(`"d":${row.data}}`);
    await c.close();
  });

  it('an event committed where no commit hook can see it (another process) still arrives', async () => {
    const c = await ready(w.bot.token);
    // A transaction outside the tracked handle: only the dispatcher's database check finds it.
    const untracked = d.db.withoutPlugins();
    const started = Date.now();
    await untracked.transaction().execute(async (trx) => {
      await d.events.record(trx, {
        envelope: {
          type: 'MESSAGE_DELETE',
          data: { id: 1, channelId: w.channelId, guildId: w.guildId },
        },
        scope: { kind: 'channel', guildId: w.guildId, channelId: w.channelId },
      });
    });
    const f = await c.dispatch('MESSAGE_DELETE');
    expect(f.d).toStrictEqual({ id: 1, channelId: w.channelId, guildId: w.guildId });
    expect(Date.now() - started).toBeLessThan(1000);
    await c.close();
  });

  it('pruning: log rows older than twice the resume window go; a resume needing them gets op 9', async () => {
    live.clock.advance(1000);
    const c = await live.connect(w.bot.token);
    const { sessionId } = await c.ready();
    await live.h.as(w.human.token).post(`/channels/${w.channelId}/messages`, { content: 'old' });
    await c.dispatch('MESSAGE_CREATE');
    live.clock.advance(601_000); // past 2 × 300 s
    await pruneEvents(d.db, d.clock.now(), 300_000);
    const left = await d.db
      .selectFrom('event_log')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('created_at', '<', d.clock.now() - 600_000)
      .executeTakeFirstOrThrow();
    expect(Number(left.n)).toBe(0);
    c.terminate();
    await live.sessionSettled(sessionId);
    live.clock.advance(1000);
    // The client had processed only READY: the message it needs is gone → op 9, fresh READY.
    const r = await live.connect(w.bot.token, { query: `sessionId=${sessionId}&seq=1` });
    await r.next();
    expect(await r.next()).toStrictEqual({ op: 9, d: false });
    await r.dispatch('READY');
    await r.close();
  });
  it('issue 15: one log row per event whatever its recipients; a session starts at READY (D31)', async () => {
    const other = await makeBot(live.h, w.human.id, 'late');
    await join(live.h, w.guildId, other.userId);
    const count = async (botId?: number) =>
      Number(
        (
          await d.db
            .selectFrom('event_log')
            .select((eb) => eb.fn.countAll<number | string>().as('n'))
            .$if(botId !== undefined, (q) =>
              q.where('recipients', 'in', (eb) =>
                eb.selectFrom('recipient_sets').select('id').where('bots', 'like', `%,${botId},%`),
              ),
            )
            .executeTakeFirstOrThrow()
        ).n,
      );
    const entries = () => count(other.id);
    const say = async (content: string): Promise<number> =>
      (
        await expectStatus(
          await live.h.as(w.human.token).post(`/channels/${w.channelId}/messages`, { content }),
          200,
        )
      ).body.id;
    // Never connected: the row of its own GUILD_MEMBER_ADD names it all the same, and each
    // message is one row for every recipient together — nothing is written per bot.
    const joined = await entries();
    expect(joined).toBe(1);
    const total = await count();
    await say('before any session');
    expect(await entries()).toBe(joined + 1);
    expect(await count()).toBe(total + 1);
    live.clock.advance(1000);
    const c = await live.connect(other.token);
    const { sessionId } = await c.ready();
    const m = await say('after READY');
    const f = await c.dispatch('MESSAGE_CREATE');
    expect([f.s, f.d.id]).toEqual([2, m]); // the first dispatch after READY (s 1)
    // Dropped: resumable for the window, so what is sent meanwhile is kept and replayed.
    c.terminate();
    await live.sessionSettled(sessionId);
    const missed = await say('while away');
    live.clock.advance(1000);
    const r = await live.connect(other.token, { query: `sessionId=${sessionId}&seq=2` });
    await r.next(); // HELLO
    expect((await r.dispatch('MESSAGE_CREATE')).d.id).toBe(missed);
    await r.dispatch('RESUMED');
    r.terminate();
    await live.sessionSettled(sessionId);
    // Past the window the session cannot be resumed.
    live.clock.advance(301_000);
    await say('after the window');
    const again = await live.connect(other.token, { query: `sessionId=${sessionId}&seq=4` });
    await again.next(); // HELLO
    expect(await again.next()).toStrictEqual({ op: 9, d: false });
    await again.dispatch('READY');
    await again.close();
  });
});
