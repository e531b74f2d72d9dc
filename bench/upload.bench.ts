import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { open, rename, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fileForm, pngOfSize } from '../packages/server/test/helpers/media.js';

/**
 * upload: POST /api/v1/files/upload throughput for 1 MiB files (issue 4, acceptance 5), as a ratio
 * to writing the same bytes to disk in the same run, on the same filesystem, at the same
 * concurrency. Two baselines: a plain `writeFile` (page cache only) and the server's own
 * durability recipe (write, fsync, rename: what an upload does before it answers 200). Also the
 * CDN read-back of the same files. `npx tsx bench/upload.bench.ts` — starts its own server on
 * loopback (rate limits off, fresh data dir, SQLite), bounded by counts and a watchdog.
 */
const REPO = fileURLToPath(new URL('../', import.meta.url));
const MiB = 1024 * 1024;
const FILE_BYTES = 1 * MiB;
const COUNT = Number(process.env['BENCH_UPLOAD_COUNT'] ?? 120);
const ROUNDS = 2;
const CONCURRENCY = [1, 4] as const;
const WATCHDOG_MS = 180_000;
const ADMIN = 'bench-upload-admin-token-0123456789';

const watchdog = setTimeout(() => {
  process.stderr.write(`upload bench: watchdog (${WATCHDOG_MS / 1000} s) — giving up\n`);
  cleanup();
  process.exit(1);
}, WATCHDOG_MS);

const dataDir = mkdtempSync(path.join(tmpdir(), 'parley-bench-upload-'));
let server: ChildProcess | undefined;
let sink: ChildProcess | undefined;
function cleanup(): void {
  if (server && server.exitCode === null) server.kill('SIGKILL');
  if (sink && sink.exitCode === null) sink.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
}

/** A graceful stop (SIGTERM, as an operator would), SIGKILL after 10 s. */
async function stopServer(): Promise<void> {
  const proc = server;
  if (!proc || proc.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}
process.once('SIGINT', () => {
  cleanup();
  process.exit(130);
});

function startServer(): Promise<string> {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('PARLEY_')),
  ) as Record<string, string>;
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', 'packages/server/src/cli/main.ts', 'serve'],
    {
      cwd: REPO,
      stdio: 'pipe',
      env: {
        ...base,
        PARLEY_HOST: '127.0.0.1',
        PARLEY_PORT: '0',
        PARLEY_DATA_DIR: path.join(dataDir, 'server'),
        PARLEY_ADMIN_TOKEN: ADMIN,
        PARLEY_LOG_LEVEL: 'warn',
        PARLEY_RATE_GLOBAL: 'off',
        PARLEY_RATE_MESSAGES: 'off',
        PARLEY_RATE_GATEWAY: 'off',
        PARLEY_REDIS_URL: '',
      },
    },
  );
  server = proc;
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /API\s+(https?:\/\/\S+)\/api\/v1/.exec(out);
      if (m?.[1]) resolve(m[1]);
    });
    proc.stderr?.on('data', (c: Buffer) => process.stderr.write(c));
    proc.once('exit', (code) => reject(new Error(`server exited with ${code ?? 'a signal'}`)));
  });
}

/**
 * A third reference: a bare node:http server in its own process that reads each body and
 * throws it away — what moving 1 MiB over loopback HTTP costs here, before any parsing or disk.
 */
const SINK = `
const http = require('node:http');
const s = http.createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => res.end('{}'));
});
s.listen(0, '127.0.0.1', () => console.log('SINK ' + s.address().port));
`;

function startSink(): Promise<string> {
  const proc = spawn(process.execPath, ['-e', SINK], { stdio: 'pipe' });
  sink = proc;
  return new Promise((resolve, reject) => {
    proc.stdout?.on('data', (c: Buffer) => {
      const m = /SINK (\d+)/.exec(c.toString());
      if (m?.[1]) resolve(`http://127.0.0.1:${m[1]}`);
    });
    proc.once('exit', (code) => reject(new Error(`sink exited with ${code ?? 'a signal'}`)));
  });
}

interface Reply {
  status: number;
  body: Buffer;
}

function request(
  agent: http.Agent,
  origin: string,
  method: string,
  url: string,
  headers: Record<string, string | number>,
  body?: Buffer,
): Promise<Reply> {
  const u = new URL(url, origin);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname, method, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function adminPost(
  origin: string,
  url: string,
  body: unknown,
): Promise<Record<string, unknown>> {
  const res = await fetch(origin + url, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/** Run `count` jobs with at most `concurrency` at a time; wall time in seconds. */
async function timed(count: number, concurrency: number, job: (i: number) => Promise<void>) {
  let next = 0;
  const start = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await job(next++);
    }),
  );
  return Number(process.hrtime.bigint() - start) / 1e9;
}

const mibps = (count: number, seconds: number): number => (count * FILE_BYTES) / MiB / seconds;

async function main(): Promise<void> {
  const origin = await startServer();
  const sinkOrigin = await startSink();
  const owner = await adminPost(origin, '/admin/v1/users', { name: 'bench' });
  const bot = await adminPost(origin, '/admin/v1/bots', { ownerId: owner['id'], name: 'uploader' });
  const auth = { authorization: `Bearer ${String(bot['token'])}` };
  const bytes = pngOfSize(FILE_BYTES);
  const form = fileForm('bench.png', bytes);
  const uploadHeaders = {
    ...auth,
    'content-type': form.contentType,
    'content-length': form.body.length,
  };
  // Baseline files live on the same filesystem as the server's data dir.
  const diskDir = path.join(dataDir, 'baseline');
  mkdirSync(diskDir);
  let diskSeq = 0;

  const results: Record<string, number[]> = {};
  const add = (k: string, v: number) => (results[k] ??= []).push(v);
  const urls: string[] = [];

  for (const c of CONCURRENCY) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: c });
    // Warm-up: JIT, connections, the first shard directories.
    await timed(Math.max(8, c * 2), c, async () => {
      const r = await request(
        agent,
        origin,
        'POST',
        '/api/v1/files/upload',
        uploadHeaders,
        form.body,
      );
      if (r.status !== 200) throw new Error(`upload: ${r.status} ${r.body.toString()}`);
    });
    // Interleaved rounds: drift on a shared machine hits all three alike.
    for (let round = 0; round < ROUNDS; round++) {
      const plain = await timed(COUNT, c, async () => {
        await writeFile(path.join(diskDir, `p${diskSeq++}`), bytes);
      });
      add(`disk_write_c${c}`, mibps(COUNT, plain));
      const durable = await timed(COUNT, c, async () => {
        const n = diskSeq++;
        const tmp = path.join(diskDir, `t${n}`);
        const fh = await open(tmp, 'wx', 0o600);
        await fh.write(bytes);
        await fh.sync();
        await fh.close();
        await rename(tmp, path.join(diskDir, `d${n}`));
      });
      add(`disk_fsync_c${c}`, mibps(COUNT, durable));
      rmSync(diskDir, { recursive: true, force: true });
      mkdirSync(diskDir);

      const up = await timed(COUNT, c, async () => {
        const r = await request(
          agent,
          origin,
          'POST',
          '/api/v1/files/upload',
          uploadHeaders,
          form.body,
        );
        if (r.status !== 200) throw new Error(`upload: ${r.status} ${r.body.toString()}`);
        if (urls.length < COUNT) urls.push((JSON.parse(r.body.toString()) as { url: string }).url);
      });
      add(`upload_c${c}`, mibps(COUNT, up));

      const bare = await timed(COUNT, c, async () => {
        const r = await request(agent, sinkOrigin, 'POST', '/', uploadHeaders, form.body);
        if (r.status !== 200) throw new Error(`sink: ${r.status}`);
      });
      add(`http_sink_c${c}`, mibps(COUNT, bare));

      const down = await timed(COUNT, c, async (i) => {
        const r = await request(
          agent,
          origin,
          'GET',
          new URL(urls[i % urls.length] ?? '').pathname,
          {},
        );
        if (r.status !== 200 || r.body.length !== FILE_BYTES) throw new Error(`cdn: ${r.status}`);
      });
      add(`cdn_read_c${c}`, mibps(COUNT, down));
    }
    agent.destroy();
  }

  const mean = (k: string) => {
    const v = results[k] ?? [];
    return v.reduce((a, b) => a + b, 0) / Math.max(1, v.length);
  };
  const r2 = (n: number) => Math.round(n * 100) / 100;
  const columns = [
    ['conc', (c: number) => c],
    ['upload MiB/s', (c: number) => r2(mean(`upload_c${c}`))],
    ['writeFile MiB/s', (c: number) => r2(mean(`disk_write_c${c}`))],
    ['write+fsync+rename MiB/s', (c: number) => r2(mean(`disk_fsync_c${c}`))],
    ['HTTP sink MiB/s', (c: number) => r2(mean(`http_sink_c${c}`))],
    ['CDN read MiB/s', (c: number) => r2(mean(`cdn_read_c${c}`))],
    ['upload ÷ writeFile', (c: number) => r2(mean(`upload_c${c}`) / mean(`disk_write_c${c}`))],
    ['upload ÷ fsync-write', (c: number) => r2(mean(`upload_c${c}`) / mean(`disk_fsync_c${c}`))],
    ['upload ÷ HTTP sink', (c: number) => r2(mean(`upload_c${c}`) / mean(`http_sink_c${c}`))],
  ] as const;
  const out = process.stdout;
  out.write(
    `\nupload bench — ${COUNT} × 1 MiB per measurement, ${ROUNDS} interleaved rounds (mean), ` +
      `node ${process.version}, server + client on one machine\n\n`,
  );
  out.write(`${columns.map(([name]) => name).join(' | ')}\n`);
  out.write(`${columns.map(([name]) => '-'.repeat(name.length)).join('-|-')}\n`);
  const summary: Record<string, number> = {};
  for (const c of CONCURRENCY) {
    out.write(`${columns.map(([name, f]) => String(f(c)).padStart(name.length)).join(' | ')}\n`);
    Object.assign(summary, {
      [`upload_mibps_c${c}`]: r2(mean(`upload_c${c}`)),
      [`disk_write_mibps_c${c}`]: r2(mean(`disk_write_c${c}`)),
      [`disk_fsync_mibps_c${c}`]: r2(mean(`disk_fsync_c${c}`)),
      [`http_sink_mibps_c${c}`]: r2(mean(`http_sink_c${c}`)),
      [`cdn_read_mibps_c${c}`]: r2(mean(`cdn_read_c${c}`)),
      [`ratio_upload_disk_write_c${c}`]: r2(mean(`upload_c${c}`) / mean(`disk_write_c${c}`)),
      [`ratio_upload_disk_fsync_c${c}`]: r2(mean(`upload_c${c}`) / mean(`disk_fsync_c${c}`)),
    });
  }
  out.write(
    `\n${JSON.stringify({ bench: 'upload', fileBytes: FILE_BYTES, count: COUNT, ...summary })}\n`,
  );
}

main()
  .then(stopServer)
  .then(() => {
    clearTimeout(watchdog);
    cleanup();
  })
  .catch((err: unknown) => {
    process.stderr.write(
      `upload bench failed: ${err instanceof Error ? err.stack : String(err)}\n`,
    );
    cleanup();
    process.exit(1);
  });
