import { startParley } from './lib/parley-server.js';
import { buildWorld, Operator } from './lib/operator.js';
import { runLoad } from './lib/load.js';
const server = await startParley({ label: 'pg', postgres: process.env.PG === '1', cpuProfDir: process.env.PROF ?? '/tmp/sqprof' });
const op = new Operator(server);
const world = await buildWorld(op, 50);
op.close();
const r = await runLoad({
  origin: server.origin,
  path: `/api/v1/channels/${world.channelId}/messages`,
  method: 'POST',
  body: JSON.stringify({ content: 'hello there' }),
  connections: Number(process.env.CONNS ?? 10),
  durationS: Number(process.env.SECS ?? 5),
  connectionHeaders: (i) => ({ authorization: `Bearer ${world.bots[i % world.bots.length]?.token ?? ''}` }),
});
console.log('req/s', r.reqPerSec, 'p50', r.latency.p50, 'p99', r.latency.p99, 'errors', r.non2xx + r.errors);
await server.dispose();
