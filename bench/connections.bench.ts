import { connectGateway, type GatewayConnection } from './lib/gateway-client.js';
import { mapLimit } from './lib/http-client.js';
import { Operator } from './lib/operator.js';
import { startParley } from './lib/parley-server.js';
import { openFileLimit, MiB } from './lib/rss.js';
import { seconds, size } from './lib/sizes.js';
import { nowMs, round, sleep, summarize } from './lib/stats.js';
import type { Benchmark, BenchContext, BenchOutcome, Figure } from './lib/types.js';

/**
 * connections: 10,000 idle gateway connections on one node, each heartbeating.
 * Figures: the server's RSS growth per connection (target ≤ 20 KiB), and HELLO→READY (and
 * upgrade request→READY) of the last connection, opened alone once the others are up, against
 * the same time for the first ones on an empty server (the same-run baseline).
 * D29 allows one connection per bot, so there is one bot per connection (3 per owner).
 */
const HEARTBEAT_MS = 10_000;

export const connectionsBench: Benchmark = {
  name: 'connections',
  title: '10,000 idle heartbeating gateway connections: RSS per connection (≤ 20 KiB)',
  async run(ctx: BenchContext): Promise<BenchOutcome> {
    const warnings: string[] = [];
    let count = size(ctx, 10_000, 40, 100);
    // Every client socket is a file descriptor here and another in the server.
    const fdRoom = openFileLimit() - 200;
    if (count > fdRoom) {
      warnings.push(`open-file limit allows ${fdRoom} connections, not ${count} (raise ulimit -n)`);
      count = fdRoom;
    }
    const firstCount = Math.min(10, Math.max(1, Math.floor(count / 10)));
    // Long enough that every connection heartbeats at least once (first beat within one interval).
    const holdS = seconds(ctx, 12, 1.5, 3);
    const server = await startParley({
      label: 'connections server',
      cpuProfDir: ctx.profileDir,
      // D30/D32: a shorter interval (default 30 s) so the hold sees every client beat at least
      // once; heartbeat frequency does not change what a connection keeps in memory.
      env: { PARLEY_HEARTBEAT_MS: String(ctx.smoke ? 1000 : HEARTBEAT_MS) },
    });
    const conns: GatewayConnection[] = [];
    try {
      ctx.log(`connections: creating ${count} bots`);
      const op = new Operator(server, 16);
      const setupStart = nowMs();
      const bots = await op.bots(count, 16);
      op.close();
      const setupS = (nowMs() - setupStart) / 1000;
      let dropped = 0;
      const connect = (token: string): Promise<GatewayConnection> =>
        connectGateway(server.gatewayUrl, token, {
          heartbeat: true,
          timeoutMs: 60_000,
          onClose: () => void (dropped += 1),
        });

      // A settled server before the first connection: that RSS is the baseline.
      await sleep(ctx.smoke ? 200 : 2000);
      const rssBefore = server.proc.rss();

      // The first connections one at a time, on a server holding none: the baseline for the last.
      for (const bot of bots.slice(0, firstCount)) conns.push(await connect(bot.token));
      const first = summarize(conns.map((c) => c.helloToReadyMs));
      const firstOpen = summarize(conns.map((c) => c.openToReadyMs));

      ctx.log(`connections: opening ${count - firstCount - 1} more`);
      const bulkStart = nowMs();
      const middle = bots.slice(firstCount, count - 1);
      let opened = 0;
      await mapLimit(middle, 100, async (bot) => {
        conns.push(await connect(bot.token));
        if (++opened % 2000 === 0) ctx.log(`connections: ${opened + firstCount} open`);
      });
      const bulkS = (nowMs() - bulkStart) / 1000;

      // The last one alone, with all the others held open.
      const lastBot = bots[count - 1];
      if (!lastBot) throw new Error('no bot for the last connection');
      const last = await connect(lastBot.token);
      conns.push(last);

      ctx.log(`connections: holding ${conns.length} for ${holdS} s`);
      await sleep(holdS * 1000);
      const rssAfter = server.proc.rss();
      const acks = conns.reduce((n, c) => n + c.acks, 0);
      const beating = conns.filter((c) => c.acks > 0).length;
      const open = conns.length - dropped;
      const perConnKiB = (rssAfter - rssBefore) / conns.length / 1024;

      const figures: Figure[] = [
        {
          id: 'kib_per_conn',
          label: 'server RSS growth per connection',
          value: round(perConnKiB, 2),
          unit: 'KiB/conn',
          basis: `(${round(rssAfter / MiB, 1)} − ${round(rssBefore / MiB, 1)} MiB) ÷ ${conns.length}`,
          target: { op: '<=', value: 20 },
        },
        {
          id: 'last_hello_ready_ms',
          label: `HELLO→READY of connection #${conns.length}`,
          value: round(last.helloToReadyMs, 3),
          unit: 'ms',
        },
        {
          id: 'last_open_ready_ms',
          label: `upgrade request→READY of connection #${conns.length}`,
          value: round(last.openToReadyMs, 3),
          unit: 'ms',
        },
        {
          id: 'ratio_last_first',
          label: 'upgrade request→READY last / first',
          value: round(last.openToReadyMs / firstOpen.p50, 3),
          unit: 'x',
          basis: `${round(last.openToReadyMs, 3)} ms ÷ median of the first ${firstCount} ${round(firstOpen.p50, 3)} ms`,
        },
        {
          id: 'connect_rate',
          label: 'connections opened per second (100 at a time)',
          value: Math.round(middle.length / bulkS),
          unit: 'conn/s',
        },
        {
          id: 'dropped',
          label: 'connections closed by the server while idle',
          value: dropped,
          unit: 'count',
          target: { op: '<=', value: 0 },
        },
      ];
      if (beating < open) warnings.push(`${open - beating} open connections got no HEARTBEAT_ACK`);
      return {
        status: 'ok',
        figures,
        warnings,
        table: [
          {
            connections: conns.length,
            'RSS before MiB': round(rssBefore / MiB, 1),
            'RSS after MiB': round(rssAfter / MiB, 1),
            'KiB/conn': round(perConnKiB, 2),
            'first H→R ms': round(first.p50, 3),
            'last H→R ms': round(last.helloToReadyMs, 3),
            'first open→R ms': round(firstOpen.p50, 3),
            'last open→R ms': round(last.openToReadyMs, 3),
            'heartbeat acks': acks,
          },
        ],
        details: {
          count: conns.length,
          heartbeatMs: ctx.smoke ? 1000 : HEARTBEAT_MS,
          holdS,
          setupS: round(setupS, 1),
          bulkS: round(bulkS, 1),
          rssBefore,
          rssAfter,
          firstHelloToReady: first,
          firstOpenToReady: firstOpen,
          dropped,
          acks,
          beating,
          clientRss: process.memoryUsage.rss(),
        },
      };
    } finally {
      for (const c of conns) c.close(true);
      await server.dispose();
    }
  },
};
