import { connectGateway, type GatewayConnection } from './lib/gateway-client.js';
import { startFloor } from './lib/floor-server.js';
import { startHello } from './lib/hello-server.js';
import WebSocket from 'ws';
import { HttpClient } from './lib/http-client.js';
import { loadProblems, runLoad, type LoadResult } from './lib/load.js';
import { buildSoloChannels, buildWorld, Operator } from './lib/operator.js';
import { startParley } from './lib/parley-server.js';
import { cpuMs, settled } from './lib/rss.js';
import { seconds } from './lib/sizes.js';
import { round } from './lib/stats.js';
import type { Benchmark, BenchContext, BenchOutcome, Figure, TableRow } from './lib/types.js';

/**
 * send: POST /channels/:id/messages throughput at 10 and 50 connections, one bot per
 * connection (rate limits off), divided by a minimal Fastify hello-world measured in the same
 * run at the same connection count. Target: send/hello ≥ 0.5.
 * Cases: "channel", the issue's layout — one channel with all 50 bots in it (D34: every
 * message has 50 recipients, none connected); "channel, connected" — the same with every bot
 * holding a gateway connection, so each message is sent as 50 frames (read by this process, on
 * the same machine; issue 15: still one event row per message); "solo", each bot alone in a
 * guild of its own (one recipient); and "channel, PostgreSQL" — the channel layout on a server
 * using PostgreSQL (issue 15, target ≥ 0.2).
 * Floors (bench/servers/floor.ts): the least a durable send can cost on this stack and machine —
 * validate, write the same three rows, commit, answer — on SQLite, on PostgreSQL with one
 * transaction per request, and on PostgreSQL with the requests of a loop turn batched into one
 * transaction. Their ratios to hello-world bound what any implementation reaches here; Parley's
 * ratio to them is what is left to win. The SQLite floor again with D67's search index row in
 * its transaction (defined after the floor): the least a send costs under today's decisions.
 */
const CONNECTIONS = [10, 50] as const;
const BOTS = 50;
const TARGET_RATIO = 0.5;
const TARGET_CONNECTED = 0.25;
const TARGET_PG = 0.2;
// Issue 29: every target a ratio to a floor measured in the same run.
const TARGET_SEND_FLOOR = 0.6;
const TARGET_CONNECTED_FLOOR = 0.7;
const TARGET_PG_BATCH_FLOOR = 0.5;
const TARGET_PG_TX_FLOOR = 1.0;
const TARGET_PG_SQLITE_C50 = 0.5;
const BODY = JSON.stringify({ content: 'A benchmark message of ordinary length.' });
/**
 * Issue 24: the same message with a mention of another bot of the channel and a reply
 * (`messageReference`, D61): the server resolves the mention against the members (D62) and
 * reads the replied-to message for `referencedMessage` and the reply's ping.
 */
const richBody = (mentionUserId: number, messageId: number): string =>
  JSON.stringify({
    content: `<@${mentionUserId}> a benchmark reply of ordinary length.`,
    messageReference: { messageId },
  });

export const sendBench: Benchmark = {
  name: 'send',
  title: 'POST /channels/:id/messages throughput vs a Fastify hello-world (ratio ≥ 0.5)',
  async run(ctx: BenchContext): Promise<BenchOutcome> {
    const warmS = seconds(ctx, 1, 0.2, 0.5);
    const measureS = seconds(ctx, 5, 0.5, 1);
    const [hello, floor, searchFloor, pgFloor, pgBatchFloor, server, pgServer] = await Promise.all([
      startHello(),
      startFloor('sqlite'),
      startFloor('sqlite-search'),
      startFloor('pg'),
      startFloor('pg-batch'),
      startParley({ label: 'send server', cpuProfDir: ctx.profileDir }),
      startParley({ label: 'send server (PostgreSQL)', postgres: true }),
    ]);
    const servers = [hello, floor, searchFloor, pgFloor, pgBatchFloor, server, pgServer].map(
      (s) => s.proc.pid,
    );
    try {
      const op = new Operator(server);
      // One bot per connection (a smoke run shares a few between connections).
      ctx.log('send: setting up');
      const bots = ctx.smoke ? 5 : BOTS;
      const world = await buildWorld(op, bots);
      const solo = await buildSoloChannels(op, bots);
      op.close();
      const pgOp = new Operator(pgServer);
      const pgWorld = await buildWorld(pgOp, bots);
      pgOp.close();
      const path = `/api/v1/channels/${world.channelId}/messages`;
      // One request by hand first: a broken send fails loudly instead of measuring 4xx speed.
      // The floors too: a broken floor would otherwise report a ratio of 0 from its errors.
      for (const [origin, token] of [
        [server.origin, world.bots[0]?.token],
        [floor.origin, 'floor-0'],
        [searchFloor.origin, 'floor-0'],
        [pgFloor.origin, 'floor-0'],
        [pgBatchFloor.origin, 'floor-0'],
      ] as const) {
        const probe = new HttpClient(origin);
        await probe.expect('POST', path, 200, { token, body: JSON.parse(BODY) });
        probe.close();
      }
      // Issue 24: the rich variant replies to one message and mentions the second bot.
      const first = new HttpClient(server.origin);
      const answered = await first.expect('POST', path, 200, {
        token: world.bots[0]?.token,
        body: { content: 'the message every rich send replies to' },
      });
      const RICH = richBody(
        world.bots[1 % world.bots.length]?.userId ?? 0,
        (answered.body as { id: number }).id,
      );
      const richProbe = await first.expect('POST', path, 200, {
        token: world.bots[0]?.token,
        body: JSON.parse(RICH),
      });
      const probed = richProbe.body as { mentions?: number[]; referencedMessage?: unknown };
      if (!probed.referencedMessage || !probed.mentions?.length)
        throw new Error(`the rich send resolved no reply or mention: ${JSON.stringify(probed)}`);
      first.close();

      const sendLoad = (
        connections: number,
        durationS: number,
        body: string = BODY,
      ): Promise<LoadResult> =>
        runLoad({
          origin: server.origin,
          path,
          method: 'POST',
          body,
          connections,
          durationS,
          connectionHeaders: (i) => ({
            authorization: `Bearer ${world.bots[i % world.bots.length]?.token ?? ''}`,
          }),
        });
      const pgLoad = (connections: number, durationS: number): Promise<LoadResult> =>
        runLoad({
          origin: pgServer.origin,
          path: `/api/v1/channels/${pgWorld.channelId}/messages`,
          method: 'POST',
          body: BODY,
          connections,
          durationS,
          connectionHeaders: (i) => ({
            authorization: `Bearer ${pgWorld.bots[i % pgWorld.bots.length]?.token ?? ''}`,
          }),
        });
      let next = 0;
      const soloLoad = (connections: number, durationS: number): Promise<LoadResult> =>
        runLoad({
          origin: server.origin,
          path,
          method: 'POST',
          body: BODY,
          connections,
          durationS,
          // Round-robin over the bots, each to its own channel.
          requestFor: () => {
            const s = solo[next++ % solo.length];
            return {
              path: `/api/v1/channels/${s?.channelId ?? 0}/messages`,
              headers: { authorization: `Bearer ${s?.bot.token ?? ''}` },
            };
          },
        });
      const helloLoad = (connections: number, durationS: number): Promise<LoadResult> =>
        runLoad({ origin: hello.origin, path: '/', connections, durationS });
      const floorLoad =
        (origin: string) =>
        (connections: number, durationS: number): Promise<LoadResult> =>
          runLoad({
            origin,
            path,
            method: 'POST',
            body: BODY,
            connections,
            durationS,
            connectionHeaders: (i) => ({ authorization: `Bearer floor-${i % bots}` }),
          });
      // The floor's fan-out: 50 bare sockets read every frame (counted, as the bots' are).
      let floorFrames = 0;
      const floorConnectedLoad = async (
        connections: number,
        durationS: number,
        origin: string = floor.origin,
      ) => {
        const socks: WebSocket[] = [];
        try {
          for (let i = 0; i < bots; i++) {
            const ws = new WebSocket(`${origin.replace('http', 'ws')}/gateway`);
            ws.on('message', () => {
              floorFrames++;
            });
            await new Promise<void>((resolve, reject) => {
              ws.once('open', () => resolve());
              ws.once('error', reject);
            });
            socks.push(ws);
          }
          return await floorLoad(origin)(connections, durationS);
        } finally {
          for (const ws of socks) ws.close();
        }
      };
      // The same load while every bot of the channel is connected to the gateway. Issue 29: the
      // bots count the frames they read, as the floor's sockets do, reading only a frame's type
      // and `s` (gateway-client.ts onDispatchHead) — both load generators then cost this process
      // about the same per frame. `parse`: the form before (every frame decoded and parsed as
      // JSON, which cost this process 0.45 ms per send against the floor readers' 0.25, on the
      // same two cores as the server), kept beside it for one release and for issue 24's
      // comparison with the ratios measured that way.
      let frames = 0;
      const problems: string[] = [];
      const connectedLoad = async (
        connections: number,
        durationS: number,
        body = BODY,
        parse = false,
      ) => {
        const conns: GatewayConnection[] = [];
        try {
          for (const bot of world.bots)
            conns.push(
              await connectGateway(server.gatewayUrl, bot.token, {
                heartbeat: true,
                ...(parse
                  ? { onDispatch: () => void frames++ }
                  : { onDispatchHead: () => void frames++ }),
              }),
            );
          const before = frames;
          const r = await sendLoad(connections, durationS, body);
          // Every answered send is a frame to each bot (the last few may still be on the way).
          const expected = r.ok * conns.length;
          if (frames - before < 0.9 * expected)
            problems.push(
              `connected: the bots read ${frames - before} frames for ${r.ok} sends to ${conns.length} of them`,
            );
          return r;
        } finally {
          // 1000 ends the sessions (D31): the next "channel" round owes them nothing.
          for (const c of conns) c.close();
          // D28: a bot's next connection must come at least 1 s after this one.
          await new Promise((r) => setTimeout(r, 1100));
        }
      };

      const figures: Figure[] = [];
      const table: TableRow[] = [];
      const details: Record<string, unknown> = { warmS, measureS, bots };
      // Interleaved (hello, send, solo at one connection count, then the next): drift on a
      // shared machine hits baseline and subject alike.
      for (const c of CONNECTIONS) {
        const results: Array<[string, LoadResult, number]> = [];
        for (const [what, load, pid] of [
          ['hello', helloLoad, hello.proc.pid],
          ['send (channel)', sendLoad, server.proc.pid],
          ['send (solo)', soloLoad, server.proc.pid],
          ['send (channel, connected)', connectedLoad, server.proc.pid],
          ['send (channel, PostgreSQL)', pgLoad, pgServer.proc.pid],
          ['floor (SQLite)', floorLoad(floor.origin), floor.proc.pid],
          ['floor (SQLite, 50 sockets)', floorConnectedLoad, floor.proc.pid],
          ['floor (PostgreSQL)', floorLoad(pgFloor.origin), pgFloor.proc.pid],
          ['floor (PostgreSQL, batched)', floorLoad(pgBatchFloor.origin), pgBatchFloor.proc.pid],
          // Issue 24: a mention and a reply, with nobody connected and with the 50 bots connected
          [
            'send (channel, mention + reply)',
            (n: number, d: number) => sendLoad(n, d, RICH),
            server.proc.pid,
          ],
          [
            'send (channel, connected, mention + reply, bots parse)',
            (n: number, d: number) => connectedLoad(n, d, RICH, true),
            server.proc.pid,
          ],
          // The connected case as measured before issue 29's reader change (see connectedLoad).
          [
            'send (channel, connected, bots parse)',
            (n: number, d: number) => connectedLoad(n, d, BODY, true),
            server.proc.pid,
          ],
          // D67 asks every send to write its search index row in its own transaction; the floor
          // was defined before (issue 15). The same floor with that row: the least a send costs
          // under today's decisions.
          ['floor (SQLite, search index)', floorLoad(searchFloor.origin), searchFloor.proc.pid],
          [
            'floor (SQLite, search index, 50 sockets)',
            (n: number, d: number) => floorConnectedLoad(n, d, searchFloor.origin),
            searchFloor.proc.pid,
          ],
        ] as const) {
          ctx.log(`send: ${c} connections: ${what}`);
          // all seven servers run through every case: the others quiet first (lib/rss.ts)
          await settled(servers.filter((s) => s !== pid));
          await load(c, warmS);
          const cpu0 = cpuMs(pid);
          const r = await load(c, measureS);
          // Server CPU per answered request: steadier than req/s when the machine is shared.
          const cpuPerReq = (cpuMs(pid) - cpu0) / Math.max(1, r.ok);
          results.push([what, r, cpuPerReq]);
          table.push({
            case: what,
            connections: c,
            'req/s': Math.round(r.reqPerSec),
            'p50 ms': round(r.latency.p50, 3),
            'p99 ms': round(r.latency.p99, 3),
            'CPU ms/req': round(cpuPerReq, 3),
            errors: r.non2xx + r.errors + r.timeouts,
          });
          const p = loadProblems(r, `${what} @${c}`);
          if (p) problems.push(p);
        }
        const [h, s, o, l, p, f, fc, pf, bf] = results.map(([, r]) => r) as [
          LoadResult,
          LoadResult,
          LoadResult,
          LoadResult,
          LoadResult,
          LoadResult,
          LoadResult,
          LoadResult,
          LoadResult,
        ];
        const [hCpu, sCpu, oCpu, lCpu, pCpu, fCpu, fcCpu, pfCpu, bfCpu] = results.map(
          ([, , cpu]) => cpu,
        ) as [number, number, number, number, number, number, number, number, number];
        details[`c${c}`] = {
          hello: { ...h, cpuMsPerReq: hCpu },
          send: { ...s, cpuMsPerReq: sCpu },
          solo: { ...o, cpuMsPerReq: oCpu },
          connected: { ...l, cpuMsPerReq: lCpu },
          postgres: { ...p, cpuMsPerReq: pCpu },
          floor: { ...f, cpuMsPerReq: fCpu },
          floorConnected: { ...fc, cpuMsPerReq: fcCpu },
          floorPg: { ...pf, cpuMsPerReq: pfCpu },
          floorPgBatched: { ...bf, cpuMsPerReq: bfCpu },
        };
        const ratio = (a: LoadResult, b: LoadResult): number =>
          round(a.reqPerSec / Math.max(1, b.reqPerSec), 3);
        const rich = results[9]![1];
        const richConnected = results[10]![1];
        const parsedConnected = results[11]![1];
        const fs = results[12]![1];
        const fsc = results[13]![1];
        details[`c${c}`] = {
          ...(details[`c${c}`] as object),
          rich: { ...rich, cpuMsPerReq: results[9]![2] },
          richConnected: { ...richConnected, cpuMsPerReq: results[10]![2] },
          connectedParsing: { ...parsedConnected, cpuMsPerReq: results[11]![2] },
          floorSearch: { ...fs, cpuMsPerReq: results[12]![2] },
          floorSearchConnected: { ...fsc, cpuMsPerReq: results[13]![2] },
        };
        figures.push(
          {
            id: `ratio_c${c}`,
            label: `send/hello req/s @${c} conns`,
            value: round(s.reqPerSec / h.reqPerSec, 3),
            unit: 'x',
            basis: `send ${Math.round(s.reqPerSec)} req/s ÷ hello ${Math.round(h.reqPerSec)} req/s`,
            target: { op: '>=', value: TARGET_RATIO },
          },
          {
            id: `ratio_solo_c${c}`,
            label: `solo send/hello req/s @${c} conns`,
            value: round(o.reqPerSec / h.reqPerSec, 3),
            unit: 'x',
            basis: `solo ${Math.round(o.reqPerSec)} req/s ÷ hello ${Math.round(h.reqPerSec)} req/s`,
          },
          {
            id: `ratio_connected_c${c}`,
            label: `connected send/hello req/s @${c} conns`,
            value: round(l.reqPerSec / h.reqPerSec, 3),
            unit: 'x',
            basis: `50 bots connected: ${Math.round(l.reqPerSec)} req/s ÷ hello ${Math.round(h.reqPerSec)} req/s`,
            target: { op: '>=', value: TARGET_CONNECTED },
          },
          {
            id: `ratio_pg_c${c}`,
            label: `PostgreSQL send/hello req/s @${c} conns`,
            value: round(p.reqPerSec / h.reqPerSec, 3),
            unit: 'x',
            basis: `PostgreSQL ${Math.round(p.reqPerSec)} req/s ÷ hello ${Math.round(h.reqPerSec)} req/s`,
            target: { op: '>=', value: TARGET_PG },
          },
          {
            id: `cpu_ratio_c${c}`,
            label: `hello/send server CPU per request @${c} conns`,
            // (CPU is counted in 10 ms ticks: a tiny smoke run may see none)
            value: sCpu > 0 ? round(hCpu / sCpu, 3) : 0,
            unit: 'x',
            basis: `hello ${round(hCpu, 3)} ms ÷ send ${round(sCpu, 3)} ms`,
          },
          {
            id: `floor_c${c}`,
            label: `floor (SQLite)/hello req/s @${c} conns`,
            value: ratio(f, h),
            unit: 'x',
            basis: `the least a durable send costs: ${Math.round(f.reqPerSec)} req/s ÷ hello ${Math.round(h.reqPerSec)} req/s`,
          },
          {
            id: `send_floor_c${c}`,
            label: `send/floor (SQLite) req/s @${c} conns`,
            value: ratio(s, f),
            unit: 'x',
            basis: `send ${Math.round(s.reqPerSec)} req/s ÷ floor ${Math.round(f.reqPerSec)} req/s`,
            target: { op: '>=', value: TARGET_SEND_FLOOR },
          },
          {
            id: `floor_connected_c${c}`,
            label: `floor (SQLite, 50 sockets)/hello req/s @${c} conns`,
            value: ratio(fc, h),
            unit: 'x',
            basis: `${Math.round(fc.reqPerSec)} req/s ÷ hello ${Math.round(h.reqPerSec)} req/s`,
          },
          {
            id: `send_floor_connected_c${c}`,
            label: `connected send/floor (SQLite, 50 sockets) req/s @${c} conns`,
            value: ratio(l, fc),
            unit: 'x',
            basis: `send ${Math.round(l.reqPerSec)} req/s ÷ floor ${Math.round(fc.reqPerSec)} req/s`,
            target: { op: '>=', value: TARGET_CONNECTED_FLOOR },
          },
          {
            id: `send_floor_connected_parse_c${c}`,
            label: `connected send, bots parsing every frame/floor (SQLite, 50 sockets) req/s @${c} conns`,
            value: ratio(parsedConnected, fc),
            unit: 'x',
            basis: `the form before issue 29's reader change: send ${Math.round(parsedConnected.reqPerSec)} req/s ÷ floor ${Math.round(fc.reqPerSec)} req/s`,
          },
          {
            id: `floor_pg_c${c}`,
            label: `floor (PostgreSQL, a transaction per send)/hello req/s @${c} conns`,
            value: ratio(pf, h),
            unit: 'x',
            basis: `${Math.round(pf.reqPerSec)} req/s ÷ hello ${Math.round(h.reqPerSec)} req/s`,
          },
          {
            id: `floor_pg_batch_c${c}`,
            label: `floor (PostgreSQL, batched)/hello req/s @${c} conns`,
            value: ratio(bf, h),
            unit: 'x',
            basis: `${Math.round(bf.reqPerSec)} req/s ÷ hello ${Math.round(h.reqPerSec)} req/s`,
          },
          {
            id: `send_floor_pg_c${c}`,
            label: `PostgreSQL send/floor (a transaction per send) req/s @${c} conns`,
            value: ratio(p, pf),
            unit: 'x',
            basis: `send ${Math.round(p.reqPerSec)} req/s ÷ floor ${Math.round(pf.reqPerSec)} req/s`,
            target: { op: '>=', value: TARGET_PG_TX_FLOOR },
          },
          {
            id: `send_floor_pg_batch_c${c}`,
            label: `PostgreSQL send/floor (batched) req/s @${c} conns`,
            value: ratio(p, bf),
            unit: 'x',
            basis: `send ${Math.round(p.reqPerSec)} req/s ÷ floor ${Math.round(bf.reqPerSec)} req/s`,
            target: { op: '>=', value: TARGET_PG_BATCH_FLOOR },
          },
          {
            id: `pg_sqlite_c${c}`,
            label: `PostgreSQL send/SQLite send req/s @${c} conns`,
            value: ratio(p, s),
            unit: 'x',
            basis: `PostgreSQL ${Math.round(p.reqPerSec)} req/s ÷ SQLite ${Math.round(s.reqPerSec)} req/s`,
            // At 10 connections even the batched floor stays under half of SQLite's send
            // (issue 29): reported, no target.
            ...(c === 50 ? { target: { op: '>=' as const, value: TARGET_PG_SQLITE_C50 } } : {}),
          },
          {
            id: `floor_pg_batch_sqlite_c${c}`,
            label: `floor (PostgreSQL, batched)/SQLite send req/s @${c} conns`,
            value: ratio(bf, s),
            unit: 'x',
            basis: `${Math.round(bf.reqPerSec)} req/s ÷ SQLite send ${Math.round(s.reqPerSec)} req/s`,
          },
          {
            id: `send_floor_rich_c${c}`,
            label: `mention + reply send/floor (SQLite) req/s @${c} conns`,
            value: ratio(rich, f),
            unit: 'x',
            basis: `send with a mention and a reply ${Math.round(rich.reqPerSec)} req/s ÷ floor ${Math.round(f.reqPerSec)} req/s`,
          },
          {
            id: `send_floor_connected_rich_c${c}`,
            label: `connected mention + reply send (bots parsing every frame)/floor (SQLite, 50 sockets) req/s @${c} conns`,
            value: ratio(richConnected, fc),
            unit: 'x',
            basis: `send with a mention and a reply, read as before issue 29's reader change, ${Math.round(richConnected.reqPerSec)} req/s ÷ floor ${Math.round(fc.reqPerSec)} req/s`,
          },
          {
            id: `floor_search_c${c}`,
            label: `floor (SQLite, search index)/floor (SQLite) req/s @${c} conns`,
            value: ratio(fs, f),
            unit: 'x',
            basis: `what D67's index row costs the floor: ${Math.round(fs.reqPerSec)} req/s ÷ ${Math.round(f.reqPerSec)} req/s`,
          },
          {
            id: `send_floor_search_c${c}`,
            label: `send/floor (SQLite, search index) req/s @${c} conns`,
            value: ratio(s, fs),
            unit: 'x',
            basis: `send ${Math.round(s.reqPerSec)} req/s ÷ floor with D67's index ${Math.round(fs.reqPerSec)} req/s`,
          },
          {
            id: `send_floor_search_rich_c${c}`,
            label: `mention + reply send/floor (SQLite, search index) req/s @${c} conns`,
            value: ratio(rich, fs),
            unit: 'x',
            basis: `send with a mention and a reply ${Math.round(rich.reqPerSec)} req/s ÷ floor with D67's index ${Math.round(fs.reqPerSec)} req/s`,
          },
          {
            id: `send_floor_search_connected_c${c}`,
            label: `connected send/floor (SQLite, search index, 50 sockets) req/s @${c} conns`,
            value: ratio(l, fsc),
            unit: 'x',
            basis: `send ${Math.round(l.reqPerSec)} req/s ÷ floor with D67's index ${Math.round(fsc.reqPerSec)} req/s`,
          },
          {
            id: `send_floor_search_connected_rich_c${c}`,
            label: `connected mention + reply send (bots parsing every frame)/floor (SQLite, search index, 50 sockets) req/s @${c} conns`,
            value: ratio(richConnected, fsc),
            unit: 'x',
            basis: `${Math.round(richConnected.reqPerSec)} req/s ÷ floor with D67's index ${Math.round(fsc.reqPerSec)} req/s`,
          },
          {
            id: `rich_plain_c${c}`,
            label: `mention + reply send/plain send req/s @${c} conns`,
            value: ratio(rich, s),
            unit: 'x',
            basis: `${Math.round(rich.reqPerSec)} req/s ÷ plain ${Math.round(s.reqPerSec)} req/s`,
          },
          {
            id: `pg_rps_c${c}`,
            label: `PostgreSQL send req/s @${c} conns`,
            value: Math.round(p.reqPerSec),
            unit: 'req/s',
          },
          {
            id: `send_rps_c${c}`,
            label: `send req/s @${c} conns`,
            value: Math.round(s.reqPerSec),
            unit: 'req/s',
          },
          {
            id: `send_p50_c${c}`,
            label: `send p50 @${c} conns`,
            value: round(s.latency.p50, 3),
            unit: 'ms',
          },
          {
            id: `send_p99_c${c}`,
            label: `send p99 @${c} conns`,
            value: round(s.latency.p99, 3),
            unit: 'ms',
          },
        );
      }
      details['framesReceived'] = frames;
      details['floorFramesReceived'] = floorFrames;
      return { status: 'ok', figures, table, details, warnings: problems };
    } finally {
      await Promise.all([
        hello.proc.stop(),
        floor.dispose(),
        searchFloor.dispose(),
        pgFloor.dispose(),
        pgBatchFloor.dispose(),
        server.dispose(),
        pgServer.dispose(),
      ]);
    }
  },
};
