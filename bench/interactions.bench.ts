import { connectGateway, type DispatchFrame } from './lib/gateway-client.js';
import { HttpClient } from './lib/http-client.js';
import { Operator } from './lib/operator.js';
import { startParley } from './lib/parley-server.js';
import { size } from './lib/sizes.js';
import { nowMs, round, sleep, summarize } from './lib/stats.js';
import type { Benchmark, BenchContext, BenchOutcome, Figure } from './lib/types.js';

/**
 * interactions (issue 25, D64–D65): the round trip of a slash command — a person invokes
 * (`POST /interactions` type 2) → the bot receives INTERACTION_CREATE on its gateway → the bot
 * calls back (`POST /interactions/:id/:token/callback` type 4) → the reply's MESSAGE_CREATE at
 * the invoker's gateway — timed from before the invocation is sent to the reply's arrival.
 * The same-run baseline is the plain send→event latency: the same person's `POST /channels/:id
 * /messages` to its MESSAGE_CREATE at the same gateway, one send beside each invocation on the
 * same tick. 1,000 of each at 50/s (smoke: 20 at 50/s). Target: interaction p99 ≤ 2 × send→event
 * p99 (the round trip is two requests and two gateway hops where a send is one and one).
 */
export const interactionsBench: Benchmark = {
  name: 'interactions',
  title: 'slash command round trip (invoke → bot → callback → reply) p99 ≤ 2× send→event p99',
  async run(ctx: BenchContext): Promise<BenchOutcome> {
    const count = size(ctx, 1000, 20, 50);
    const rate = 50; // per second, of each kind
    const server = await startParley({ label: 'interactions server', cpuProfDir: ctx.profileDir });
    const http = new HttpClient(server.origin, 64);
    const closers: Array<() => void> = [];
    try {
      const op = new Operator(server, 8);
      const [bot] = await op.bots(1);
      if (!bot) throw new Error('no bot');
      const person = await op.user('invoker');
      const token = await op.session(person);
      const guild = await op.guild('Bench guild', person);
      const channel = await op.channel(guild, 'general');
      await op.join(guild, bot.userId);
      op.close();
      const put = await http.expect('PUT', `/api/v1/guilds/${guild}/commands`, 200, {
        token: bot.token,
        body: [
          {
            name: 'roll',
            description: 'Roll a die',
            options: [{ type: 4, name: 'sides', description: 'Sides', required: true }],
          },
        ],
      });
      const commandId = (put.body as Array<{ id: number }>)[0]!.id;

      // The bot: every INTERACTION_CREATE answered at once by the callback route.
      let callbackFailures = 0;
      const botConn = await connectGateway(server.gatewayUrl, bot.token, {
        heartbeat: true,
        onDispatch: (f: DispatchFrame) => {
          if (f.t !== 'INTERACTION_CREATE') return;
          const sides = (f.d.data.options[0]?.value as number) ?? 6;
          void http
            .request('POST', `/api/v1/interactions/${f.d.id}/${f.d.token}/callback`, {
              body: { type: 4, data: { content: `rolled ${1 + (f.d.id % sides)}` } },
            })
            .then(
              (r) => void (r.status === 204 || callbackFailures++),
              () => void callbackFailures++,
            );
        },
      });
      closers.push(() => botConn.close(true));

      // The person's gateway: replies by their interaction id, sends by their message id.
      const replyAt = new Map<number, number>();
      const eventAt = new Map<number, number>();
      const personConn = await connectGateway(server.gatewayUrl, token, {
        heartbeat: true,
        onDispatch: (f, at) => {
          if (f.t !== 'MESSAGE_CREATE') return;
          if (f.d.interaction) replyAt.set(f.d.interaction.id as number, at);
          else eventAt.set(f.d.id as number, at);
        },
      });
      closers.push(() => personConn.close(true));

      const invoked: Array<{ id: number; at: number }> = [];
      const sent: Array<{ id: number; at: number }> = [];
      let refused = 0;
      const invoke = async (i: number): Promise<void> => {
        const at = nowMs();
        const r = await http.request('POST', '/api/v1/interactions', {
          token,
          body: {
            type: 2,
            channelId: channel,
            commandId,
            options: [{ name: 'sides', value: 6 + (i % 10) }],
          },
        });
        if (r.status !== 202) refused++;
        else invoked.push({ id: (r.body as { id: number }).id, at });
      };
      const send = async (i: number): Promise<void> => {
        const at = nowMs();
        const r = await http.request('POST', `/api/v1/channels/${channel}/messages`, {
          token,
          body: { content: `send ${i}` },
        });
        if (r.status !== 201 && r.status !== 200) refused++;
        else sent.push({ id: (r.body as { id: number }).id, at });
      };

      // warm-up (not measured): a few of each
      for (let i = 0; i < 5; i++) await Promise.all([invoke(-1 - i), send(-1 - i)]);
      await sleep(300);
      invoked.length = 0;
      sent.length = 0;

      ctx.log(`interactions: ${count} invocations and ${count} sends at ${rate}/s each`);
      const start = nowMs();
      const inflight: Promise<void>[] = [];
      for (let i = 0; i < count; i++) {
        const due = start + (i * 1000) / rate;
        const wait = due - nowMs();
        if (wait > 0) await sleep(wait);
        inflight.push(invoke(i), send(i));
      }
      await Promise.all(inflight);
      // every answer has arrived, or 10 s have passed
      const deadline = nowMs() + 10_000;
      while (
        nowMs() < deadline &&
        (invoked.some((x) => !replyAt.has(x.id)) || sent.some((x) => !eventAt.has(x.id)))
      )
        await sleep(50);

      const rt = invoked.filter((x) => replyAt.has(x.id)).map((x) => replyAt.get(x.id)! - x.at);
      const se = sent.filter((x) => eventAt.has(x.id)).map((x) => eventAt.get(x.id)! - x.at);
      const missing = invoked.length - rt.length + (sent.length - se.length) + refused;
      const i = summarize(rt);
      const s = summarize(se);
      const figures: Figure[] = [
        {
          id: 'interaction_p50',
          label: 'interaction round trip p50',
          value: round(i.p50, 3),
          unit: 'ms',
        },
        {
          id: 'interaction_p99',
          label: 'interaction round trip p99',
          value: round(i.p99, 3),
          unit: 'ms',
        },
        {
          id: 'send_event_p50',
          label: 'send→event p50 (same run)',
          value: round(s.p50, 3),
          unit: 'ms',
        },
        {
          id: 'send_event_p99',
          label: 'send→event p99 (same run)',
          value: round(s.p99, 3),
          unit: 'ms',
        },
        {
          id: 'ratio_p99',
          label: 'interaction round trip p99 / send→event p99',
          value: round(i.p99 / s.p99, 3),
          unit: 'x',
          basis: `${round(i.p99, 3)} ms ÷ ${round(s.p99, 3)} ms`,
          target: { op: '<=', value: 2 },
        },
        {
          id: 'ratio_p50',
          label: 'interaction round trip p50 / send→event p50',
          value: round(i.p50 / s.p50, 3),
          unit: 'x',
          basis: `${round(i.p50, 3)} ms ÷ ${round(s.p50, 3)} ms`,
        },
        {
          id: 'missing',
          label: 'invocations or sends refused or never seen at the gateway',
          value: missing,
          unit: 'count',
          target: { op: '<=', value: 0 },
        },
      ];
      const row = (name: string, l: ReturnType<typeof summarize>) => ({
        case: name,
        count: l.count,
        'p50 ms': round(l.p50, 3),
        'p90 ms': round(l.p90, 3),
        'p99 ms': round(l.p99, 3),
        'max ms': round(l.max, 3),
      });
      return {
        status: 'ok',
        figures,
        table: [row('invoke → reply at the gateway', i), row('send → event at the gateway', s)],
        details: { count, rate, interaction: i, sendEvent: s, refused, callbackFailures },
        warnings: callbackFailures > 0 ? [`${callbackFailures} callbacks failed`] : [],
      };
    } finally {
      for (const c of closers) c();
      http.close();
      await server.dispose();
    }
  },
};
