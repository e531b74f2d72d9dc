import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import type { Signal } from '../../src/events/bus.js';
import {
  createHarness,
  expectStatus,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';
import { dbDescribe } from '../helpers/harness.js';
import { dropPrefix, redisAvailable, redisUrlWithPrefix, uniquePrefix } from '../helpers/redis.js';

// The Redis transport between nodes (docs/architecture.md: event notification in-process | Redis): what
// one node commits or claims reaches the other node's event feed and gateway through Redis, not
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
    "a commit on node A wakes node B's feed at once (it then reads the shared log)",
    async () => {
      // (Each harness has its own database here, so B's read finds nothing: what is checked is
      // the signal. The cluster tests check delivery between nodes sharing one database.)
      const feed = b.services.events.feed;
      let heard = (): void => {};
      // Only signals call wake() on B: its timer reads the log without it, and B commits nothing.
      const woken = vi.spyOn(feed, 'wake').mockImplementation(() => heard());
      try {
        const wokenNow = new Promise<void>((resolve, reject) => {
          const t = setTimeout(() => reject(new Error('node B was not woken')), 5000);
          heard = () => {
            clearTimeout(t);
            resolve();
          };
        });
        await expectStatus(
          await a.as(w.human.token).post(`/channels/${w.channelId}/messages`, { content: 'hi' }),
          200,
        );
        await wokenNow;
        expect(woken).toHaveBeenCalled();
      } finally {
        woken.mockRestore();
      }
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
