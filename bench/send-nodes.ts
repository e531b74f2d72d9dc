/**
 * Issue 29: what one PostgreSQL primary carries behind one node and behind two. Two Parley nodes
 * share one schema and Redis (as a cluster does, D42); the same bots send through one node with
 * all the connections, then through both at once with half each, interleaved in rounds. Beside
 * req/s it reports the CPU each send cost the nodes and the PostgreSQL server (every `postgres`
 * process on this machine, read from /proc), from which a dedicated primary's capacity is
 * extrapolated in docs/scaling.md. On this machine everything shares two cores, so the two-node
 * figure shows the sum of the nodes' and the primary's CPU, not the primary's limit.
 *
 *   npx tsx bench/send-nodes.ts [connections=50] [seconds=5] [rounds=3]
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { HttpClient } from './lib/http-client.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { buildWorld, Operator } from './lib/operator.js';
import { PG_URL, startParley, type ParleyServer } from './lib/parley-server.js';
import { cpuMs } from './lib/rss.js';

const connections = Number(process.argv[2] ?? 50);
const seconds = Number(process.argv[3] ?? 5);
const rounds = Number(process.argv[4] ?? 3);
const BODY = JSON.stringify({ content: 'A benchmark message of ordinary length.' });
const REDIS = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/** CPU milliseconds used so far by every process whose command is `postgres`. */
function postgresCpuMs(): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() !== 'postgres') continue;
      total += cpuMs(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

const prefix = `bench-nodes-${randomBytes(4).toString('hex')}:`;
const redisUrl = `${REDIS}?keyPrefix=${encodeURIComponent(prefix)}`;
const a = await startParley({
  label: 'node 1',
  postgres: true,
  env: { PARLEY_REDIS_URL: redisUrl, PARLEY_NODE_ID: '1' },
});
let b: ParleyServer | undefined;
try {
  const op = new Operator(a);
  const world = await buildWorld(op, 50);
  op.close();
  const url = `${PG_URL}?options=-c%20search_path%3D${a.schema ?? ''}`;
  // The second node finds the schema, the token secret and the world the first made.
  b = await startParley({
    label: 'node 2',
    env: {
      PARLEY_DATABASE_URL: url,
      PARLEY_REDIS_URL: redisUrl,
      PARLEY_NODE_ID: '2',
    },
  });
  const path = `/api/v1/channels/${world.channelId}/messages`;
  const token = (i: number) => world.bots[i % world.bots.length]?.token ?? '';
  for (const node of [a, b]) {
    const probe = new HttpClient(node.origin);
    await probe.expect('POST', path, 200, { token: token(0), body: JSON.parse(BODY) });
    probe.close();
  }
  const load = (node: ParleyServer, conns: number, durationS: number, offset: number) =>
    runLoad({
      origin: node.origin,
      path,
      method: 'POST',
      body: BODY,
      connections: conns,
      durationS,
      connectionHeaders: (i) => ({ authorization: `Bearer ${token(i + offset)}` }),
    });
  const nodes = b;
  const cases: Record<string, (durationS: number) => Promise<LoadResult[]>> = {
    'one node': async (d) => [await load(a, connections, d, 0)],
    'two nodes': (d) =>
      Promise.all([
        load(a, Math.ceil(connections / 2), d, 0),
        load(nodes, Math.floor(connections / 2), d, Math.ceil(connections / 2)),
      ]),
  };
  const rows: Record<string, Array<{ rps: number; node: number; pg: number }>> = {};
  for (let r = 0; r < rounds; r++) {
    for (const [name, run] of Object.entries(cases)) {
      await run(1);
      const node0 = cpuMs(a.proc.pid) + cpuMs(b.proc.pid);
      const pg0 = postgresCpuMs();
      const results = await run(seconds);
      const node = cpuMs(a.proc.pid) + cpuMs(b.proc.pid) - node0;
      const pg = postgresCpuMs() - pg0;
      const ok = results.reduce((s, x) => s + x.ok, 0);
      const errors = results.reduce((s, x) => s + x.non2xx + x.errors, 0);
      const rps = results.reduce((s, x) => s + x.reqPerSec, 0);
      const row = {
        rps: Math.round(rps),
        node: Number((node / Math.max(1, ok)).toFixed(3)),
        pg: Number((pg / Math.max(1, ok)).toFixed(3)),
      };
      (rows[name] ??= []).push(row);
      console.log(
        `round ${r + 1} ${name} @${connections}: ${row.rps} req/s, nodes ${row.node} ms CPU/send, ` +
          `PostgreSQL ${row.pg} ms CPU/send, errors ${errors}`,
      );
    }
  }
  console.log(JSON.stringify(rows));
} finally {
  await b?.dispose();
  await a.dispose();
  const redis = new Redis(REDIS, { lazyConnect: true });
  await redis.connect();
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
}
