/**
 * Quick send → dispatch latency: one bot on the gateway, a person sending N messages one at a
 * time over loopback HTTP, against a real `parley serve` process (SQLite in a temp data dir by
 * default; pass PARLEY_DATABASE_URL / PARLEY_REDIS_URL through the environment to try others).
 *
 *   npx tsx bench/fanout-quick.ts [messages=1000]
 *
 * Prints p50/p90/p99/max of (a) POST → MESSAGE_CREATE arrival and, as the same-run baseline
 * (docs/architecture.md#habit-9), (b) the POST's own round trip, and their ratio.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';

const COUNT = Number(process.argv[2] ?? 1000);
const WARMUP = 100;
const ADMIN = 'bench-admin-token-0123456789';
const REPO = fileURLToPath(new URL('../', import.meta.url));

async function startServer(dataDir: string) {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', 'packages/server/src/cli/main.ts', 'serve'],
    {
      cwd: REPO,
      stdio: 'pipe',
      env: {
        ...process.env,
        PARLEY_HOST: '127.0.0.1',
        PARLEY_PORT: '0',
        PARLEY_DATA_DIR: dataDir,
        PARLEY_ADMIN_TOKEN: ADMIN,
        PARLEY_RATE_GLOBAL: 'off',
        PARLEY_RATE_MESSAGES: 'off',
        PARLEY_LOG_LEVEL: 'warn',
      },
    },
  );
  proc.stderr.pipe(process.stderr);
  const origin = await new Promise<string>((resolve, reject) => {
    let out = '';
    proc.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /API\s+(https?:\/\/\S+)\/api\/v1/.exec(out);
      if (m?.[1]) resolve(m[1]);
    });
    proc.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return { proc, origin };
}

async function call(origin: string, method: string, url: string, token: string, body?: unknown) {
  const res = await fetch(origin + url, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return JSON.parse(text) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const pct = (sorted: number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

function summary(samples: number[]) {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: pct(s, 50), p90: pct(s, 90), p99: pct(s, 99), max: s[s.length - 1] ?? NaN };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-fanout-quick-'));
  const { proc, origin } = await startServer(dataDir);
  try {
    const admin = (m: string, u: string, b?: unknown) => call(origin, m, `/admin/v1${u}`, ADMIN, b);
    const owner = await admin('POST', '/users', { name: 'owner' });
    const person = await admin('POST', '/users', { name: 'person' });
    const session = await admin('POST', `/users/${person.id}/sessions`);
    const guild = await admin('POST', '/guilds', { name: 'bench', ownerId: owner.id });
    const channel = await admin('POST', `/guilds/${guild.id}/channels`, { name: 'general' });
    const bot = await admin('POST', '/bots', { ownerId: owner.id, name: 'listener' });
    await admin('PUT', `/guilds/${guild.id}/members/${person.id}`, {});
    await admin('PUT', `/guilds/${guild.id}/members/${bot.bot.botUser.id}`, {});

    const waiting = new Map<string, (at: number) => void>();
    const ws = new WebSocket(`${origin.replace(/^http/, 'ws')}/gateway`, {
      headers: { authorization: `Bearer ${bot.token}` },
    });
    await new Promise<void>((resolve, reject) => {
      ws.on('message', (data: Buffer) => {
        const at = performance.now();
        const f = JSON.parse(data.toString('utf8')) as { op: number; t?: string; d: any }; // eslint-disable-line @typescript-eslint/no-explicit-any
        if (f.t === 'READY') resolve();
        if (f.t === 'MESSAGE_CREATE') waiting.get(String(f.d.content))?.(at);
      });
      ws.once('error', reject);
    });

    const url = `/api/v1/channels/${channel.id}/messages`;
    const event: number[] = [];
    const post: number[] = [];
    for (let i = 0; i < WARMUP + COUNT; i++) {
      const content = `m${i}`;
      const arrived = new Promise<number>((resolve) => waiting.set(content, resolve));
      const t0 = performance.now();
      await call(origin, 'POST', url, session.token, { content });
      const tPost = performance.now();
      const tEvent = await arrived;
      waiting.delete(content);
      if (i >= WARMUP) {
        event.push(tEvent - t0);
        post.push(tPost - t0);
      }
    }
    ws.close();
    const e = summary(event);
    const p = summary(post);
    const f = (n: number) => n.toFixed(2).padStart(7);
    console.log(
      `fanout-quick: ${COUNT} messages, 1 bot, loopback (${process.env['PARLEY_DATABASE_URL'] ?? 'SQLite'})`,
    );
    console.log('                         p50      p90      p99      max   (ms)');
    console.log(`POST → MESSAGE_CREATE ${f(e.p50)}  ${f(e.p90)}  ${f(e.p99)}  ${f(e.max)}`);
    console.log(`POST round trip       ${f(p.p50)}  ${f(p.p90)}  ${f(p.p99)}  ${f(p.max)}`);
    console.log(`ratio event/POST      ${f(e.p50 / p.p50)}           ${f(e.p99 / p.p99)}`);
  } finally {
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
