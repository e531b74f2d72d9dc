import { HttpClient, mapLimit } from './lib/http-client.js';
import { buildWorld, Operator, type BotHandle } from './lib/operator.js';
import { startParley } from './lib/parley-server.js';
import { seconds, size } from './lib/sizes.js';
import { nowMs, round, Samples, sleep, summarize, type LatencySummary } from './lib/stats.js';
import {
  BenchSkip,
  type Benchmark,
  type BenchContext,
  type BenchOutcome,
  type Figure,
} from './lib/types.js';
import { WebhookReceiver } from './lib/webhook-receiver.js';

/**
 * webhooks, in three phases on one server:
 *  1. burst: messages sent as fast as the server takes them; deliveries per second to local
 *     receivers answering 200 (target ≥ 2,000/s);
 *  2. steady: messages at a modest fixed rate (well below the burst capacity, so latency is
 *     the delivery path and not a queue); the healthy bots' delivery latency alone;
 *  3. the same again with one more bot whose receiver never answers: the healthy bots' p99
 *     must not suffer (D39: a dead receiver never delays other bots; target ≤ 1.2x phase 2,
 *     the same-run baseline).
 * Every message in the channel is one delivery per bot with a webhook (D34). Each bot has its
 * own receiver (its own port), as separate bot backends would. A person sends the messages.
 */
/** messages per second in the steady phases (× healthy bots = deliveries per second) */
const STEADY_RATE = 10;

export const webhooksBench: Benchmark = {
  name: 'webhooks',
  title: 'webhook deliveries/s (≥ 2,000/s) and healthy p99 beside a dead receiver (≤ 1.2x)',
  async run(ctx: BenchContext): Promise<BenchOutcome> {
    const healthyCount = size(ctx, 10, 3, 3);
    const burstMessages = size(ctx, 600, 30, 100);
    const steadyS = seconds(ctx, 15, 1, 3);
    const drainS = ctx.smoke ? 10 : 30;
    const server = await startParley({
      label: 'webhooks server',
      cpuProfDir: ctx.profileDir,
      // D37: loopback http:// receivers are refused unless the operator allows them.
      env: { PARLEY_WEBHOOK_ALLOW_INSECURE: 'true', PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true' },
    });
    const receivers: WebhookReceiver[] = [];
    const http = new HttpClient(server.origin, 16);
    try {
      const op = new Operator(server);
      const world = await buildWorld(op, healthyCount + 1);
      const sender = await op.session(world.ownerId);
      const healthyBots = world.bots.slice(0, healthyCount);
      const deadBot = world.bots[healthyCount] as BotHandle;

      const healthy = await Promise.all(healthyBots.map(() => WebhookReceiver.start('healthy')));
      receivers.push(...healthy);
      for (const [i, bot] of healthyBots.entries()) {
        const r = await op.setWebhook(bot.id, (healthy[i] as WebhookReceiver).url);
        if (r.status === 404 && String(r.body?.error?.message).startsWith('No route'))
          throw new BenchSkip('webhooks not available (no PUT /admin/v1/bots/:botId/webhook)');
        if (r.status !== 200)
          throw new Error(`setting a webhook failed: HTTP ${r.status} ${r.raw.slice(0, 200)}`);
      }

      const path = `/api/v1/channels/${world.channelId}/messages`;
      const send = async (content: string, sentAt: Map<string, number>): Promise<void> => {
        sentAt.set(content, nowMs());
        await http.expect('POST', path, 200, { token: sender, body: { content } });
      };

      /** Sends with `drive`, then waits (bounded) for every healthy delivery and measures. */
      const phase = async (
        tag: string,
        messages: number,
        drive: (contents: string[], sentAt: Map<string, number>) => Promise<void>,
      ) => {
        const sentAt = new Map<string, number>();
        const before = healthy.map((r) => r.deliveries.length);
        const t0 = nowMs();
        await drive(
          Array.from({ length: messages }, (_, i) => `${tag}-${i}`),
          sentAt,
        );
        const expected = messages * healthyCount;
        const got = (): number =>
          healthy.reduce((n, r, i) => n + r.deliveries.length - (before[i] ?? 0), 0);
        const until = nowMs() + drainS * 1000;
        while (got() < expected && nowMs() < until) await sleep(20);
        const latencies = new Samples(expected);
        let last = t0;
        let unique = 0;
        let duplicates = 0;
        healthy.forEach((r, i) => {
          const seen = new Set<string>();
          for (const d of r.deliveries.slice(before[i] ?? 0)) {
            const sent = sentAt.get(d.content);
            if (sent === undefined) continue; // an event of another phase
            if (seen.has(d.deliveryId)) {
              duplicates += 1; // D39: at least once, so a retry may repeat one
              continue;
            }
            seen.add(d.deliveryId);
            unique += 1;
            latencies.push(d.at - sent);
            last = Math.max(last, d.at);
          }
        });
        const spanS = (last - t0) / 1000;
        return {
          messages,
          expected,
          unique,
          duplicates,
          missing: expected - unique,
          perSecond: spanS > 0 ? unique / spanS : 0,
          spanS,
          latency: summarize(latencies.values()),
        };
      };
      const burst = (contents: string[], sentAt: Map<string, number>) =>
        mapLimit(contents, 16, (c) => send(c, sentAt)).then(() => undefined);
      // Open loop at a fixed rate: each message leaves on schedule.
      const steady = async (contents: string[], sentAt: Map<string, number>) => {
        const start = nowMs();
        const pending: Promise<void>[] = [];
        for (const [i, c] of contents.entries()) {
          const wait = start + (i * 1000) / STEADY_RATE - nowMs();
          if (wait > 0) await sleep(wait);
          pending.push(send(c, sentAt));
        }
        await Promise.all(pending);
      };

      ctx.log(`webhooks: burst of ${burstMessages} messages × ${healthyCount} healthy bots`);
      const p1 = await phase('burst', burstMessages, burst);
      if (p1.unique === 0) {
        // Nothing arrived: either no delivery was ever enqueued (the feature is not wired up
        // yet: a skip) or they were and failed (an error worth reading).
        const botId = (healthyBots[0] as BotHandle).id;
        const log = await op.http.request('GET', `/admin/v1/bots/${botId}/deliveries`, {
          token: server.adminToken,
        });
        const rows: unknown = log.body?.deliveries;
        if (Array.isArray(rows) && rows.length === 0)
          throw new BenchSkip('webhooks not available (message events enqueue no deliveries yet)');
        throw new Error(
          `no webhook delivery arrived within ${drainS} s ` +
            `(delivery log: HTTP ${log.status} ${log.raw.slice(0, 300)})`,
        );
      }
      const steadyMessages = Math.round(STEADY_RATE * steadyS);
      ctx.log(`webhooks: steady ${STEADY_RATE} msg/s for ${steadyS} s`);
      const p2 = await phase('alone', steadyMessages, steady);
      const dead = await WebhookReceiver.start('stalled');
      receivers.push(dead);
      const s = await op.setWebhook(deadBot.id, dead.url);
      if (s.status !== 200) throw new Error(`setting a webhook failed: HTTP ${s.status} ${s.raw}`);
      op.close();
      ctx.log('webhooks: the same, with one more bot whose receiver never answers');
      const p3 = await phase('beside', steadyMessages, steady);

      const row = (what: string, p: typeof p1) => ({
        phase: what,
        messages: p.messages,
        deliveries: p.unique,
        missing: p.missing,
        'per s': Math.round(p.perSecond),
        'p50 ms': round(p.latency.p50, 3),
        'p99 ms': round(p.latency.p99, 3),
      });
      const ratio = (a: LatencySummary, b: LatencySummary): number => round(b.p99 / a.p99, 3);
      const figures: Figure[] = [
        {
          id: 'deliveries_per_s',
          label: 'deliveries per second (burst, healthy receivers)',
          value: Math.round(p1.perSecond),
          unit: '/s',
          basis: `${p1.unique} deliveries in ${round(p1.spanS, 2)} s from the first send`,
          target: { op: '>=', value: 2000 },
        },
        {
          id: 'ratio_p99_stalled',
          label: 'healthy p99 beside a dead receiver / alone',
          value: ratio(p2.latency, p3.latency),
          unit: 'x',
          basis: `${round(p3.latency.p99, 3)} ms ÷ ${round(p2.latency.p99, 3)} ms`,
          target: { op: '<=', value: 1.2 },
        },
        {
          // p99 of ~1,500 samples swings with any hiccup of a shared machine; p50 is steadier.
          id: 'ratio_p50_stalled',
          label: 'healthy p50 beside a dead receiver / alone',
          value: round(p3.latency.p50 / p2.latency.p50, 3),
          unit: 'x',
          basis: `${round(p3.latency.p50, 3)} ms ÷ ${round(p2.latency.p50, 3)} ms`,
        },
        {
          id: 'healthy_p99',
          label: `healthy delivery p99 at ${STEADY_RATE * healthyCount} deliveries/s`,
          value: round(p2.latency.p99, 3),
          unit: 'ms',
        },
        {
          id: 'missing',
          label: `healthy deliveries not arrived within ${drainS} s`,
          value: p1.missing + p2.missing + p3.missing,
          unit: 'count',
          target: { op: '<=', value: 0 },
        },
      ];
      return {
        status: 'ok',
        figures,
        table: [
          row('burst', p1),
          row(`steady ${STEADY_RATE}/s`, p2),
          row(`steady + dead receiver`, p3),
        ],
        details: {
          healthyBots: healthyCount,
          burstMessages,
          steadyRate: STEADY_RATE,
          steadyS,
          drainS,
          burst: p1,
          alone: p2,
          besideDead: p3,
          deadReceiverRequests: dead.requests,
        },
      };
    } finally {
      http.close();
      await server.dispose();
      await Promise.all(receivers.map((r) => r.close()));
    }
  },
};
