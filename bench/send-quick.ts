/**
 * Quick send comparison (issue 29): Parley's send and its floors, one connection count, short
 * rounds, interleaved, with the server CPU per request beside req/s (CPU per request moves far
 * less than req/s on a shared machine). For profiling and trying changes; `npm run bench -- send`
 * is the measurement.
 *
 *   npx tsx bench/send-quick.ts [connections=50] [seconds=3] [rounds=2] [cases=sqlite,pg,floor,floor-pg,floor-pg-batch]
 *   (also `sqlite-rich`: issue 24's send with a mention and a reply)
 *
 * BENCH_PROFILE_DIR=<dir> writes the Parley servers' CPU profiles there. The cases `sqlite-base`,
 * `sqlite-rich-base` and `pg-base` run a base for a before/after in the same interleaved rounds:
 * BENCH_BASE_SCRIPT=<an earlier build's packages/server/dist/parley.js> (issue 26: the search
 * index's cost) and/or BENCH_BASE_NODE_ARGS="<node flags added after the start script's>".
 */
import { startFloor, type FloorServer } from './lib/floor-server.js';
import { HttpClient } from './lib/http-client.js';
import { runLoad } from './lib/load.js';
import { buildWorld, Operator } from './lib/operator.js';
import { startParley, type ParleyServer } from './lib/parley-server.js';
import { cpuMs } from './lib/rss.js';

const connections = Number(process.argv[2] ?? 50);
const seconds = Number(process.argv[3] ?? 3);
const rounds = Number(process.argv[4] ?? 2);
const cases = (process.argv[5] ?? 'sqlite,pg,floor,floor-pg,floor-pg-batch').split(',');
const BODY = JSON.stringify({ content: 'A benchmark message of ordinary length.' });
const profileDir = process.env['BENCH_PROFILE_DIR'];

interface Target {
  name: string;
  origin: string;
  pid: number;
  path: string;
  token: (i: number) => string;
  /** the request body (issue 24's `sqlite-rich` sends a mention and a reply) */
  body: string;
  dispose: () => Promise<void>;
}

async function parley(
  name: string,
  postgres: boolean,
  base = false,
  rich = false,
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
    path,
    body,
    token: (i) => world.bots[i % world.bots.length]?.token ?? '',
    dispose: () => s.dispose(),
  };
}

async function floor(name: string, mode: 'sqlite' | 'pg' | 'pg-batch'): Promise<Target> {
  const f: FloorServer = await startFloor(mode);
  return {
    name,
    origin: f.origin,
    pid: f.proc.pid,
    path: '/api/v1/channels/1/messages',
    body: BODY,
    token: (i) => `floor-${i % 50}`,
    dispose: () => f.dispose(),
  };
}

const makers: Record<string, () => Promise<Target>> = {
  sqlite: () => parley('send (SQLite)', false),
  'sqlite-rich': () => parley('send (SQLite, mention + reply)', false, false, true),
  'sqlite-base': () => parley('send (SQLite, base build)', false, true),
  pg: () => parley('send (PostgreSQL)', true),
  'sqlite-rich-base': () => parley('send (SQLite, mention + reply, base build)', false, true, true),
  'pg-base': () => parley('send (PostgreSQL, base build)', true, true),
  floor: () => floor('floor (SQLite)', 'sqlite'),
  'floor-pg': () => floor('floor (PostgreSQL)', 'pg'),
  'floor-pg-batch': () => floor('floor (PostgreSQL, batched)', 'pg-batch'),
};

const targets: Target[] = [];
// One at a time: on a busy machine several starting at once can miss their start deadline.
for (const c of cases) targets.push(await (makers[c] as () => Promise<Target>)());
try {
  for (const t of targets) {
    const probe = new HttpClient(t.origin);
    await probe.expect('POST', t.path, 200, { token: t.token(0), body: JSON.parse(t.body) });
    probe.close();
  }
  const rows: Record<string, Array<{ rps: number; cpu: number }>> = {};
  for (let r = 0; r < rounds; r++) {
    for (const t of targets) {
      const load = (durationS: number) =>
        runLoad({
          origin: t.origin,
          path: t.path,
          method: 'POST',
          body: t.body,
          connections,
          durationS,
          connectionHeaders: (i) => ({ authorization: `Bearer ${t.token(i)}` }),
        });
      await load(1);
      const cpu0 = cpuMs(t.pid);
      const res = await load(seconds);
      const cpu = (cpuMs(t.pid) - cpu0) / Math.max(1, res.ok);
      (rows[t.name] ??= []).push({ rps: Math.round(res.reqPerSec), cpu: Number(cpu.toFixed(3)) });
      console.log(
        `round ${r + 1} ${t.name} @${connections}: ${Math.round(res.reqPerSec)} req/s, ${cpu.toFixed(3)} ms CPU/req, errors ${res.non2xx + res.errors}`,
      );
    }
  }
  console.log(JSON.stringify(rows));
} finally {
  await Promise.all(targets.map((t) => t.dispose()));
}
