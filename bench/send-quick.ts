/**
 * Quick send comparison (issue 29): Parley's send and its floors, one connection count, short
 * rounds, interleaved, with the server CPU per request beside req/s (CPU per request moves far
 * less than req/s on a shared machine). For profiling and trying changes; `npm run bench -- send`
 * is the measurement.
 *
 *   npx tsx bench/send-quick.ts [connections=50] [seconds=3] [rounds=2] [cases=sqlite,pg,floor,floor-pg,floor-pg-batch]
 *   (also `sqlite-rich`: issue 24's send with a mention and a reply; `sqlite-connected`,
 *   `sqlite-rich-connected`, `sqlite-connected-base` and `floor-sockets`: the same with 50
 *   readers on the gateway, as bench/send's connected cases; they count frames as the floor's
 *   sockets do, or parse each one with BENCH_PARSE_FRAMES=1; `floor-search` and
 *   `floor-search-sockets`: the floor with D67's search index in its transaction)
 *
 * BENCH_COUNT_PROMISES=1 counts the promises each server creates (bench/lib/count-promises.mjs)
 * and reports them per request of each round (session 20: a send made about 82, the floor's 4).
 *
 * BENCH_PROFILE_DIR=<dir> writes the Parley servers' CPU profiles there. The cases `sqlite-base`,
 * `sqlite-rich-base`, `sqlite-me-base` and `pg-base` run a base for a before/after in the same interleaved rounds:
 * BENCH_BASE_SCRIPT=<an earlier build's packages/server/dist/parley.js> (issue 26: the search
 * index's cost) and/or BENCH_BASE_NODE_ARGS="<node flags added after the start script's>".
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { startFloor, type FloorMode, type FloorServer } from './lib/floor-server.js';
import { connectGateway, type GatewayConnection } from './lib/gateway-client.js';
import { HttpClient } from './lib/http-client.js';
import { runLoad } from './lib/load.js';
import { buildWorld, Operator } from './lib/operator.js';
import { startParley, type ParleyServer } from './lib/parley-server.js';
import { cpuSplitMs, settled } from './lib/rss.js';

const connections = Number(process.argv[2] ?? 50);
const seconds = Number(process.argv[3] ?? 3);
const rounds = Number(process.argv[4] ?? 2);
const cases = (process.argv[5] ?? 'sqlite,pg,floor,floor-pg,floor-pg-batch').split(',');
const BODY = JSON.stringify({ content: 'A benchmark message of ordinary length.' });
const profileDir = process.env['BENCH_PROFILE_DIR'];
const countPromises = process.env['BENCH_COUNT_PROMISES'] === '1';
const promiseDir = countPromises ? mkdtempSync(path.join(tmpdir(), 'parley-promises-')) : '';
if (countPromises) {
  // the servers' flags (parley-server.ts, floor-server.ts) after the start script's
  const preload = `--import=${path.join(import.meta.dirname, 'lib', 'count-promises.mjs')}`;
  for (const k of ['BENCH_SERVER_NODE_ARGS', 'BENCH_FLOOR_NODE_ARGS'])
    process.env[k] = `${process.env[k] ?? ''} ${preload}`.trim();
  process.env['BENCH_PROMISE_DIR'] = promiseDir;
}

/** The promises a server created so far (BENCH_COUNT_PROMISES), asked by SIGUSR2. */
async function promisesOf(pid: number): Promise<number> {
  const file = path.join(promiseDir, String(pid));
  rmSync(file, { force: true });
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 10));
    if (existsSync(file)) return Number(readFileSync(file, 'utf8'));
  }
  throw new Error(`server ${pid} did not report its promises`);
}

interface Target {
  name: string;
  origin: string;
  pid: number;
  path: string;
  token: (i: number) => string;
  /** the request body (issue 24's `sqlite-rich` sends a mention and a reply) */
  body: string;
  /** GET without a body (`sqlite-me`); POST otherwise */
  method?: 'GET';
  /** the connected cases: open the 50 readers before a round, close them after */
  readers?: () => Promise<() => Promise<void>>;
  dispose: () => Promise<void>;
}

/** Frames the readers of the connected cases received (this process). */
let frames = 0;

async function parley(
  name: string,
  postgres: boolean,
  base = false,
  rich = false,
  connected = false,
  me = false,
): Promise<Target> {
  // a base case: another build (BENCH_BASE_SCRIPT) and/or other node flags (BENCH_BASE_NODE_ARGS)
  const vars = {
    BENCH_SERVER_SCRIPT: base ? process.env['BENCH_BASE_SCRIPT'] : undefined,
    BENCH_SERVER_NODE_ARGS: base ? process.env['BENCH_BASE_NODE_ARGS'] : undefined,
  };
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(vars)) if (v) process.env[k] = v;
  let s: ParleyServer;
  try {
    s = await startParley({
      label: name,
      postgres,
      ...(profileDir ? { cpuProfDir: profileDir } : {}),
    });
  } finally {
    for (const [k, v] of Object.entries(before))
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
  }
  const op = new Operator(s);
  const world = await buildWorld(op, 50);
  op.close();
  const path = `/api/v1/channels/${world.channelId}/messages`;
  let body = BODY;
  if (rich) {
    // Issue 24: as bench/send's "mention + reply" case — a reply that mentions the second bot.
    const first = new HttpClient(s.origin);
    const answered = await first.expect('POST', path, 200, {
      token: world.bots[0]?.token,
      body: { content: 'the message every rich send replies to' },
    });
    first.close();
    body = JSON.stringify({
      content: `<@${world.bots[1]?.userId ?? 0}> a benchmark reply of ordinary length.`,
      messageReference: { messageId: (answered.body as { id: number }).id },
    });
  }
  return {
    name,
    origin: s.origin,
    pid: s.proc.pid,
    ...(me ? { method: 'GET' as const, path: '/api/v1/bot/me' } : { path }),
    body,
    token: (i) => world.bots[i % world.bots.length]?.token ?? '',
    ...(connected
      ? {
          // As bench/send's "channel, connected": every bot of the channel on the gateway.
          readers: async () => {
            const conns: GatewayConnection[] = [];
            for (const bot of world.bots)
              conns.push(
                await connectGateway(s.gatewayUrl, bot.token, {
                  heartbeat: true,
                  ...(process.env['BENCH_PARSE_FRAMES']
                    ? { onDispatch: () => void frames++ }
                    : { onDispatchHead: () => void frames++ }),
                }),
              );
            return async () => {
              for (const c of conns) c.close();
              // D28: a bot's next connection must come at least 1 s after this one.
              await new Promise((r) => setTimeout(r, 1100));
            };
          },
        }
      : {}),
    dispose: () => s.dispose(),
  };
}

async function floor(name: string, mode: FloorMode, sockets = false): Promise<Target> {
  const f: FloorServer = await startFloor(mode);
  return {
    name,
    origin: f.origin,
    pid: f.proc.pid,
    path: '/api/v1/channels/1/messages',
    body: BODY,
    token: (i) => `floor-${i % 50}`,
    ...(sockets ? { readers: () => floorReaders(f.origin) } : {}),
    dispose: () => f.dispose(),
  };
}

/** As bench/send's "floor (SQLite, 50 sockets)": 50 bare sockets counting every frame. */
async function floorReaders(origin: string): Promise<() => Promise<void>> {
  const socks: WebSocket[] = [];
  for (let i = 0; i < 50; i++) {
    const ws = new WebSocket(`${origin.replace('http', 'ws')}/gateway`);
    ws.on('message', () => void frames++);
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    socks.push(ws);
  }
  return async () => {
    for (const ws of socks) ws.close();
    await Promise.resolve();
  };
}

const makers: Record<string, () => Promise<Target>> = {
  sqlite: () => parley('send (SQLite)', false),
  // Parley's request path with almost nothing behind it: authenticate, rate-limit bucket, one
  // cached row, answer — what any Parley API request costs before its own work.
  'sqlite-me': () => parley('GET /bot/me (SQLite)', false, false, false, false, true),
  'sqlite-me-base': () =>
    parley('GET /bot/me (SQLite, base build)', false, true, false, false, true),
  'sqlite-connected': () => parley('send (SQLite, 50 connected)', false, false, false, true),
  'sqlite-connected-base': () =>
    parley('send (SQLite, 50 connected, base build)', false, true, false, true),
  'sqlite-rich-connected': () =>
    parley('send (SQLite, mention + reply, 50 connected)', false, false, true, true),
  'floor-sockets': () => floor('floor (SQLite, 50 sockets)', 'sqlite', true),
  'sqlite-rich': () => parley('send (SQLite, mention + reply)', false, false, true),
  'sqlite-base': () => parley('send (SQLite, base build)', false, true),
  pg: () => parley('send (PostgreSQL)', true),
  'sqlite-rich-base': () => parley('send (SQLite, mention + reply, base build)', false, true, true),
  'pg-base': () => parley('send (PostgreSQL, base build)', true, true),
  floor: () => floor('floor (SQLite)', 'sqlite'),
  // D67's search index in the floor's transaction too (bench/servers/floor.ts sqlite-search)
  'floor-search': () => floor('floor (SQLite, search index)', 'sqlite-search'),
  'floor-search-sockets': () =>
    floor('floor (SQLite, search index, 50 sockets)', 'sqlite-search', true),
  'floor-pg': () => floor('floor (PostgreSQL)', 'pg'),
  'floor-pg-batch': () => floor('floor (PostgreSQL, batched)', 'pg-batch'),
};

const targets: Target[] = [];
// One at a time: on a busy machine several starting at once can miss their start deadline.
for (const c of cases) targets.push(await (makers[c] as () => Promise<Target>)());
try {
  for (const t of targets) {
    const probe = new HttpClient(t.origin);
    await probe.expect(t.method ?? 'POST', t.path, 200, {
      token: t.token(0),
      ...(t.method ? {} : { body: JSON.parse(t.body) }),
    });
    probe.close();
  }
  const rows: Record<string, Array<{ rps: number; cpu: number }>> = {};
  for (let r = 0; r < rounds; r++) {
    for (const t of targets) {
      const load = (durationS: number) =>
        runLoad({
          origin: t.origin,
          path: t.path,
          ...(t.method ? { method: t.method } : { method: 'POST', body: t.body }),
          connections,
          durationS,
          connectionHeaders: (i) => ({ authorization: `Bearer ${t.token(i)}` }),
        });
      // every case's server runs through all the rounds: the others quiet first (lib/rss.ts)
      await settled(targets.filter((o) => o !== t).map((o) => o.pid));
      const closeReaders = await t.readers?.();
      let res: Awaited<ReturnType<typeof load>>;
      let cpu: number;
      let sys: number;
      let own: number;
      let promisesPerRequest: number | undefined;
      const frames0 = frames;
      try {
        await load(1);
        const promises0 = countPromises ? await promisesOf(t.pid) : 0;
        const cpu0 = cpuSplitMs(t.pid);
        const own0 = process.cpuUsage();
        res = await load(seconds);
        const cpu1 = cpuSplitMs(t.pid);
        sys = (cpu1.system - cpu0.system) / Math.max(1, res.ok);
        cpu = (cpu1.user - cpu0.user) / Math.max(1, res.ok) + sys;
        if (countPromises)
          promisesPerRequest = ((await promisesOf(t.pid)) - promises0) / Math.max(1, res.ok);
        const used = process.cpuUsage(own0);
        // this process's CPU per request: the load generator and, connected, the readers
        own = (used.user + used.system) / 1000 / Math.max(1, res.ok);
      } finally {
        await closeReaders?.();
      }
      (rows[t.name] ??= []).push({ rps: Math.round(res.reqPerSec), cpu: Number(cpu.toFixed(3)) });
      const read = t.readers ? `, ${frames - frames0} frames read` : '';
      const made =
        promisesPerRequest === undefined ? '' : `, ${promisesPerRequest.toFixed(1)} promises/req`;
      console.log(
        `round ${r + 1} ${t.name} @${connections}: ${Math.round(res.reqPerSec)} req/s, ${cpu.toFixed(3)} ms CPU/req (system ${sys.toFixed(3)}), bench ${own.toFixed(3)} ms/req${read}${made}, errors ${res.non2xx + res.errors}`,
      );
    }
  }
  console.log(JSON.stringify(rows));
} finally {
  await Promise.all(targets.map((t) => t.dispose()));
  if (promiseDir) rmSync(promiseDir, { recursive: true, force: true });
}
