import {
  connectGateway,
  type DispatchFrame,
  type GatewayConnection,
} from './lib/gateway-client.js';
import { HttpClient, mapLimit } from './lib/http-client.js';
import { buildSoloChannels, buildWorld, Operator, type BotHandle } from './lib/operator.js';
import { startParley } from './lib/parley-server.js';
import { seconds, size } from './lib/sizes.js';
import { nowMs, round, Samples, sleep, summarize, type LatencySummary } from './lib/stats.js';
import type { Benchmark, BenchContext, BenchOutcome, Figure, TableRow } from './lib/types.js';

/**
 * fanout: how long from POST /channels/:id/messages to MESSAGE_CREATE on the gateway.
 *  (a) one bot, quiet: 1,000 messages one at a time. Targets p50 ≤ 1 ms, p99 ≤ 5 ms.
 *  (b) 100 bots connected, 500 messages/s for 10 s (open loop, sent round-robin by the bots):
 *      every bot must get every message (zero missing) in order (s +1 each, ids increasing).
 *      Target p99 ≤ 25 ms.
 * Latency runs from just before the POST is written to the frame's arrival. The same-run
 * baseline is the POST's own round trip: event latency ÷ POST latency says how far behind the
 * HTTP answer the event comes.
 */
export const fanoutBench: Benchmark = {
  name: 'fanout',
  title: 'POST → MESSAGE_CREATE latency on the gateway: 1 quiet bot, then 100 bots at 500 msg/s',
  async run(ctx: BenchContext): Promise<BenchOutcome> {
    const quietCount = size(ctx, 1000, 30, 50);
    const busyBots = size(ctx, 100, 5, 5);
    const rate = size(ctx, 500, 50, 50);
    const busyS = seconds(ctx, 10, 1, 1);
    const drainS = 10;
    const server = await startParley({ label: 'fanout server', cpuProfDir: ctx.profileDir });
    const http = new HttpClient(server.origin, 64);
    const conns: GatewayConnection[] = [];
    try {
      const op = new Operator(server);
      // (a)'s bot alone in a guild of its own (its messages have one recipient: itself);
      // (b)'s bots together in another.
      const [quietSolo] = await buildSoloChannels(op, 1);
      const world = await buildWorld(op, busyBots);
      op.close();
      if (!quietSolo) throw new Error('no quiet bot');
      const quietBot = quietSolo.bot;
      const quietPath = `/api/v1/channels/${quietSolo.channelId}/messages`;
      const path = `/api/v1/channels/${world.channelId}/messages`;
      const busy = world.bots;

      // (a) One bot, one message at a time.
      ctx.log(`fanout (a): ${quietCount} messages, one at a time`);
      const waiting = new Map<string, (at: number) => void>();
      const quiet = await connectGateway(server.gatewayUrl, quietBot.token, {
        heartbeat: true,
        onDispatch: (f, at) => {
          if (f.t === 'MESSAGE_CREATE') waiting.get(String(f.d?.content))?.(at);
        },
      });
      conns.push(quiet);
      const warm = Math.min(100, Math.ceil(quietCount / 10));
      const aEvent = new Samples(quietCount);
      const aPost = new Samples(quietCount);
      let aMissing = 0;
      for (let i = 0; i < warm + quietCount; i++) {
        const content = `a-${i}`;
        const event = new Promise<number | undefined>((resolve) => {
          const t = setTimeout(() => resolve(undefined), 2000);
          waiting.set(content, (at) => {
            clearTimeout(t);
            resolve(at);
          });
        });
        const t0 = nowMs();
        await http.expect('POST', quietPath, 200, { token: quietBot.token, body: { content } });
        const t1 = nowMs();
        const at = await event;
        waiting.delete(content);
        if (i < warm) continue;
        aPost.push(t1 - t0);
        if (at === undefined) aMissing += 1;
        else aEvent.push(at - t0);
      }
      quiet.close();
      const a = summarize(aEvent.values());
      const aHttp = summarize(aPost.values());

      // (b) Many bots while messages flow at a steady rate.
      ctx.log(`fanout (b): ${busyBots} bots connected, ${rate} msg/s for ${busyS} s`);
      const total = Math.round(rate * busyS);
      const sentAt = new Float64Array(total).fill(Number.NaN);
      const bEvent = new Samples(total * busyBots);
      interface BotState {
        received: number;
        seen: Set<number>;
        lastS: number;
        lastId: number;
        outOfOrder: number;
      }
      const states: BotState[] = busy.map(() => ({
        received: 0,
        seen: new Set<number>(),
        lastS: 0,
        lastId: 0,
        outOfOrder: 0,
      }));
      const onFrame = (st: BotState) => (f: DispatchFrame, at: number) => {
        if (f.t !== 'MESSAGE_CREATE') return;
        const content = String(f.d?.content);
        if (!content.startsWith('b-')) return;
        const index = Number(content.slice(2));
        const t0 = sentAt[index];
        if (t0 !== undefined && !Number.isNaN(t0)) bEvent.push(at - t0);
        st.seen.add(index);
        // D31: s grows by one per dispatch; D3/D16: message ids grow with time.
        if (st.lastS !== 0 && f.s !== st.lastS + 1) st.outOfOrder += 1;
        if (Number(f.d?.id) <= st.lastId) st.outOfOrder += 1;
        st.lastS = f.s;
        st.lastId = Number(f.d?.id);
        st.received += 1;
      };
      const busyConns = await mapLimit(busy, 10, (bot, i) =>
        connectGateway(server.gatewayUrl, bot.token, {
          heartbeat: true,
          onDispatch: onFrame(states[i] as BotState),
        }),
      );
      conns.push(...busyConns);
      const bPost = new Samples(total);
      const answered = new Uint8Array(total);
      let postFailures = 0;
      const fire = (i: number): void => {
        const bot = busy[i % busy.length] as BotHandle;
        const t0 = nowMs();
        sentAt[i] = t0;
        http
          .request('POST', path, { token: bot.token, body: { content: `b-${i}` } })
          .then((r) => {
            answered[i] = 1;
            if (r.status === 200) bPost.push(nowMs() - t0);
            else postFailures += 1;
          })
          // A request cut off when the run ends is counted as unanswered below.
          .catch(() => void (answered[i] === 0 && cutAt === 0 && (postFailures += 1)));
      };
      let cutAt = 0;
      // Open loop: messages leave on schedule whether or not earlier ones were answered, so a
      // slow server shows as latency rather than as a lower sending rate.
      const start = nowMs();
      let sent = 0;
      await new Promise<void>((resolve) => {
        const tick = setInterval(() => {
          const due = Math.min(total, Math.floor(((nowMs() - start) * rate) / 1000));
          while (sent < due) fire(sent++);
          if (sent >= total) {
            clearInterval(tick);
            resolve();
          }
        }, 2);
      });
      const sendSeconds = (nowMs() - start) / 1000;
      // Bounded: a server that cannot keep up would otherwise keep the run going until its
      // backlog drains. What has not arrived by the deadline counts as missing, and enters the
      // percentiles with its wait so far (so p99 is then a lower bound, and says so).
      const deadline = nowMs() + drainS * 1000;
      const expected = total * busyBots;
      const received = (): number => states.reduce((n, s) => n + s.received, 0);
      while (received() < expected && nowMs() < deadline) await sleep(20);
      cutAt = nowMs();
      const late = expected - received();
      if (late > 0) {
        for (const st of states) {
          for (let i = 0; i < total; i++) {
            if (!st.seen.has(i)) bEvent.push(cutAt - (sentAt[i] ?? cutAt));
          }
        }
      }
      let unanswered = 0;
      for (let i = 0; i < total; i++) {
        if (answered[i]) continue;
        unanswered += 1;
        bPost.push(cutAt - (sentAt[i] ?? cutAt));
      }
      const b = summarize(bEvent.values());
      const bHttp = summarize(bPost.values());
      const missing = late;
      const outOfOrder = states.reduce((n, s) => n + s.outOfOrder, 0);

      const row = (what: string, s: LatencySummary, n: number): TableRow => ({
        case: what,
        samples: n,
        'p50 ms': round(s.p50, 3),
        'p99 ms': round(s.p99, 3),
        'max ms': round(s.max, 3),
      });
      const table = [
        row('(a) POST round trip', aHttp, aHttp.count),
        row('(a) POST → MESSAGE_CREATE', a, a.count),
        row(`(b) POST round trip @${rate}/s`, bHttp, bHttp.count),
        row(`(b) POST → MESSAGE_CREATE ×${busyBots} bots`, b, b.count),
      ];
      const figures: Figure[] = [
        {
          id: 'a_p50',
          label: '(a) quiet p50',
          value: round(a.p50, 3),
          unit: 'ms',
          target: { op: '<=', value: 1 },
        },
        {
          id: 'a_p99',
          label: '(a) quiet p99',
          value: round(a.p99, 3),
          unit: 'ms',
          target: { op: '<=', value: 5 },
        },
        {
          id: 'a_ratio_p50',
          label: '(a) event p50 / POST p50',
          value: round(a.p50 / aHttp.p50, 3),
          unit: 'x',
          basis: `${round(a.p50, 3)} ms ÷ ${round(aHttp.p50, 3)} ms`,
        },
        {
          id: 'b_p99',
          label: `(b) ${busyBots} bots p99`,
          value: round(b.p99, 3),
          unit: 'ms',
          ...(late > 0
            ? { basis: `a lower bound: ${late} events had not arrived at the cut-off` }
            : {}),
          target: { op: '<=', value: 25 },
        },
        {
          id: 'b_ratio_p99',
          label: '(b) event p99 / POST p99',
          value: round(b.p99 / bHttp.p99, 3),
          unit: 'x',
          basis: `${round(b.p99, 3)} ms ÷ ${round(bHttp.p99, 3)} ms`,
        },
        {
          id: 'b_missing',
          label: `(b) events not delivered within ${drainS} s`,
          value: missing + aMissing,
          unit: 'count',
          target: { op: '<=', value: 0 },
        },
        {
          id: 'b_out_of_order',
          label: '(b) out-of-order events',
          value: outOfOrder,
          unit: 'count',
          target: { op: '<=', value: 0 },
        },
        {
          id: 'b_rate',
          label: '(b) send rate achieved',
          value: Math.round(total / sendSeconds),
          unit: 'msg/s',
        },
      ];
      const warnings: string[] = [];
      if (postFailures) warnings.push(`${postFailures} of ${total} sends failed in (b)`);
      if (late || unanswered)
        warnings.push(
          `(b) the server fell behind: ${unanswered} of ${total} sends unanswered and ${late} ` +
            `events not delivered ${drainS} s after the last send; (b) percentiles are lower bounds`,
        );
      if (aMissing) warnings.push(`${aMissing} of ${quietCount} events never arrived in (a)`);
      return {
        status: 'ok',
        figures,
        table,
        warnings,
        details: {
          quiet: { count: quietCount, event: a, post: aHttp, missing: aMissing },
          busy: {
            bots: busyBots,
            rate,
            seconds: busyS,
            total,
            expected,
            event: b,
            post: bHttp,
            missing,
            outOfOrder,
            postFailures,
            unanswered,
            drainS,
          },
        },
      };
    } finally {
      for (const c of conns) c.close(true);
      http.close();
      await server.dispose();
    }
  },
};
