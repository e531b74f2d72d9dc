import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { track } from './lib/children.js';
import { startFloor, type FloorServer } from './lib/floor-server.js';
import {
  connectGateway,
  type DispatchFrame,
  type GatewayConnection,
} from './lib/gateway-client.js';
import { HttpClient, mapLimit } from './lib/http-client.js';
import { buildSoloChannels, buildWorld, Operator, type BotHandle } from './lib/operator.js';
import { startParley } from './lib/parley-server.js';
import { cpuMs } from './lib/rss.js';
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
    let floor: FloorServer | undefined;
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
      const sender = openLoop({
        http,
        path,
        total,
        rate,
        tokenFor: (i) => (busy[i % busy.length] as BotHandle).token,
        contentFor: (i) => `b-${i}`,
        sentAt,
      });
      await sender.done;
      const { bPost, answered } = sender;
      const sendSeconds = sender.seconds();
      // Bounded: a server that cannot keep up would otherwise keep the run going until its
      // backlog drains. What has not arrived by the deadline counts as missing, and enters the
      // percentiles with its wait so far (so p99 is then a lower bound, and says so).
      const deadline = nowMs() + drainS * 1000;
      const expected = total * busyBots;
      const received = (): number => states.reduce((n, s) => n + s.received, 0);
      while (received() < expected && nowMs() < deadline) await sleep(20);
      const cutAt = sender.cut();
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
      for (const c of busyConns) c.close();
      // D28: a bot's next connection must come at least 1 s after this one.
      await sleep(1100);

      // (b) again with the readers in child processes (issue 29), then the floor beside it: a
      // bare `ws` server (bench/servers/floor.ts, SQLite: the send written durably, then one
      // frame per socket) sent the same load and read by the same reader processes.
      const child = await busyFromChildren({
        label: 'Parley',
        origin: server.origin,
        gatewayUrl: server.gatewayUrl,
        path,
        tokens: busy.map((b) => b.token),
        senderToken: (i) => (busy[i % busy.length] as BotHandle).token,
        total,
        rate,
        drainS,
        log: (line) => ctx.log(line),
      });
      floor = await startFloor('sqlite');
      const floorRun = await busyFromChildren({
        label: 'floor (bare ws server)',
        origin: floor.origin,
        gatewayUrl: `${floor.origin.replace('http', 'ws')}/gateway`,
        path,
        tokens: busy.map((_, i) => `floor-${i}`),
        senderToken: (i) => `floor-${i % busy.length}`,
        total,
        rate,
        drainS,
        log: (line) => ctx.log(line),
      });

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
        row(`(b) POST → MESSAGE_CREATE ×${busyBots} bots (old form)`, b, b.count),
        row(`(b) POST round trip, readers in child processes`, child.post, child.post.count),
        row(
          `(b) POST → MESSAGE_CREATE, readers in child processes`,
          child.event,
          child.event.count,
        ),
        row(`(b) floor: POST round trip`, floorRun.post, floorRun.post.count),
        row(`(b) floor: POST → frame`, floorRun.event, floorRun.event.count),
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
          label: `(b) ${busyBots} bots p99 (old form: readers in this process)`,
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
          id: 'b_child_p99',
          label: `(b) ${busyBots} bots p99, readers in child processes`,
          value: round(child.event.p99, 3),
          unit: 'ms',
          ...(child.missing > 0
            ? { basis: `a lower bound: ${child.missing} events had not arrived at the cut-off` }
            : {}),
          target: { op: '<=', value: 25 },
        },
        {
          id: 'b_child_p50',
          label: `(b) ${busyBots} bots p50, readers in child processes`,
          value: round(child.event.p50, 3),
          unit: 'ms',
        },
        {
          id: 'b_floor_p99',
          label: `(b) floor p99: a bare ws server, the same load and readers`,
          value: round(floorRun.event.p99, 3),
          unit: 'ms',
        },
        {
          id: 'b_child_floor_ratio_p99',
          label: '(b) p99 ÷ floor p99 (readers in child processes)',
          value: round(child.event.p99 / Math.max(0.001, floorRun.event.p99), 3),
          unit: 'x',
          basis: `${round(child.event.p99, 3)} ms ÷ ${round(floorRun.event.p99, 3)} ms`,
          target: { op: '<=', value: 2 },
        },
        {
          id: 'b_child_missing',
          label: `(b) readers in child processes: events not delivered within ${drainS} s`,
          value: child.missing,
          unit: 'count',
          target: { op: '<=', value: 0 },
        },
        {
          id: 'b_child_out_of_order',
          label: '(b) readers in child processes: out-of-order events',
          value: child.outOfOrder,
          unit: 'count',
          target: { op: '<=', value: 0 },
        },
        {
          id: 'b_reader_cores',
          label: '(b) reader processes CPU (cores) during the load',
          value: round(child.readerCpuCores, 3),
          unit: 'cores',
        },
        {
          id: 'b_rate',
          label: '(b) send rate achieved',
          value: Math.round(total / sendSeconds),
          unit: 'msg/s',
        },
      ];
      const warnings: string[] = [];
      const postFailures = sender.failures();
      if (postFailures) warnings.push(`${postFailures} of ${total} sends failed in (b)`);
      if (late || unanswered)
        warnings.push(
          `(b) the server fell behind: ${unanswered} of ${total} sends unanswered and ${late} ` +
            `events not delivered ${drainS} s after the last send; (b) percentiles are lower bounds`,
        );
      if (child.failures || child.unanswered)
        warnings.push(
          `(b, child readers) ${child.failures} sends failed, ${child.unanswered} unanswered`,
        );
      if (child.closed) warnings.push(`(b, child readers) ${child.closed} sockets closed`);
      if (floorRun.missing || floorRun.failures)
        warnings.push(
          `(b, floor) ${floorRun.missing} frames missing, ${floorRun.failures} sends failed`,
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
          busyChildReaders: child,
          busyFloor: floorRun,
        },
      };
    } finally {
      for (const c of conns) c.close(true);
      http.close();
      await Promise.all([server.dispose(), floor?.dispose()]);
    }
  },
};

/** The open-loop sender of (b): message i leaves at i ÷ rate seconds, answered or not. */
function openLoop(o: {
  http: HttpClient;
  path: string;
  total: number;
  rate: number;
  tokenFor: (i: number) => string;
  contentFor: (i: number, t0: number) => string;
  sentAt: Float64Array;
}) {
  const bPost = new Samples(o.total);
  const answered = new Uint8Array(o.total);
  let failures = 0;
  let cutAt = 0;
  const fire = (i: number): void => {
    const t0 = nowMs();
    o.sentAt[i] = t0;
    o.http
      .request('POST', o.path, { token: o.tokenFor(i), body: { content: o.contentFor(i, t0) } })
      .then((r) => {
        answered[i] = 1;
        if (r.status === 200) bPost.push(nowMs() - t0);
        else failures += 1;
      })
      // A request cut off when the run ends is counted as unanswered by the caller.
      .catch(() => void (answered[i] === 0 && cutAt === 0 && (failures += 1)));
  };
  // Open loop: messages leave on schedule whether or not earlier ones were answered, so a
  // slow server shows as latency rather than as a lower sending rate.
  const start = nowMs();
  let sent = 0;
  let end = 0;
  const done = new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(o.total, Math.floor(((nowMs() - start) * o.rate) / 1000));
      while (sent < due) fire(sent++);
      if (sent >= o.total) {
        clearInterval(tick);
        end = nowMs();
        resolve();
      }
    }, 2);
  });
  return {
    done,
    bPost,
    answered,
    seconds: () => (end - start) / 1000,
    failures: () => failures,
    cut: () => (cutAt = nowMs()),
  };
}

interface ChildResult {
  event: LatencySummary;
  post: LatencySummary;
  missing: number;
  outOfOrder: number;
  closed: number;
  unanswered: number;
  failures: number;
  rate: number;
  readerCpuCores: number;
}

const READER_PROCS = 2;

/**
 * (b) with the readers in child processes (issue 29, bench/lib/fanout-readers.ts): `tokens`
 * connect to `gatewayUrl` from READER_PROCS processes, then the same open-loop load is sent to
 * `origin` + `path`. Used for Parley and for the floor beside it.
 */
async function busyFromChildren(o: {
  label: string;
  origin: string;
  gatewayUrl: string;
  path: string;
  tokens: string[];
  senderToken: (i: number) => string;
  total: number;
  rate: number;
  drainS: number;
  log: (line: string) => void;
}): Promise<ChildResult> {
  const tmp = mkdtempSync(join(tmpdir(), 'parley-fanout-'));
  const children: ChildProcess[] = [];
  const http = new HttpClient(o.origin, 64);
  const ask = <T>(c: ChildProcess, k: string, extra: object = {}): Promise<T> =>
    new Promise((resolve) => {
      const on = (m: { k: string }) => {
        if (m.k !== k) return;
        c.off('message', on);
        resolve(m as T);
      };
      c.on('message', on);
      c.send({ k, ...extra });
    });
  try {
    const childFile = fileURLToPath(new URL('./lib/fanout-readers.ts', import.meta.url));
    const per = Math.ceil(o.tokens.length / READER_PROCS);
    const ups: Array<Promise<unknown>> = [];
    for (let p = 0; p < READER_PROCS; p++) {
      const slice = o.tokens.slice(p * per, (p + 1) * per);
      if (slice.length === 0) continue;
      const jobFile = join(tmp, `job-${p}.json`);
      writeFileSync(
        jobFile,
        JSON.stringify({ gatewayUrl: o.gatewayUrl, tokens: slice, heartbeatMs: 10_000 }),
      );
      const child = fork(childFile, [jobFile], {
        execArgv: ['--import', 'tsx'],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      track(child);
      children.push(child);
      ups.push(
        new Promise((resolve, reject) => {
          child.on('message', (m: { k: string; message?: string }) => {
            if (m.k === 'up') resolve(m);
            if (m.k === 'error') reject(new Error(m.message));
          });
          child.once('exit', (code) => reject(new Error(`reader process exited with ${code}`)));
        }),
      );
    }
    await Promise.all(ups);
    await sleep(500); // READY and the rest of the opening are over
    await Promise.all(children.map((c) => ask(c, 'started', { k: 'start', total: o.total })));
    o.log(`fanout (b): ${o.label}: ${o.tokens.length} readers in ${children.length} processes`);
    const pids = children.map((c) => c.pid).filter((p): p is number => p !== undefined);
    const readerCpu = (): number => pids.reduce((n, p) => n + cpuMs(p), 0);
    const cpu0 = readerCpu();
    const sentAt = new Float64Array(o.total).fill(Number.NaN);
    const sender = openLoop({
      http,
      path: o.path,
      total: o.total,
      rate: o.rate,
      tokenFor: o.senderToken,
      contentFor: (i, t0) => `b-${i}@${t0.toFixed(3)}`,
      sentAt,
    });
    await sender.done;
    const expected = o.total * o.tokens.length;
    const deadline = nowMs() + o.drainS * 1000;
    for (;;) {
      const got = await Promise.all(
        children.map((c) => ask<{ received: number }>(c, 'progress').then((m) => m.received)),
      );
      if (got.reduce((a, b) => a + b, 0) >= expected || nowMs() >= deadline) break;
      await sleep(20);
    }
    const cutAt = sender.cut();
    const readerCpuCores = (readerCpu() - cpu0) / Math.max(1, cutAt - (sentAt[0] ?? cutAt));
    const counts = await Promise.all(
      children.map((c) =>
        ask<{
          missing: number;
          outOfOrder: number;
          closed: number;
          latencies: number[];
        }>(c, 'count', { sentAt: Array.from(sentAt), cutAt }),
      ),
    );
    let unanswered = 0;
    for (let i = 0; i < o.total; i++) {
      if (sender.answered[i]) continue;
      unanswered += 1;
      sender.bPost.push(cutAt - (sentAt[i] ?? cutAt));
    }
    return {
      event: summarize(counts.flatMap((c) => c.latencies)),
      post: summarize(sender.bPost.values()),
      missing: counts.reduce((n, c) => n + c.missing, 0),
      outOfOrder: counts.reduce((n, c) => n + c.outOfOrder, 0),
      closed: counts.reduce((n, c) => n + c.closed, 0),
      unanswered,
      failures: sender.failures(),
      rate: Math.round(o.total / sender.seconds()),
      readerCpuCores,
    };
  } finally {
    for (const c of children) c.kill('SIGKILL');
    http.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}
