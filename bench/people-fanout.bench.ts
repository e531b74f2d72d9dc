import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { track } from './lib/children.js';
import { connectGateway, type GatewayConnection } from './lib/gateway-client.js';
import { HttpClient } from './lib/http-client.js';
import { Operator } from './lib/operator.js';
import { startParley } from './lib/parley-server.js';
import { seedPeople } from './lib/seed-people.js';
import { cpuMs, MiB, openFileLimit } from './lib/rss.js';
import { seconds, size } from './lib/sizes.js';
import { nowMs, round, Samples, sleep, summarize, type LatencySummary } from './lib/stats.js';
import type { Benchmark, BenchContext, BenchOutcome, Figure } from './lib/types.js';

/**
 * people-fanout (issue 11, D51): 10,000 people connected to one guild on one node; one person
 * sends 20 messages/s for 30 s (open loop). Figures: send→receive latency at the 10,000th
 * socket (p50/p99, target p99 ≤ 250 ms) against the same measure with one person alone on the
 * gateway (the same-run baseline: first phase, 5 s at 20/s before the others connect),
 * server RSS per connected person (target ≤ 24 KiB) after the load (replay buffers full), and
 * messages that did not reach every socket.
 *
 * Sockets 1…9,999 live in CLIENT_PROCS child processes (fork: the same process tree, loopback
 * only) on a bare WebSocket client that counts frames without decoding them (lib/light-ws.ts), so
 * the two cores go to the server; socket #10,000 is a full client in this process, opened last.
 */
const CLIENT_PROCS = 3;
const RATE = 20;
const HEARTBEAT_MS = 30_000;
/** How often the stand-in clients read (lib/light-ws.ts batchMs); socket #10,000 reads at once. */
const CLIENT_BATCH_MS = 2000;

export const peopleFanoutBench: Benchmark = {
  name: 'people-fanout',
  title:
    '10,000 people in one guild, 20 msg/s for 30 s: latency at the 10,000th socket, RSS per person',
  // 10,000 connections take minutes to open on a shared machine before the 30 s of load.
  watchdogS: 900,
  async run(ctx: BenchContext): Promise<BenchOutcome> {
    const warnings: string[] = [];
    let people = size(ctx, 10_000, 40, 50);
    const fdRoom = openFileLimit() - 300;
    if (people > fdRoom) {
      warnings.push(
        `open-file limit allows ${fdRoom} connections, not ${people} (raise ulimit -n)`,
      );
      people = fdRoom;
    }
    const sendS = seconds(ctx, 30, 2, 2);
    const baseS = seconds(ctx, 5, 1, 1);
    const server = await startParley({
      label: 'people-fanout server',
      cpuProfDir: ctx.profileDir,
      env: { PARLEY_HEARTBEAT_MS: String(HEARTBEAT_MS) },
    });
    const http = new HttpClient(server.origin, 8);
    const children: ChildProcess[] = [];
    const tmp = mkdtempSync(join(tmpdir(), 'parley-people-fanout-'));
    let measured: GatewayConnection | undefined;
    let first: GatewayConnection | undefined;
    try {
      // Data through the operator API (D41): a sender, a guild with one channel, `people` members
      // each with a session token.
      const op = new Operator(server, 16);
      const senderId = await op.user('sender');
      const senderToken = await op.session(senderId);
      const guildId = await op.guild('Big', senderId);
      const channelId = await op.channel(guildId, 'general');
      op.close();
      // The people themselves go straight into the database (three operator requests each would
      // take minutes at 10,000): users, session tokens, memberships (lib/seed-people.ts).
      ctx.log(`people-fanout: writing ${people} people into the database`);
      const setupStart = nowMs();
      const tokens = seedPeople(server.dbFile, guildId, people);
      const setupS = (nowMs() - setupStart) / 1000;
      const firstToken = tokens[0] as string;
      const lastToken = tokens[people - 1] as string;
      const others = tokens.slice(1, people - 1);

      // Latency at one full client: content → time the POST was started.
      const sentAt = new Map<string, number>();
      let phase: Samples | undefined;
      let lateOrLost = 0;
      let lastArrival = 0;
      let phaseStart = 0;
      let worstBySecond: number[] = [];
      const onMessage = (content: string, at: number): void => {
        const t0 = sentAt.get(content);
        if (t0 === undefined) return;
        sentAt.delete(content);
        lastArrival = at;
        phase?.push(at - t0);
        // The worst latency per second of sending (where in the phase the tail comes from).
        const sec = Math.floor((t0 - phaseStart) / 1000);
        worstBySecond[sec] = Math.max(worstBySecond[sec] ?? 0, Math.round(at - t0));
      };
      const path = `/api/v1/channels/${channelId}/messages`;
      const runPhase = async (
        label: string,
        durationS: number,
      ): Promise<{
        lat: LatencySummary;
        worstBySecond: number[];
        post: LatencySummary;
        sent: number;
        failed: number;
        spanS: number;
      }> => {
        const count = Math.round(durationS * RATE);
        phase = new Samples(count);
        // The POST's own answer time: how long the server took to take the message (its loop).
        const answered = new Samples(count);
        worstBySecond = [];
        let failed = 0;
        const start = nowMs();
        phaseStart = start;
        const posts: Array<Promise<void>> = [];
        for (let i = 0; i < count; i++) {
          const due = start + (i * 1000) / RATE;
          const wait = due - nowMs();
          if (wait > 0) await sleep(wait);
          const content = `${label}-${i}`;
          const t0 = nowMs();
          sentAt.set(content, t0);
          posts.push(
            http
              .expect('POST', path, 200, { token: senderToken, body: { content } })
              .then(() => void answered.push(nowMs() - t0))
              .catch(() => void (failed += 1)),
          );
        }
        await Promise.all(posts);
        // What has not arrived 5 s after the last send counts as lost.
        const deadline = nowMs() + 5000;
        while (phase.length < count - failed && nowMs() < deadline) await sleep(20);
        lateOrLost += count - failed - phase.length;
        const lat = summarize(phase.values());
        sentAt.clear();
        return {
          lat,
          worstBySecond: Array.from(worstBySecond, (v) => v ?? 0),
          post: summarize(answered.values()),
          sent: count,
          failed,
          spanS: (lastArrival - start) / 1000,
        };
      };
      const fullClient = (token: string, counts: () => boolean): Promise<GatewayConnection> =>
        connectGateway(server.gatewayUrl, token, {
          heartbeat: true,
          timeoutMs: 60_000,
          onDispatch: (f, at) => {
            if (f.t === 'MESSAGE_CREATE' && counts()) onMessage(String(f.d?.content), at);
          },
        });
      let baselineDone = false;
      // Baseline: one person alone on the gateway (it stays connected: person #1).
      first = await fullClient(firstToken, () => !baselineDone);
      ctx.log(`people-fanout: baseline, ${baseS} s at ${RATE}/s with one person connected`);
      const base = await runPhase('base', baseS);
      // From now on only the last socket's arrivals count.
      baselineDone = true;

      await sleep(ctx.smoke ? 200 : 2000);
      const rssBefore = server.proc.rss();

      // Everyone else, from child processes, 100 connections at a time each.
      ctx.log(`people-fanout: connecting ${others.length} more people`);
      const connectStart = nowMs();
      const per = Math.ceil(others.length / CLIENT_PROCS);
      const childFile = fileURLToPath(new URL('./lib/people-clients.ts', import.meta.url));
      const ups: Array<Promise<{ open: number; failed: number }>> = [];
      for (let p = 0; p < CLIENT_PROCS; p++) {
        const slice = others.slice(p * per, (p + 1) * per);
        if (slice.length === 0) continue;
        const jobFile = join(tmp, `job-${p}.json`);
        writeFileSync(
          jobFile,
          JSON.stringify({
            gatewayUrl: server.gatewayUrl,
            tokens: slice,
            heartbeatMs: HEARTBEAT_MS,
            batchMs: CLIENT_BATCH_MS,
          }),
        );
        const child = fork(childFile, [jobFile], {
          execArgv: ['--import', 'tsx'],
          stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
        });
        track(child);
        children.push(child);
        ups.push(
          new Promise((resolve, reject) => {
            child.on(
              'message',
              (m: { k: string; open?: number; failed?: number; message?: string }) => {
                if (m.k === 'up') resolve({ open: m.open ?? 0, failed: m.failed ?? 0 });
                if (m.k === 'error') reject(new Error(m.message));
              },
            );
            child.once('exit', (code) => reject(new Error(`client process exited with ${code}`)));
          }),
        );
      }
      const upped = await Promise.all(ups);
      const connectS = (nowMs() - connectStart) / 1000;
      // The measured socket opens last: it is the last of the guild's sessions the fan-out
      // reaches (sessions are walked, and sockets written, in the order they connected).
      measured = await fullClient(lastToken, () => true);
      const open = upped.reduce((n, u) => n + u.open, 0) + 2;
      const refused = upped.reduce((n, u) => n + u.failed, 0);
      if (refused > 0) warnings.push(`${refused} connections could not be opened`);
      await sleep(ctx.smoke ? 500 : 5000);
      const rssConnected = server.proc.rss();

      ctx.log(`people-fanout: ${open} people connected; ${sendS} s at ${RATE} msg/s`);
      // CPU time is steadier than latency on a shared machine: the server's per frame delivered,
      // and the stand-in clients' (they share the cores; they must stay small beside the server).
      const childPids = children.map((c) => c.pid).filter((p): p is number => p !== undefined);
      const childCpu = (): number => childPids.reduce((n, p) => n + cpuMs(p), 0);
      const serverCpu0 = cpuMs(server.proc.pid);
      const serverSplit0 = userSys(server.proc.pid);
      const clientCpu0 = childCpu();
      const loadStart = nowMs();
      const load = await runPhase('load', sendS);
      const loadWallS = (nowMs() - loadStart) / 1000;
      const serverCpuMs = cpuMs(server.proc.pid) - serverCpu0;
      const serverSplit1 = userSys(server.proc.pid);
      // The kernel's share: on loopback a socket write also runs the receiving side's TCP.
      const serverSysShare =
        (serverSplit1.sys - serverSplit0.sys) /
        Math.max(1, serverSplit1.sys - serverSplit0.sys + serverSplit1.user - serverSplit0.user);
      const clientCpuMs = childCpu() - clientCpu0;
      const machineLoad = loadavg()[0] ?? 0;
      ctx.log(
        `people-fanout: worst latency per second of the load (ms): ${load.worstBySecond.join(' ')}`,
      );
      await sleep(1000);
      const rssAfter = server.proc.rss();

      const counts = await Promise.all(
        children.map(
          (c) =>
            new Promise<{ min: number; max: number; closed: number }>((resolve) => {
              c.on('message', (m: { k: string; min: number; max: number; closed: number }) => {
                if (m.k === 'count') resolve(m);
              });
              c.send({ k: 'count' });
            }),
        ),
      );
      const expected = load.sent - load.failed + (base.sent - base.failed);
      // Children were not connected during the baseline: they owe only the load phase.
      const minSeen = Math.min(...counts.map((c) => c.min));
      const closedByServer = counts.reduce((n, c) => n + c.closed, 0);
      const missingPerSocket = load.sent - load.failed - minSeen;

      const perPersonKiB = (rssAfter - rssBefore) / open / 1024;
      const perPersonConnectedKiB = (rssConnected - rssBefore) / open / 1024;
      const figures: Figure[] = [
        {
          id: 'p50',
          label: `send→receive p50 at socket #${open}`,
          value: round(load.lat.p50, 3),
          unit: 'ms',
        },
        {
          id: 'p99',
          label: `send→receive p99 at socket #${open}`,
          value: round(load.lat.p99, 3),
          unit: 'ms',
          target: { op: '<=', value: 250 },
        },
        {
          id: 'ratio_p99',
          label: `p99 with ${open} people / with 1 person connected`,
          value: round(load.lat.p99 / base.lat.p99, 3),
          unit: 'x',
          basis: `${round(load.lat.p99, 3)} ms ÷ ${round(base.lat.p99, 3)} ms`,
        },
        {
          id: 'kib_per_person',
          label: 'server RSS per connected person, after the load',
          value: round(perPersonKiB, 2),
          unit: 'KiB/person',
          basis: `(${round(rssAfter / MiB, 1)} − ${round(rssBefore / MiB, 1)} MiB) ÷ ${open}`,
          target: { op: '<=', value: 24 },
        },
        {
          id: 'kib_per_person_connected',
          label: 'server RSS per connected person, before the load',
          value: round(perPersonConnectedKiB, 2),
          unit: 'KiB/person',
          basis: `(${round(rssConnected / MiB, 1)} − ${round(rssBefore / MiB, 1)} MiB) ÷ ${open}`,
        },
        {
          id: 'missing',
          label: 'messages missing at the socket that got fewest (after 5 s)',
          value: Math.max(0, missingPerSocket) + lateOrLost,
          unit: 'count',
          target: { op: '<=', value: 0 },
        },
        {
          id: 'server_us_per_frame',
          label: 'server CPU per frame delivered, during the load',
          value: round((serverCpuMs * 1000) / Math.max(1, (load.sent - load.failed) * open), 3),
          unit: 'µs/frame',
          basis: `${Math.round(serverCpuMs)} ms CPU (${round(serverCpuMs / 1000 / loadWallS, 2)} cores, ${Math.round(serverSysShare * 100)} % in the kernel) for ${(load.sent - load.failed) * open} frames`,
        },
        {
          id: 'clients_cores',
          label: 'stand-in clients CPU during the load',
          value: round(clientCpuMs / 1000 / loadWallS, 3),
          unit: 'cores',
          basis: `${Math.round(clientCpuMs)} ms over ${round(loadWallS, 1)} s; machine load average ${round(machineLoad, 2)}`,
        },
        {
          id: 'frames_per_s',
          label: 'frames per second delivered (first send → last arrival at the last socket)',
          value: Math.round(((load.sent - load.failed) * open) / Math.max(load.spanS, sendS)),
          unit: 'frames/s',
          basis: `${(load.sent - load.failed) * open} frames in ${round(load.spanS, 1)} s; asked: ${Math.round(((load.sent - load.failed) * open) / sendS)}/s`,
        },
      ];
      if (closedByServer > 0)
        warnings.push(`${closedByServer} connections were closed by the server`);
      if (load.failed + base.failed > 0) warnings.push(`${load.failed + base.failed} sends failed`);
      return {
        status: 'ok',
        figures,
        warnings,
        table: [
          {
            people: open,
            'base p50 ms': round(base.lat.p50, 3),
            'base p99 ms': round(base.lat.p99, 3),
            'load p50 ms': round(load.lat.p50, 3),
            'load p99 ms': round(load.lat.p99, 3),
            'POST p99 ms': round(load.post.p99, 3),
            'server cores': round(serverCpuMs / 1000 / loadWallS, 2),
            'clients cores': round(clientCpuMs / 1000 / loadWallS, 2),
            'load avg': round(machineLoad, 2),
            'RSS before MiB': round(rssBefore / MiB, 1),
            'RSS connected MiB': round(rssConnected / MiB, 1),
            'RSS after MiB': round(rssAfter / MiB, 1),
            'KiB/person': round(perPersonKiB, 2),
          },
        ],
        details: {
          people: open,
          setupS: round(setupS, 1),
          connectS: round(connectS, 1),
          base,
          load,
          expected,
          counts,
          rssBefore,
          rssConnected,
          rssAfter,
          serverCpuMs,
          serverSysShare,
          clientCpuMs,
          loadWallS,
          machineLoad,
        },
      };
    } finally {
      measured?.close(true);
      first?.close(true);
      for (const c of children) {
        if (c.connected) c.send({ k: 'stop' });
        setTimeout(() => c.kill('SIGKILL'), 2000).unref();
      }
      http.close();
      await server.dispose();
      rmSync(tmp, { recursive: true, force: true });
    }
  },
};

/** User and system CPU ticks of a process so far (/proc/<pid>/stat fields 14 and 15). */
function userSys(pid: number): { user: number; sys: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]), sys: Number(fields[12]) };
}
