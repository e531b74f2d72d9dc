import v8 from 'node:v8';
import vm from 'node:vm';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { WebhookWorker } from '../../src/webhooks/worker.js';
import {
  ADMIN_TOKEN,
  dbDescribe,
  expectStatus,
  makeWorld,
  type World,
} from '../helpers/harness.js';
import { startLiveServer, type LiveServer } from '../helpers/live-server.js';
import { histogramCount, parsePrometheus, sample, type Family } from '../helpers/prometheus.js';
import { Receiver, status } from '../helpers/receiver.js';

// D53: /metrics in the Prometheus text format, read by an outside parser, over real HTTP: a
// request (by route template), a gateway connection and a webhook try show up.
dbDescribe('metrics, health and readiness (D53)', () => {
  let live: LiveServer;
  let w: World;
  let origin: string;
  let worker: WebhookWorker;
  let receiver: Receiver;
  const failures: Array<{ botId: number; status: number | null; latencyMs: number }> = [];

  beforeAll(async () => {
    live = await startLiveServer({
      env: { PARLEY_WEBHOOK_ALLOW_INSECURE: 'true', PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true' },
    });
    origin = live.gatewayUrl.replace(/^ws/, 'http').replace(/\/gateway$/, '');
    worker = new WebhookWorker(live.h.services.domain, {
      pollMs: 20,
      logFailure: (o) => failures.push(o),
    });
    live.h.services.events.onWebhooks(() => worker.wake());
    worker.start();
    w = await makeWorld(live.h);
    receiver = await new Receiver().listen();
    await expectStatus(
      await live.h.admin.put(`/bots/${w.bot.id}/webhook`, { url: receiver.url }),
      200,
    );
  });
  afterAll(async () => {
    await worker.stop();
    await receiver.close();
    await live.close();
  });

  const scrape = async (headers: Record<string, string> = {}): Promise<Family[]> => {
    const res = await fetch(`${origin}/metrics`, { headers });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parsePrometheus(await res.text());
  };

  it('/healthz and /readyz answer 200 while serving', async () => {
    const health = await fetch(`${origin}/healthz`);
    expect(health.status).toBe(200);
    const ready = await fetch(`${origin}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ ready: true, phase: 'ready' });
  });

  it('a request, a gateway connection and a webhook try are counted', async () => {
    const before = await scrape();
    const route = { method: 'POST', route: '/api/v1/channels/:channelId/messages', status: '200' };
    const sentBefore = sample(before, 'parley_http_requests_total', route) ?? 0;
    const triesBefore = sample(before, 'parley_webhook_tries_total', { outcome: 'delivered' }) ?? 0;
    const lagBefore = await histogramCount('parley_outbox_lag_seconds');
    const opened = sample(before, 'parley_gateway_connections_opened_total', { kind: 'bot' }) ?? 0;

    const gw = await live.connect(w.bot.token);
    await gw.ready();
    const res = await fetch(`${origin}/api/v1/channels/${w.channelId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.human.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'measured' }),
    });
    expect(res.status).toBe(200);
    await gw.dispatch('MESSAGE_CREATE');
    await receiver.waitFor(1);
    // The outcome is counted when the try ends, a moment after the receiver answered.
    let after = await scrape();
    for (let i = 0; i < 50; i++) {
      if (
        (sample(after, 'parley_webhook_tries_total', { outcome: 'delivered' }) ?? 0) > triesBefore
      )
        break;
      await new Promise((r) => setTimeout(r, 20));
      after = await scrape();
    }

    // By route TEMPLATE: no series carries a raw id.
    expect(sample(after, 'parley_http_requests_total', route)).toBe(sentBefore + 1);
    expect(await histogramCount('parley_http_request_duration_seconds', route)).toBe(
      sentBefore + 1,
    );
    const routes = after
      .find((f) => f.name === 'parley_http_requests_total')
      ?.metrics.map((m) => m.labels?.['route'] ?? '');
    expect(routes?.some((r) => /\d{6,}/.test(r))).toBe(false);

    expect(sample(after, 'parley_gateway_connections', { kind: 'bot' })).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'parley_gateway_connections', { kind: 'person' })).toBeDefined();
    expect(sample(after, 'parley_gateway_connections_opened_total', { kind: 'bot' })).toBe(
      opened + 1,
    );
    expect(sample(after, 'parley_gateway_dispatches_total', { kind: 'bot' })).toBeGreaterThan(0);
    expect(await histogramCount('parley_outbox_lag_seconds')).toBeGreaterThan(lagBefore);
    expect(sample(after, 'parley_webhook_tries_total', { outcome: 'delivered' })).toBe(
      triesBefore + 1,
    );
    expect(
      await histogramCount('parley_webhook_try_duration_seconds', { outcome: 'delivered' }),
    ).toBe(triesBefore + 1);
    // The text has the histogram too, in Prometheus' form.
    expect(after.find((f) => f.name === 'parley_webhook_try_duration_seconds')?.type).toBe(
      'HISTOGRAM',
    );
    expect(after.find((f) => f.name === 'nodejs_eventloop_lag_seconds')?.type).toBe('GAUGE');
    expect(after.find((f) => f.name === 'parley_rate_limit_refusals_total')?.type).toBe('COUNTER');

    await gw.close(1000);
    for (let i = 0; i < 50; i++) {
      const f = await scrape();
      if (
        (sample(f, 'parley_gateway_connections_closed_total', { kind: 'bot', code: '1000' }) ?? 0) >
        0
      )
        return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('the closed connection was never counted');
  });

  it('not loopback (a proxied request) → 404 unless the admin token comes with it', async () => {
    const proxied = { 'x-forwarded-for': '203.0.113.9' };
    const res = await fetch(`${origin}/metrics`, { headers: proxied });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'NOT_FOUND' } });
    const wrong = await fetch(`${origin}/metrics`, {
      headers: { ...proxied, authorization: 'Bearer not-the-admin-token' },
    });
    expect(wrong.status).toBe(404);
    await scrape({ ...proxied, authorization: `Bearer ${ADMIN_TOKEN}` });
  });

  it('a failed webhook try is counted by outcome and reported for the log (bot, status, latency)', async () => {
    const before = await scrape();
    const failed = sample(before, 'parley_webhook_tries_total', { outcome: 'http_error' }) ?? 0;
    receiver.answer(status(500));
    await expectStatus(await live.h.admin.post(`/bots/${w.bot.id}/webhook/test`), 200);
    for (let i = 0; i < 100 && failures.length === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(failures[0]).toMatchObject({ botId: w.bot.id, status: 500 });
    expect(failures[0]?.latencyMs).toBeGreaterThanOrEqual(0);
    const after = await scrape();
    expect(sample(after, 'parley_webhook_tries_total', { outcome: 'http_error' })).toBe(failed + 1);
  });
  it('parley_heap_retained_bytes is the heap in use after the last full collection: up while something is held, down once it is let go', async () => {
    // A full collection on demand (the test's server runs in this process).
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const retained = async (): Promise<number> => {
      gc();
      // The collection's performance entry is delivered a moment after it ends.
      await new Promise((r) => setTimeout(r, 50));
      return sample(await scrape(), 'parley_heap_retained_bytes') ?? Number.NaN;
    };
    const base = await retained();
    expect(base).toBeGreaterThan(1024 * 1024);
    let held: number[][] | null = Array.from({ length: 64 }, () =>
      new Array<number>(64 * 1024).fill(1.5),
    );
    const holding = await retained();
    // 64 × 64 Ki doubles = 32 MiB held across the collection.
    expect(holding - base).toBeGreaterThan(28 * 1024 * 1024);
    expect(held.length).toBe(64);
    held = null;
    const released = await retained();
    expect(holding - released).toBeGreaterThan(28 * 1024 * 1024);
  });
});
