/**
 * Rate-limiter overhead (issue 3, acceptance 6): decisions per second of each store, as a ratio
 * against a baseline measured in the same run (docs/architecture.md#habit-9), plus what a limited
 * request costs end to end compared with the same request with limits off.
 *
 *   npx tsx bench/ratelimit.bench.ts   (≈ 30 s; BENCH_MS=200 BENCH_ROUNDS=1 for a quick look)
 *
 * Baselines: the memory store against the bare `take` function on a Map (the store minus its
 * interface and clock); the Redis store against a Redis PING on the same kind of connection (the
 * floor of any Redis round trip), one at a time and with 64 in flight; the HTTP rows against
 * GET /api/v1/bot/me with every bucket off (app.inject: no sockets, so the limiter's share shows).
 * Every phase runs for a fixed time, so the whole run is bounded and stops by itself.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { loadConfig, type RateSpec } from '../packages/server/src/config/config.js';
import { buildApp } from '../packages/server/src/http/app.js';
import { systemClock } from '../packages/server/src/ids/clock.js';
import { MemoryRateLimiter } from '../packages/server/src/ratelimit/limiter.js';
import { RedisRateLimiter } from '../packages/server/src/ratelimit/redis-limiter.js';
import { take, type BucketState } from '../packages/server/src/ratelimit/token-bucket.js';
import { openServices } from '../packages/server/src/services.js';

const PHASE_MS = Number(process.env['BENCH_MS'] ?? 700);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 3);
const REDIS_URL = process.env['PARLEY_BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const KEYS = 1000; // decisions rotate over this many buckets
// Never refuse: a refusal skips the write, and the write is part of what is measured.
const WIDE_OPEN: RateSpec = { rate: 1e9, burst: 1e9 };
const ADMIN = 'bench-admin-token-0123456789';

interface Row {
  what: string;
  perSecond: number;
  baseline?: string;
  ratio?: number;
}
const rows: Row[] = [];

/** Run `op` back to back (or `parallel` at a time) for PHASE_MS; operations per second. */
async function measure(op: (i: number) => unknown, parallel = 1): Promise<number> {
  const warmEnd = performance.now() + Math.min(150, PHASE_MS / 4);
  let i = 0;
  const lane = async (until: number): Promise<number> => {
    let n = 0;
    while (performance.now() < until) {
      for (let k = 0; k < 20; k++) await op(i++);
      n += 20;
    }
    return n;
  };
  await Promise.all(Array.from({ length: parallel }, () => lane(warmEnd)));
  const start = performance.now();
  const counts = await Promise.all(Array.from({ length: parallel }, () => lane(start + PHASE_MS)));
  const total = counts.reduce((a, b) => a + b, 0);
  return (total * 1000) / (performance.now() - start);
}

interface Case {
  what: string;
  op: (i: number) => unknown;
  parallel?: number;
  /** the `what` of the case this one is divided by */
  baseline?: string;
}

/**
 * Interleaved rounds (A, B, A, B…) and the best round of each: a machine shared with other work
 * slows phases at random, and interleaving plus best-of-N keeps that noise out of the ratios.
 */
async function group(cases: Case[]): Promise<void> {
  const best = new Map<string, number>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of cases) {
      const v = await measure(c.op, c.parallel);
      best.set(c.what, Math.max(best.get(c.what) ?? 0, v));
    }
  }
  for (const c of cases) {
    const perSecond = best.get(c.what) ?? 0;
    const base = c.baseline === undefined ? undefined : best.get(c.baseline);
    rows.push({
      what: c.what,
      perSecond,
      ...(base === undefined ? {} : { baseline: c.baseline, ratio: perSecond / base }),
    });
    process.stderr.write(`  ${c.what}: ${Math.round(perSecond).toLocaleString('en')}/s\n`);
  }
}

async function memoryGroup(): Promise<void> {
  const map = new Map<string, BucketState>();
  const memory = new MemoryRateLimiter(systemClock);
  const raw = 'take() on a Map (baseline)';
  await group([
    {
      what: raw,
      op: (i) => {
        const key = `k${i % KEYS}`;
        const { decision, state } = take(map.get(key), WIDE_OPEN, Date.now());
        if (decision.allowed) map.set(key, state);
      },
    },
    {
      what: 'MemoryRateLimiter.consume',
      op: (i) => memory.consume(`k${i % KEYS}`, WIDE_OPEN),
      baseline: raw,
    },
  ]);
  await memory.close();
}

async function redisReachable(): Promise<boolean> {
  const probe = new Redis(REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on('error', () => {});
  try {
    await probe.connect();
    await probe.ping();
    return true;
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

async function sweep(redis: Redis, namespace: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${namespace}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
}

async function redisGroup(namespace: string): Promise<void> {
  const ping = new Redis(REDIS_URL);
  const store = new RedisRateLimiter(REDIS_URL, { namespace });
  try {
    await store.consume('warm', WIDE_OPEN); // loads the script
    const cases: Case[] = [];
    for (const parallel of [1, 64]) {
      const label = parallel === 1 ? 'one at a time' : `${parallel} in flight`;
      const base = `Redis PING, ${label} (baseline)`;
      cases.push({ what: base, op: () => ping.ping(), parallel });
      cases.push({
        what: `RedisRateLimiter.consume, ${label}`,
        op: (i) => store.consume(`k${i % KEYS}`, WIDE_OPEN),
        parallel,
        baseline: base,
      });
    }
    await group(cases);
  } finally {
    await store.close();
    await sweep(ping, namespace); // wide-open buckets expire within 1 ms; this is a safety net
    await ping.quit();
  }
}

/** A server app (never listening) whose bot token is ready, with the given limiter settings. */
async function httpApp(env: Record<string, string>) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-bench-rl-'));
  const config = loadConfig({
    PARLEY_DATABASE_URL: 'sqlite::memory:',
    PARLEY_DATA_DIR: dataDir,
    PARLEY_ADMIN_TOKEN: ADMIN,
    PARLEY_LOG_LEVEL: 'silent',
    PARLEY_RATE_MESSAGES: 'off',
    ...env,
  });
  const services = await openServices(config);
  const app = await buildApp(services);
  const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };
  const user = await app.inject({
    method: 'POST',
    url: '/admin/v1/users',
    headers: admin,
    payload: { name: 'owner' },
  });
  const bot = await app.inject({
    method: 'POST',
    url: '/admin/v1/bots',
    headers: admin,
    payload: { ownerId: user.json().id, name: 'bench' },
  });
  const headers = { authorization: `Bearer ${bot.json().token}` };
  const get = () => app.inject({ method: 'GET', url: '/api/v1/bot/me', headers });
  const probe = await get();
  if (probe.statusCode !== 200)
    throw new Error(`probe answered ${probe.statusCode}: ${probe.body}`);
  return {
    get,
    close: async () => {
      await app.close();
      await services.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function httpGroup(redisOk: boolean, namespace: string): Promise<void> {
  const open = `${WIDE_OPEN.rate}/${WIDE_OPEN.burst}`;
  const apps: { what: string; env: Record<string, string> }[] = [
    { what: 'HTTP GET /bot/me, limits off (baseline)', env: { PARLEY_RATE_GLOBAL: 'off' } },
    { what: 'HTTP GET /bot/me, memory limiter', env: { PARLEY_RATE_GLOBAL: open } },
  ];
  if (redisOk) {
    const url = new URL(REDIS_URL);
    url.searchParams.set('keyPrefix', namespace);
    apps.push({
      what: 'HTTP GET /bot/me, Redis limiter',
      env: { PARLEY_RATE_GLOBAL: open, PARLEY_REDIS_URL: url.toString() },
    });
  }
  const built = await Promise.all(apps.map((a) => httpApp(a.env)));
  try {
    await group(
      apps.map((a, k) => ({
        what: a.what,
        op: () => built[k]?.get(),
        ...(k === 0 ? {} : { baseline: apps[0]?.what ?? '' }),
      })),
    );
  } finally {
    await Promise.all(built.map((b) => b.close()));
  }
}

async function main(): Promise<void> {
  const started = performance.now();
  process.stderr.write(`rate-limit bench: ${ROUNDS} rounds × ${PHASE_MS} ms per measurement\n`);
  await memoryGroup();
  const redisOk = await redisReachable();
  const namespace = `parley-bench:${randomBytes(4).toString('hex')}:`;
  if (redisOk) await redisGroup(namespace);
  else process.stderr.write(`  !! Redis unreachable at ${REDIS_URL}: Redis rows skipped\n`);
  await httpGroup(redisOk, namespace);

  const w = Math.max(...rows.map((r) => r.what.length));
  const lines = [
    '',
    `${'measurement'.padEnd(w)}  ${'per second'.padStart(12)}  ratio to its baseline`,
    ...rows.map(
      (r) =>
        `${r.what.padEnd(w)}  ${Math.round(r.perSecond).toLocaleString('en').padStart(12)}  ${
          r.ratio === undefined ? '' : `${r.ratio.toFixed(2)} × ${r.baseline ?? ''}`
        }`,
    ),
    '',
    `node ${process.version}, best of ${ROUNDS} interleaved rounds of ${PHASE_MS} ms, ` +
      `${((performance.now() - started) / 1000).toFixed(1)} s in all`,
  ];
  process.stdout.write(lines.join('\n') + '\n');
}

await main();
