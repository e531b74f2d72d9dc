import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Signal } from '../../src/events/bus.js';
import { createSession, newConnId } from '../../src/gateway/session-store.js';
import {
  createHarness,
  expectStatus,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';
import { dbDescribe } from '../helpers/harness.js';
import { dropPrefix, redisAvailable, redisUrlWithPrefix, uniquePrefix } from '../helpers/redis.js';

// The Redis transport between nodes (ARCHITECTURE: event notification in-process | Redis): what
// one node commits or claims reaches the other node's dispatcher and gateway through Redis, not
// only through the periodic database check. Two harnesses (two "nodes") share one Redis prefix.
const redisOk = await redisAvailable();

dbDescribe('events between nodes over Redis', () => {
  const prefix = uniquePrefix();
  let a: Harness;
  let b: Harness;
  let w: World;

  beforeAll(async () => {
    if (!redisOk) return;
    const env = { PARLEY_REDIS_URL: redisUrlWithPrefix(prefix) };
    a = await createHarness({ env: { ...env, PARLEY_NODE_ID: '1' } });
    b = await createHarness({ env: { ...env, PARLEY_NODE_ID: '2' } });
    w = await makeWorld(a);
  });
  afterAll(async () => {
    if (!redisOk) return;
    await Promise.all([a.close(), b.close()]);
    await dropPrefix(prefix);
  });

  it.skipIf(!redisOk)(
    'a commit on node A wakes node B with the bot and its new stream head',
    async () => {
      const heads: Array<[number, number]> = [];
      let wake = (): void => {};
      b.services.events.dispatcher.onHead((botId, seq) => {
        heads.push([botId, seq]);
        wake();
      });
      // The bot holds a gateway session (only then is it owed stream entries on SQLite).
      await createSession(a.services.domain.db, {
        botId: w.bot.id,
        botUserId: w.bot.userId,
        connId: newConnId(),
        nodeId: 1,
        now: Date.now(),
      });
      await expectStatus(
        await a.as(w.human.token).post(`/channels/${w.channelId}/messages`, { content: 'hi' }),
        200,
      );
      const head = await a.services.domain.db
        .selectFrom('event_streams')
        .select('seq')
        .where('bot_id', '=', w.bot.id)
        .executeTakeFirstOrThrow();
      // Earlier commits (the world's joins) may still be announcing themselves: wait for this one.
      const has = () => heads.some(([bot, seq]) => bot === w.bot.id && seq === head.seq);
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`not heard: ${JSON.stringify(heads)}`)), 5000);
        wake = () => {
          if (!has()) return;
          clearTimeout(t);
          resolve();
        };
        wake();
      });
    },
  );

  it.skipIf(!redisOk)(
    'claim and token signals published on A reach B; B ignores nothing of its own',
    async () => {
      const got: Signal[] = [];
      const both = new Promise<void>((resolve) => {
        b.services.events.onSignal((s) => {
          got.push(s);
          if (got.length === 2) resolve();
        });
      });
      a.services.events.publish({ k: 'claim', botId: 7, seq: 3 });
      a.services.events.publish({ k: 'token', botId: 7 });
      await both;
      expect(got).toEqual([
        { k: 'claim', botId: 7, seq: 3 },
        { k: 'token', botId: 7 },
      ]);
    },
  );
});
