import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { pruneRetained, startRetention } from '../../src/domain/retention.js';
import { periodOf } from '../../src/domain/files/quota.js';
import { FakeClock } from '../helpers/clock.js';
import { createHarness, dbDescribe, makeBot, makeUser, type Harness } from '../helpers/harness.js';

// D53 (issue #10, finding 3): webhook delivery rows were never deleted. Delivered ones are kept
// 7 days and failed ones 30 (PARLEY_DELIVERY_RETENTION_DAYS=7,30) from the try that finished
// them; pending ones are never pruned. Old upload-quota counters (D24) go too.
const DAY = 86_400_000;

dbDescribe('retention of webhook deliveries and quota counters (D53)', () => {
  let h: Harness;
  const clock = new FakeClock();
  let botId = 0;
  beforeAll(async () => {
    h = await createHarness({
      clock,
      env: { PARLEY_WEBHOOK_ALLOW_INSECURE: 'true', PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true' },
    });
    const owner = await makeUser(h, 'owner');
    botId = (await makeBot(h, owner.id)).id;
    const set = await h.admin.put(`/bots/${botId}/webhook`, { url: 'http://127.0.0.1:9/hook' });
    expect(set.status).toBe(200);
  });
  afterAll(async () => h.close());

  const db = () => h.services.domain.db;

  /** A delivery made through the API (a test event), then put in `state` as of `at`. */
  async function delivery(state: 'pending' | 'delivered' | 'failed', at: number): Promise<number> {
    const before = await db()
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.max('id').as('max'))
      .executeTakeFirst();
    expect((await h.admin.post(`/bots/${botId}/webhook/test`)).status).toBe(200);
    const row = await db()
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('id', '>', Number(before?.max ?? 0))
      .executeTakeFirstOrThrow();
    await db()
      .updateTable('webhook_deliveries')
      .set({ state, updated_at: at, attempts: state === 'pending' ? 0 : 1 })
      .where('id', '=', row.id)
      .execute();
    if (state !== 'pending')
      await db()
        .insertInto('webhook_attempts')
        .values({ delivery_row_id: row.id, attempt: 1, at, status: 200, latency_ms: 3 })
        .execute();
    return Number(row.id);
  }

  const present = async (ids: number[]): Promise<number[]> =>
    (await db().selectFrom('webhook_deliveries').select('id').where('id', 'in', ids).execute())
      .map((r) => Number(r.id))
      .sort((a, b) => a - b);

  it('delivered rows go after 7 days, failed after 30, pending never; attempts go with them', async () => {
    const t0 = clock.now();
    const delivered = await delivery('delivered', t0);
    const deliveredLater = await delivery('delivered', t0 + 6 * DAY);
    const failed = await delivery('failed', t0);
    const pending = await delivery('pending', t0 - 400 * DAY);
    const all = [delivered, deliveredLater, failed, pending].sort((a, b) => a - b);

    // exactly 7 days: still kept
    clock.advance(7 * DAY);
    expect(await pruneRetained(h.services.domain)).toMatchObject({ delivered: 0, failed: 0 });
    expect(await present(all)).toEqual(all);

    clock.advance(1);
    expect(await pruneRetained(h.services.domain)).toMatchObject({ delivered: 1, failed: 0 });
    expect(await present(all)).toEqual(all.filter((id) => id !== delivered));
    // the log through the operator API says the same
    const log = await h.admin.get(`/bots/${botId}/deliveries`);
    expect(log.body.deliveries.map((d: { id: number }) => d.id)).not.toContain(delivered);

    clock.advance(23 * DAY); // t0 + 30 days + 1 ms
    expect(await pruneRetained(h.services.domain)).toMatchObject({ delivered: 1, failed: 1 });
    expect(await present(all)).toEqual([pending]);
    const attempts = await db()
      .selectFrom('webhook_attempts')
      .select('delivery_row_id')
      .where('delivery_row_id', 'in', all)
      .execute();
    expect(attempts).toEqual([]);
  });

  it('a redelivered row is pending again and its clock restarts', async () => {
    const id = await delivery('failed', clock.now() - 31 * DAY);
    expect((await h.admin.post(`/bots/${botId}/deliveries/${id}/redeliver`)).status).toBe(200);
    await pruneRetained(h.services.domain);
    expect(await present([id])).toEqual([id]);
  });

  it("D47: people's sessions idle past PARLEY_SESSION_IDLE_DAYS (+ a day) are removed", async () => {
    const idle = await makeUser(h, 'idle-person');
    const active = await makeUser(h, 'active-person');
    const sessions = (userId: number) =>
      db().selectFrom('user_sessions').select('id').where('user_id', '=', userId).execute();
    const days = h.services.domain.config.sessionIdleDays;
    await db()
      .updateTable('user_sessions')
      .set({ last_used_at: clock.now() - (days + 2) * DAY })
      .where('user_id', '=', idle.id)
      .execute();
    await db()
      .updateTable('user_sessions')
      .set({ last_used_at: clock.now() - days * DAY })
      .where('user_id', '=', active.id)
      .execute();
    expect(await pruneRetained(h.services.domain)).toMatchObject({ idleSessions: 1 });
    expect(await sessions(idle.id)).toEqual([]);
    expect(await sessions(active.id)).toHaveLength(1);
  });

  it('upload counters older than the previous UTC day and month are removed', async () => {
    const owner = await makeUser(h, 'quota-owner');
    const p = periodOf(clock.now());
    await db()
      .insertInto('upload_usage_daily')
      .values(
        [p.day, p.day - 1, p.day - 2, p.day - 40].map((day) => ({
          user_id: owner.id,
          day,
          bytes_used: 10,
          messages_sent: 1,
        })),
      )
      .execute();
    await db()
      .insertInto('upload_usage_monthly')
      .values(
        [p.month, p.month - 1, p.month - 2].map((month) => ({
          user_id: owner.id,
          month,
          bytes_used: 10,
        })),
      )
      .execute();
    const r = await pruneRetained(h.services.domain);
    expect(r).toMatchObject({ usageDays: 2, usageMonths: 1 });
    const days = await db()
      .selectFrom('upload_usage_daily')
      .select('day')
      .where('user_id', '=', owner.id)
      .orderBy('day')
      .execute();
    expect(days.map((d) => Number(d.day))).toEqual([p.day - 1, p.day]);
    const months = await db()
      .selectFrom('upload_usage_monthly')
      .select('month')
      .where('user_id', '=', owner.id)
      .orderBy('month')
      .execute();
    expect(months.map((m) => Number(m.month))).toEqual([p.month - 1, p.month]);
    // today's counter still answers GET /files/quota's figures
    expect(
      await db()
        .selectFrom('upload_usage_daily')
        .select('bytes_used')
        .where('user_id', '=', owner.id)
        .where('day', '=', p.day)
        .executeTakeFirst(),
    ).toEqual({ bytes_used: 10 });
  });

  it('the periodic pruner logs what it removed, at info', async () => {
    await delivery('delivered', clock.now() - 8 * DAY);
    await delivery('failed', clock.now() - 31 * DAY);
    const lines: Array<{ level: string; obj: object; msg: string }> = [];
    const r = startRetention(h.services.domain, {
      info: (obj, msg) => lines.push({ level: 'info', obj, msg }),
      warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
    });
    await r.runOnce();
    r.stop();
    expect(lines).toEqual([
      {
        level: 'info',
        obj: {
          deliveriesDelivered: 1,
          deliveriesFailed: 1,
          usageDays: 0,
          usageMonths: 0,
          idleSessions: 0,
          // D60 adds the audit log's retention to the same pass
          auditEntries: 0,
        },
        msg: expect.stringMatching(/removed/),
      },
    ]);
  });
});

describe('PARLEY_DELIVERY_RETENTION_DAYS (D53)', () => {
  it('defaults to 7,30 and is validated like other settings', () => {
    expect(loadConfig({}).deliveryRetentionDays).toEqual({ delivered: 7, failed: 30 });
    expect(loadConfig({ PARLEY_DELIVERY_RETENTION_DAYS: '1, 2' }).deliveryRetentionDays).toEqual({
      delivered: 1,
      failed: 2,
    });
    for (const bad of ['7', '0,30', '7,30,1', 'a,b', '-1,5', '7.5,30', '7,99999'])
      expect(() => loadConfig({ PARLEY_DELIVERY_RETENTION_DAYS: bad }), bad).toThrow(ConfigError);
  });
});
