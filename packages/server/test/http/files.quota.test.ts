import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptUpload } from '../../src/domain/files/files.service.js';
import type { BlobWriter } from '../../src/files/blob-store.js';
import {
  createHarness,
  dbDescribe,
  expectStatus,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';
import {
  blobFiles,
  fileForm,
  freshDataDir,
  pngOfSize,
  stagedFiles,
  upload,
} from '../helpers/media.js';

// Issue 4, acceptance 3: the D24 quota — counters, limits, resets, resetAt, message bonus,
// atomic reservation under concurrent uploads. A fake clock moves through days and months.
const at = (iso: string) => Date.parse(iso);

function fakeClock(start: string) {
  let now = at(start);
  return {
    clock: { now: () => now },
    set: (iso: string) => {
      const t = at(iso);
      if (t < now) throw new Error('the fake clock only moves forward (ids are time-ordered)');
      now = t;
    },
  };
}

dbDescribe('upload quota (D24)', () => {
  describe('defaults', () => {
    let h: Harness;
    let w: World;
    const data = freshDataDir();
    beforeAll(async () => {
      h = await createHarness({ env: { PARLEY_DATA_DIR: data.dir } });
      w = await makeWorld(h);
    });
    afterAll(async () => {
      await h.close();
      data.remove();
    });

    it('starts at the D24 figures; dailyUsed and monthlyUsed grow by the file size; each message adds 10 MiB', async () => {
      const q0 = await h.as(w.bot.token).get('/files/quota');
      expect(q0.status).toBe(200);
      expect(q0.body).toEqual({
        dailyUsed: 0,
        dailyLimit: 85_899_345_920,
        monthlyUsed: 0,
        monthlyLimit: 2_147_483_648_000,
      });
      const file = pngOfSize(12_345);
      expect((await upload(h, w.bot.token, fileForm('a.png', file))).status).toBe(200);
      const q1 = (await h.as(w.bot.token).get('/files/quota')).body;
      expect(q1).toEqual({ ...q0.body, dailyUsed: 12_345, monthlyUsed: 12_345 });

      // Guild and DM messages both count.
      await expectStatus(
        await h.as(w.bot.token).post(`/channels/${w.channelId}/messages`, { content: 'one' }),
        200,
      );
      const dm = await h.as(w.bot.token).post(`/users/${w.human.id}/dm`);
      await expectStatus(
        await h
          .as(w.bot.token)
          .post(`/dm/channels/${dm.body.channelId}/messages`, { content: 'two' }),
        200,
      );
      const q2 = (await h.as(w.bot.token).get('/files/quota')).body;
      expect(q2.dailyLimit).toBe(85_899_345_920 + 2 * 10_485_760);
      // Someone else's messages do not raise the bot's limit.
      await h.as(w.human.token).post(`/channels/${w.channelId}/messages`, { content: 'me' });
      expect((await h.as(w.bot.token).get('/files/quota')).body.dailyLimit).toBe(q2.dailyLimit);
    });

    it('sends of several authors committed together each count for their own author (issue 29: one row per author)', async () => {
      const limit = async (token: string) =>
        (await h.as(token).get('/files/quota')).body.dailyLimit as number;
      const [bot0, human0] = [await limit(w.bot.token), await limit(w.human.token)];
      // Interleaved and concurrent: they arrive in one turn of the loop and share a group commit.
      const authors = [w.bot, w.human, w.bot, w.bot, w.human, w.bot, w.human, w.bot];
      const sent = await Promise.all(
        authors.map((a, i) =>
          h.as(a.token).post(`/channels/${w.channelId}/messages`, { content: `m${i}` }),
        ),
      );
      for (const r of sent) expect(r.status).toBe(200);
      expect(await limit(w.bot.token)).toBe(bot0 + 5 * 10_485_760);
      expect(await limit(w.human.token)).toBe(human0 + 3 * 10_485_760);
    });
  });

  describe('small limits and a fake clock', () => {
    let h: Harness;
    let w: World;
    const t = fakeClock('2026-03-15T22:00:00.000Z');
    const data = freshDataDir();
    const quota = async () => (await h.as(w.bot.token).get('/files/quota')).body;
    beforeAll(async () => {
      h = await createHarness({
        clock: t.clock,
        env: {
          PARLEY_DATA_DIR: data.dir,
          PARLEY_QUOTA_DAILY_BYTES: '1000',
          PARLEY_QUOTA_PER_MESSAGE_BYTES: '500',
          PARLEY_QUOTA_MONTHLY_BYTES: '2500',
        },
      });
      w = await makeWorld(h);
    });
    afterAll(async () => {
      await h.close();
      data.remove();
    });

    it('refuses past the daily limit with the next 00:00 UTC; reaching it exactly is allowed', async () => {
      expect(await quota()).toEqual({
        dailyUsed: 0,
        dailyLimit: 1000,
        monthlyUsed: 0,
        monthlyLimit: 2500,
      });
      expect((await upload(h, w.bot.token, fileForm('a.png', pngOfSize(600)))).status).toBe(200);
      const blobs = blobFiles(data.dir).length;
      const over = await upload(h, w.bot.token, fileForm('b.png', pngOfSize(401)));
      expect(over.status).toBe(429);
      expect(over.body).toEqual({
        error: {
          code: 'QUOTA_EXCEEDED',
          message: expect.any(String),
          resetAt: '2026-03-16T00:00:00.000Z',
        },
      });
      // Nothing stored, nothing charged.
      expect(blobFiles(data.dir).length).toBe(blobs);
      expect(stagedFiles(data.dir)).toEqual([]);
      expect((await quota()).dailyUsed).toBe(600);
      expect((await upload(h, w.bot.token, fileForm('c.png', pngOfSize(400)))).status).toBe(200);
      expect(await quota()).toMatchObject({ dailyUsed: 1000, dailyLimit: 1000, monthlyUsed: 1000 });
    });

    it('raises the daily limit by the per-message amount for each message sent today', async () => {
      await h.as(w.bot.token).post(`/channels/${w.channelId}/messages`, { content: 'x' });
      expect((await quota()).dailyLimit).toBe(1500);
      const dm = await h.as(w.bot.token).post(`/users/${w.human.id}/dm`);
      await h.as(w.bot.token).post(`/dm/channels/${dm.body.channelId}/messages`, { content: 'y' });
      expect((await quota()).dailyLimit).toBe(2000);
      expect((await upload(h, w.bot.token, fileForm('d.png', pngOfSize(1000)))).status).toBe(200);
      expect(await quota()).toEqual({
        dailyUsed: 2000,
        dailyLimit: 2000,
        monthlyUsed: 2000,
        monthlyLimit: 2500,
      });
    });

    it('names the monthly reset when the monthly limit is hit too', async () => {
      // 2000 + 501 passes both the daily (2000) and the monthly (2500) limit.
      const both = await upload(h, w.bot.token, fileForm('e.png', pngOfSize(501)));
      expect(both.status).toBe(429);
      expect(both.body.error.resetAt).toBe('2026-04-01T00:00:00.000Z');
    });

    it('resets the daily counters (and the message bonus) at 00:00 UTC, the monthly ones on the 1st', async () => {
      t.set('2026-03-16T00:00:00.000Z');
      expect(await quota()).toEqual({
        dailyUsed: 0,
        dailyLimit: 1000,
        monthlyUsed: 2000,
        monthlyLimit: 2500,
      });
      const monthly = await upload(h, w.bot.token, fileForm('f.png', pngOfSize(501)));
      expect(monthly.status).toBe(429);
      expect(monthly.body.error.resetAt).toBe('2026-04-01T00:00:00.000Z');
      expect((await upload(h, w.bot.token, fileForm('g.png', pngOfSize(500)))).status).toBe(200);
      expect((await quota()).monthlyUsed).toBe(2500);

      t.set('2026-03-31T23:59:59.999Z');
      const last = await upload(h, w.bot.token, fileForm('h.png', pngOfSize(100)));
      expect(last.status).toBe(429);
      expect(last.body.error.resetAt).toBe('2026-04-01T00:00:00.000Z');

      t.set('2026-04-01T00:00:00.000Z');
      expect(await quota()).toEqual({
        dailyUsed: 0,
        dailyLimit: 1000,
        monthlyUsed: 0,
        monthlyLimit: 2500,
      });
      expect((await upload(h, w.bot.token, fileForm('i.png', pngOfSize(100)))).status).toBe(200);
    });

    it('keys the quota by user: a person has their own (D10)', async () => {
      expect((await h.as(w.human.token).get('/files/quota')).body.dailyUsed).toBe(0);
      expect((await upload(h, w.human.token, fileForm('p.png', pngOfSize(900)))).status).toBe(200);
      expect((await h.as(w.human.token).get('/files/quota')).body.dailyUsed).toBe(900);
      expect((await quota()).dailyUsed).toBe(100);
    });

    it('releases the reservation when the upload fails after it (one transaction)', async () => {
      const before = await quota();
      let aborted = false;
      // A blob whose key is already taken: the file row cannot be inserted after the charge.
      const taken = await h.services.domain.db
        .selectFrom('files')
        .select('storage_key')
        .executeTakeFirstOrThrow();
      const blob: BlobWriter = {
        key: taken.storage_key,
        write: async () => {},
        commit: async () => {},
        abort: async () => {
          aborted = true;
        },
      };
      const principal = { userId: w.bot.userId, name: 'bot', isBot: true, botId: w.bot.id };
      await expect(
        acceptUpload(h.services.domain, principal, {
          blob,
          size: 10,
          head: pngOfSize(100),
          rawName: 'x.png',
        }),
      ).rejects.toThrow();
      expect(aborted).toBe(true);
      expect(await quota()).toEqual(before);
    });
  });

  for (const limit of ['daily', 'monthly'] as const) {
    describe(`concurrent uploads against the ${limit} limit`, () => {
      let h: Harness;
      let w: World;
      const data = freshDataDir();
      const size = 2000;
      beforeAll(async () => {
        h = await createHarness({
          env: {
            PARLEY_DATA_DIR: data.dir,
            PARLEY_QUOTA_DAILY_BYTES: String(limit === 'daily' ? 10 * size : 10 ** 9),
            PARLEY_QUOTA_MONTHLY_BYTES: String(limit === 'monthly' ? 10 * size : 10 ** 9),
          },
        });
        w = await makeWorld(h);
      });
      afterAll(async () => {
        await h.close();
        data.remove();
      });

      it('20 at once against a limit that fits 10: exactly 10 stored, 10 refused, 10 files on disk', async () => {
        const results = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            upload(h, w.bot.token, fileForm(`c${i}.png`, pngOfSize(size))),
          ),
        );
        const codes = results.map((r) => r.status).sort();
        expect(codes.filter((c) => c === 200)).toHaveLength(10);
        expect(codes.filter((c) => c === 429)).toHaveLength(10);
        expect(blobFiles(data.dir)).toHaveLength(10);
        expect(stagedFiles(data.dir)).toEqual([]);
        const q = (await h.as(w.bot.token).get('/files/quota')).body;
        expect(limit === 'daily' ? q.dailyUsed : q.monthlyUsed).toBe(10 * size);
        const rows = await h.services.domain.db.selectFrom('files').select('id').execute();
        expect(rows).toHaveLength(10);
        // Every stored file is served whole.
        for (const r of results.filter((x) => x.status === 200)) {
          const got = await h.app.inject({ method: 'GET', url: new URL(r.body.url).pathname });
          expect(got.rawPayload.length).toBe(size);
        }
      });
    });
  }
});
