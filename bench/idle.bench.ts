import { startHello } from './lib/hello-server.js';
import { loadProblems, runLoad } from './lib/load.js';
import { buildSoloChannels, Operator } from './lib/operator.js';
import { baseEnv, spawnNode } from './lib/node-process.js';
import { startParley } from './lib/parley-server.js';
import { compiledBaseline, serverStartCommand } from './lib/server-build.js';
import { MiB, rssParts } from './lib/rss.js';
import { seconds, size } from './lib/sizes.js';
import { round, sleep } from './lib/stats.js';
import type { Benchmark, BenchContext, BenchOutcome, Figure } from './lib/types.js';

/**
 * idle: the server's resident memory (VmRSS) right after start, and after 100,000 messages
 * followed by 60 s of idleness. Targets: ≤ 100 MiB idle; no lasting growth (≤ 1.1x, both
 * against the RSS after start and against the RSS when the load ended). The minimal Fastify
 * server and node running an empty script, started the same way as the server (compiled, plain
 * node, the start script's V8 flags), are the same-run baselines for the start RSS.
 */
const TARGET_MIB = 100;
const TARGET_GROWTH = 1.1;

export const idleBench: Benchmark = {
  name: 'idle',
  title: 'server RSS after start and after 100,000 messages + 60 s idle (≤ 100 MiB, ≤ 1.1x)',
  async run(ctx: BenchContext): Promise<BenchOutcome> {
    const messages = size(ctx, 100_000, 300, 2000);
    const idleS = seconds(ctx, 60, 2, 5);
    const settleMs = ctx.smoke ? 500 : 3000;
    // A slow server must not stretch the whole run past its budget: the load stops here.
    const loadCapS = seconds(ctx, 190, 10, 10);
    const warnings: string[] = [];
    const [empty, hello, server] = await Promise.all([
      spawnNode({
        label: 'empty process',
        script: compiledBaseline('bench/servers/empty.ts'),
        nodeArgs: serverStartCommand().nodeArgs,
        env: baseEnv(),
        readyText: 'empty process ready',
      }),
      startHello(),
      startParley({ label: 'idle server', cpuProfDir: ctx.profileDir }),
    ]);
    try {
      await sleep(settleMs);
      const rssStart = server.proc.rss();
      const partsStart = rssParts(server.proc.pid);
      const rssHello = hello.proc.rss();
      const rssEmpty = empty.rss();
      await Promise.all([hello.proc.stop(), empty.stop()]);

      const op = new Operator(server);
      // Many small guilds with a bot each (one recipient per message): the load is about the
      // server holding on to memory, not about fan-out (fanout and send measure that).
      const solo = await buildSoloChannels(op, ctx.smoke ? 3 : 20);
      op.close();
      ctx.log(`idle: sending ${messages.toLocaleString('en-US')} messages (at most ${loadCapS} s)`);
      let next = 0;
      const load = await runLoad({
        origin: server.origin,
        path: '/api/v1/channels/0/messages',
        method: 'POST',
        body: JSON.stringify({ content: 'A benchmark message of ordinary length.' }),
        connections: 20,
        amount: messages,
        maxS: loadCapS,
        requestFor: () => {
          const s = solo[next++ % solo.length];
          return {
            path: `/api/v1/channels/${s?.channelId ?? 0}/messages`,
            headers: { authorization: `Bearer ${s?.bot.token ?? ''}` },
          };
        },
      });
      if (load.ok < messages)
        warnings.push(
          `only ${load.ok.toLocaleString('en-US')} of ${messages.toLocaleString('en-US')} messages ` +
            `were sent within ${loadCapS} s (the run stays bounded)`,
        );
      const rssLoadEnd = server.proc.rss();
      ctx.log(`idle: idle for ${idleS} s`);
      const series: number[] = [];
      const samples = Math.max(1, Math.round(idleS));
      for (let i = 0; i < samples; i++) {
        await sleep((idleS * 1000) / samples);
        series.push(server.proc.rss());
      }
      const rssIdle = series[series.length - 1] ?? rssLoadEnd;
      const partsIdle = rssParts(server.proc.pid);
      const mib = (b: number): number => round(b / MiB, 1);
      const figures: Figure[] = [
        {
          id: 'rss_start_mib',
          label: 'RSS after start',
          value: mib(rssStart),
          unit: 'MiB',
          target: { op: '<=', value: TARGET_MIB },
        },
        {
          id: 'rss_idle_mib',
          label: `RSS after ${load.ok.toLocaleString('en-US')} messages + ${idleS} s idle`,
          value: mib(rssIdle),
          unit: 'MiB',
          target: { op: '<=', value: TARGET_MIB },
        },
        {
          id: 'ratio_idle_start',
          label: 'RSS after load + idle / after start',
          value: round(rssIdle / rssStart, 3),
          unit: 'x',
          basis: `${mib(rssIdle)} MiB ÷ ${mib(rssStart)} MiB`,
          target: { op: '<=', value: TARGET_GROWTH },
        },
        {
          id: 'ratio_idle_load_end',
          label: 'RSS after idle / when the load ended',
          value: round(rssIdle / rssLoadEnd, 3),
          unit: 'x',
          basis: `${mib(rssIdle)} MiB ÷ ${mib(rssLoadEnd)} MiB`,
          target: { op: '<=', value: TARGET_GROWTH },
        },
        {
          id: 'ratio_start_hello',
          label: 'RSS after start / hello-world Fastify',
          value: round(rssStart / rssHello, 3),
          unit: 'x',
          basis: `${mib(rssStart)} MiB ÷ ${mib(rssHello)} MiB`,
        },
        {
          id: 'ratio_start_empty',
          label: 'RSS after start / node alone',
          value: round(rssStart / rssEmpty, 3),
          unit: 'x',
          basis: `${mib(rssStart)} MiB ÷ ${mib(rssEmpty)} MiB`,
        },
        {
          id: 'send_rps',
          label: 'send rate during the load',
          value: Math.round(load.reqPerSec),
          unit: 'msg/s',
        },
      ];
      const problem = loadProblems(load, 'sends');
      if (problem) warnings.push(problem);
      return {
        status: 'ok',
        figures,
        warnings,
        table: [
          {
            'node MiB': mib(rssEmpty),
            'hello MiB': mib(rssHello),
            'start MiB': mib(rssStart),
            'load end MiB': mib(rssLoadEnd),
            'idle max MiB': mib(Math.max(...series)),
            'after idle MiB': mib(rssIdle),
            'anon/file MiB start → idle':
              `${mib(partsStart.anon)}/${mib(partsStart.file)} → ` +
              `${mib(partsIdle.anon)}/${mib(partsIdle.file)}`,
            messages: load.ok,
          },
        ],
        details: {
          messages,
          idleS,
          rssEmpty,
          rssHello,
          rssStart,
          rssLoadEnd,
          rssIdle,
          rssPartsStart: partsStart,
          rssPartsIdle: partsIdle,
          idleSeries: series,
          load,
        },
      };
    } finally {
      await Promise.all([empty.stop(), hello.proc.stop(), server.dispose()]);
    }
  },
};
