import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import { webhookBody } from '../../src/events/serialize.js';
import { enqueueDeliveries, TEST_EVENT_TYPE } from '../../src/webhooks/webhooks.service.js';
import { WebhookWorker } from '../../src/webhooks/worker.js';
import { createHarness, dbDescribe, makeBot, makeUser, type Harness } from '../helpers/harness.js';
import { hang, ok, Receiver, status } from '../helpers/receiver.js';

// Issue 7: webhook delivery against a real local node:http receiver (D37–D41).
const hmac = (secret: string, body: Buffer): string =>
  'sha256=' + createHmac('sha256', secret).update(body).digest('hex');

interface DeliveryRow {
  id: number;
  deliveryId: string;
  type: string;
  state: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
}

dbDescribe('webhook delivery', () => {
  let h: Harness;
  let worker: WebhookWorker;
  const receivers: Receiver[] = [];

  beforeAll(async () => {
    h = await createHarness({
      env: {
        // Loopback receivers need both development flags (D37); the waits are shortened (D39).
        PARLEY_WEBHOOK_ALLOW_INSECURE: 'true',
        PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true',
        PARLEY_WEBHOOK_RETRY_S: '0.1,0.1,0.1',
      },
    });
    worker = new WebhookWorker(h.services.domain, { pollMs: 20, timeoutMs: 1500 });
    worker.start();
  });
  afterEach(async () => {
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  afterAll(async () => {
    await worker.stop();
    await h.close();
  });

  let owners = 0;
  async function botWithReceiver(r?: Receiver) {
    const receiver = r ?? (await new Receiver().listen());
    receivers.push(receiver);
    // INTERFACE: 3 bots per account — each bot here gets its own owner (people's names are
    // unique, D46: numbered across the whole suite, not per test).
    const owner = await makeUser(h, `owner${++owners}`);
    const bot = await makeBot(h, owner.id, `bot${receivers.length}`);
    const set = await h.admin.put(`/bots/${bot.id}/webhook`, { url: receiver.url });
    expect(set.status).toBe(200);
    return { bot, receiver, secret: set.body.secret as string };
  }

  const deliveries = async (botId: number): Promise<DeliveryRow[]> =>
    (await h.admin.get(`/bots/${botId}/deliveries`)).body.deliveries as DeliveryRow[];

  async function until(
    botId: number,
    pred: (d: DeliveryRow[]) => boolean,
    ms = 8000,
  ): Promise<DeliveryRow[]> {
    const end = Date.now() + ms;
    for (;;) {
      const list = await deliveries(botId);
      if (pred(list)) return list;
      if (Date.now() > end) throw new Error(`condition not met: ${JSON.stringify(list)}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  it('PUT webhook answers {url, secret} with the secret given at creation (D41)', async () => {
    const receiver = await new Receiver().listen();
    receivers.push(receiver);
    const bot = await makeBot(h, (await makeUser(h, 'o-settings')).id, 'settings');
    const r = await h.admin.put(`/bots/${bot.id}/webhook`, { url: receiver.url });
    expect(r.body).toEqual({ url: receiver.url, secret: bot.webhookSecret });
    expect((await h.admin.delete(`/bots/${bot.id}/webhook`)).status).toBe(204);
    expect((await h.admin.put('/bots/999999/webhook', { url: receiver.url })).status).toBe(404);
  });

  it('delivers with every D38 header; the signature verifies over the exact body bytes', async () => {
    const { bot, receiver, secret } = await botWithReceiver();
    const test = await h.admin.post(`/bots/${bot.id}/webhook/test`);
    expect(test.status).toBe(200);
    const [got] = await receiver.waitFor(1);
    expect(got?.headers['content-type']).toBe('application/json');
    expect(got?.headers['x-service-event']).toBe('WEBHOOK_TEST');
    expect(got?.headers['x-service-delivery']).toBe(test.body.deliveryId);
    expect(got?.headers['x-service-attempt']).toBe('1');
    expect(got?.headers['user-agent']).toBe('Parley-Webhooks/1');
    const ts = Number(got?.headers['x-service-timestamp']);
    expect(Math.abs(ts - Date.now() / 1000)).toBeLessThan(30);
    expect(got?.headers['x-service-signature']).toBe(hmac(secret, got!.body));
    const envelope = JSON.parse(got!.body.toString('utf8'));
    expect(envelope).toEqual({
      type: 'WEBHOOK_TEST',
      data: { botId: bot.id, message: 'Test event from Parley' },
    });
    const [log] = await until(bot.id, (l) => l[0]?.state === 'delivered');
    expect(log).toMatchObject({
      state: 'delivered',
      attempts: 1,
      lastStatus: 200,
      lastError: null,
      nextAttemptAt: null,
    });
  });

  it('retries 500, 500, then 200 under one delivery id with attempts 1, 2, 3 (D39)', async () => {
    const receiver = (await new Receiver().listen()).answer(status(500), status(500), ok);
    const { bot } = await botWithReceiver(receiver);
    await h.admin.post(`/bots/${bot.id}/webhook/test`);
    const got = await receiver.waitFor(3);
    expect(got.map((g) => g.headers['x-service-attempt'])).toEqual(['1', '2', '3']);
    expect(new Set(got.map((g) => g.headers['x-service-delivery'])).size).toBe(1);
    expect(got.map((g) => g.body.toString())).toEqual([
      got[0]!.body.toString(),
      got[0]!.body.toString(),
      got[0]!.body.toString(),
    ]);
    const [log] = await until(bot.id, (l) => l[0]?.state === 'delivered');
    expect(log).toMatchObject({ attempts: 3, lastStatus: 200 });
  });

  it('delivers once a receiver that was down comes back', async () => {
    const receiver = new Receiver();
    await receiver.listen();
    const port = receiver.port;
    await receiver.close(); // down: connections are refused
    const bot = await makeBot(h, (await makeUser(h, 'o-down')).id, 'down');
    await h.admin.put(`/bots/${bot.id}/webhook`, { url: `http://127.0.0.1:${port}/hook` });
    await h.admin.post(`/bots/${bot.id}/webhook/test`);
    const [first] = await until(bot.id, (l) => (l[0]?.attempts ?? 0) >= 1);
    expect(first?.lastError).toMatch(/connection failed/);
    const back = await new Receiver().listen(port);
    receivers.push(back);
    await back.waitFor(1);
    await until(bot.id, (l) => l[0]?.state === 'delivered');
  });

  it('marks a delivery failed after the last try; redeliver sends it again under the same id', async () => {
    const receiver = (await new Receiver().listen()).always(status(500));
    const { bot } = await botWithReceiver(receiver);
    await h.admin.post(`/bots/${bot.id}/webhook/test`);
    const [failed] = await until(bot.id, (l) => l[0]?.state === 'failed');
    expect(failed).toMatchObject({
      attempts: 4,
      lastStatus: 500,
      lastError: 'HTTP 500',
      nextAttemptAt: null,
    });
    receiver.always(ok);
    const again = await h.admin.post(`/bots/${bot.id}/deliveries/${failed!.id}/redeliver`);
    expect(again.status).toBe(200);
    expect(again.body.deliveryId).toBe(failed!.deliveryId);
    await until(bot.id, (l) => l[0]?.state === 'delivered');
    const last = receiver.received.at(-1);
    expect(last?.headers['x-service-delivery']).toBe(failed!.deliveryId);
    expect(last?.headers['x-service-attempt']).toBe('5');
    expect((await h.admin.post(`/bots/${bot.id}/deliveries/424242/redeliver`)).status).toBe(404);
  });

  it('does not follow redirects, even to a private address (D37, D39)', async () => {
    const target = await new Receiver().listen();
    receivers.push(target);
    const receiver = (await new Receiver().listen()).always(
      status(302, { location: `${target.url}?stolen` }),
    );
    const { bot } = await botWithReceiver(receiver);
    await h.admin.post(`/bots/${bot.id}/webhook/test`);
    const [log] = await until(bot.id, (l) => l[0]?.state === 'failed');
    expect(log?.lastError).toMatch(/redirect \(302\) not followed/);
    expect(target.received).toHaveLength(0);
  });

  it('honours Retry-After on 429 (D39)', async () => {
    const receiver = (await new Receiver().listen()).answer(
      status(429, { 'retry-after': '1' }),
      ok,
    );
    const { bot } = await botWithReceiver(receiver);
    await h.admin.post(`/bots/${bot.id}/webhook/test`);
    const [a, b] = await receiver.waitFor(2);
    expect(b!.at - a!.at).toBeGreaterThanOrEqual(950);
  });

  it('signs with the rotated secret from the next delivery on (D38)', async () => {
    const { bot, receiver, secret } = await botWithReceiver();
    const rotated = await h.admin.post(`/bots/${bot.id}/webhook/secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(secret);
    await h.admin.post(`/bots/${bot.id}/webhook/test`);
    const [got] = await receiver.waitFor(1);
    expect(got?.headers['x-service-signature']).toBe(hmac(rotated.body.secret, got!.body));
    expect(got?.headers['x-service-signature']).not.toBe(hmac(secret, got!.body));
  });

  it('D68: every delivery carries the Standard Webhooks headers, verified by the standardwebhooks package with the secret as shown', async () => {
    const { bot, receiver, secret } = await botWithReceiver();
    // D68: new secrets are `whsec_` + standard base64, the form the library decodes.
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const test = await h.admin.post(`/bots/${bot.id}/webhook/test`);
    const [got] = await receiver.waitFor(1);
    const hdr = got!.headers as Record<string, string>;
    expect(hdr['webhook-id']).toBe(test.body.deliveryId);
    expect(hdr['webhook-id']).toBe(hdr['x-service-delivery']);
    expect(hdr['webhook-timestamp']).toBe(hdr['x-service-timestamp']);
    expect(hdr['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    // D38's header is unchanged beside them.
    expect(hdr['x-service-signature']).toBe(hmac(secret, got!.body));
    const wh = new Webhook(secret);
    expect(wh.verify(got!.body.toString('utf8'), hdr)).toEqual({
      type: 'WEBHOOK_TEST',
      data: { botId: bot.id, message: 'Test event from Parley' },
    });
    // The id and the time are signed: altering either fails the third-party check.
    expect(() =>
      wh.verify(got!.body.toString('utf8'), { ...hdr, 'webhook-id': 'other' }),
    ).toThrow();
    const ts = String(Number(hdr['webhook-timestamp']) - 1);
    expect(() =>
      wh.verify(got!.body.toString('utf8'), { ...hdr, 'webhook-timestamp': ts }),
    ).toThrow();
    // A rotated secret signs the standard header too.
    const rotated = (await h.admin.post(`/bots/${bot.id}/webhook/secret`)).body.secret as string;
    await h.admin.post(`/bots/${bot.id}/webhook/test`);
    const [, again] = await receiver.waitFor(2);
    const hdr2 = again!.headers as Record<string, string>;
    expect(() => new Webhook(rotated).verify(again!.body.toString('utf8'), hdr2)).not.toThrow();
    expect(() => wh.verify(again!.body.toString('utf8'), hdr2)).toThrow();
  });

  it('D68: a secret made before D68 (base64url) keeps D38 unchanged; its standard key is its base64url-decoded bytes', async () => {
    const { bot, receiver } = await botWithReceiver();
    const old = 'whsec_' + Buffer.from('pre-D68 secret ~~~ >>> ???', 'utf8').toString('base64url');
    expect(old).toMatch(/[-_]/); // not standard base64
    await h.services.domain.db
      .updateTable('bots')
      .set({ webhook_secret: old })
      .where('id', '=', bot.id)
      .execute();
    await h.admin.post(`/bots/${bot.id}/webhook/test`);
    const [got] = await receiver.waitFor(1);
    const hdr = got!.headers as Record<string, string>;
    expect(hdr['x-service-signature']).toBe(hmac(old, got!.body));
    const key = Buffer.from(old.slice(6), 'base64url');
    expect(() =>
      new Webhook(key, { format: 'raw' }).verify(got!.body.toString('utf8'), hdr),
    ).not.toThrow();
  });

  it('a receiver that never answers for bot A does not delay bot B (D39 isolation)', async () => {
    const dead = (await new Receiver().listen()).always(hang);
    const a = await botWithReceiver(dead);
    const b = await botWithReceiver();
    // Pile up more of A's deliveries than the worker could ever run at once.
    for (let i = 0; i < 12; i++) await h.admin.post(`/bots/${a.bot.id}/webhook/test`);
    await dead.waitFor(1);
    const latencies: number[] = [];
    for (let i = 0; i < 10; i++) {
      const sent = Date.now();
      await h.admin.post(`/bots/${b.bot.id}/webhook/test`);
      const got = await b.receiver.waitFor(i + 1);
      latencies.push(got[i]!.at - sent);
    }
    latencies.sort((x, y) => x - y);
    // Well under A's 1.5 s answer timeout: B never waited behind A.
    expect(latencies.at(-1)).toBeLessThan(500);
    // A is capped per bot: never more than 4 of its tries in flight at once.
    expect(dead.maxOpen).toBeGreaterThanOrEqual(1);
    expect(dead.maxOpen).toBeLessThanOrEqual(4);
  });

  it('a receiver answering fast gets more tries in flight, up to 16; each delivery arrives once (issue #6)', async () => {
    const quick = (await new Receiver().listen()).always((res) => {
      setTimeout(() => res.writeHead(200).end('ok'), 20);
    });
    const { bot } = await botWithReceiver(quick);
    const d = h.services.domain;
    const n = 100; // the delivery log shows the last 100
    // One commit with a backlog larger than any cap: the worker claims it in batches.
    await d.db.transaction().execute(async (trx) => {
      for (let i = 0; i < n; i++)
        await enqueueDeliveries(
          trx,
          d,
          TEST_EVENT_TYPE,
          webhookBody(TEST_EVENT_TYPE, JSON.stringify({ i })),
          [bot.id],
        );
    });
    worker.wake();
    const got = await quick.waitFor(n);
    const ids = got.map((g) => String(g.headers['x-service-delivery']));
    expect(new Set(ids).size).toBe(n);
    expect(
      ids.every((id) =>
        /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(id),
      ),
    ).toBe(true);
    // D39 isolation is kept by the cap: it grows only with fast 2xx answers (< 500 ms), and stops at 16.
    expect(quick.maxOpen).toBeGreaterThan(4);
    expect(quick.maxOpen).toBeLessThanOrEqual(16);
    const log = await until(
      bot.id,
      (l) => l.length >= n && l.slice(0, n).every((x) => x.state === 'delivered'),
    );
    expect(log.slice(0, n).every((x) => x.attempts === 1 && x.lastStatus === 200)).toBe(true);
  });

  it('refuses http:// and private targets when the operator has not allowed them (D37)', async () => {
    const strict = await createHarness();
    try {
      const owner = await makeUser(strict, 'o');
      const bot = await makeBot(strict, owner.id);
      const cases: Array<[string, RegExp]> = [
        ['http://93.184.216.34/hook', /https/],
        ['https://127.0.0.1/hook', /loopback/],
        ['https://10.0.0.1/hook', /private/],
        ['https://169.254.169.254/latest', /linkLocal/],
        ['https://[::1]/hook', /loopback/],
        ['https://[::ffff:127.0.0.1]/hook', /loopback/],
        ['https://0x7f.1/hook', /loopback/],
        ['https://localhost/hook', /non-public/],
      ];
      for (const [url, why] of cases) {
        const r = await strict.admin.put(`/bots/${bot.id}/webhook`, { url });
        expect(r.status, url).toBe(400);
        expect(r.body.error.code).toBe('VALIDATION_ERROR');
        expect(r.body.error.details[0].field).toBe('url');
        expect(r.body.error.message, url).toMatch(why);
      }
    } finally {
      await strict.close();
    }
  });
});
