import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Helpers for tests that run Parley as a real child process, the way `npm start` does:
 * `node --import tsx packages/server/src/cli/main.ts …` from the repository root.
 */
export const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
export const CLI = 'packages/server/src/cli/main.ts';

/** A port for a server a test starts (one picker for the tests and the benchmarks). */
export { freePort } from '../../../../bench/lib/free-port.js';

/** A fresh temporary directory; `remove()` deletes it. */
export function tempDir(prefix = 'parley-proc-'): { path: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { path: dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The child's environment: ours without any PARLEY_* variable (a developer's shell must not
 * leak into the test), plus the given ones.
 */
export function childEnv(env: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('PARLEY_')) base[k] = v;
  }
  return { ...base, ...env };
}

export interface Exited {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `bin/parley.js`: what `npm run parley` and `npx parley` run (the compiled bundle). */
export const BIN = 'packages/server/bin/parley.js';

/** Run `parley <args>` to completion (killed after `timeoutMs`). */
export function runParley(
  args: string[],
  env: Record<string, string>,
  timeoutMs = 30_000,
  how: 'source' | 'bin' = 'source',
): Promise<Exited> {
  const argv = how === 'bin' ? [BIN, ...args] : ['--import', 'tsx', CLI, ...args];
  const proc = spawn(process.execPath, argv, {
    cwd: REPO,
    env: childEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(
        new Error(
          `parley ${args.join(' ')} did not exit in ${timeoutMs} ms:\n${stdout}\n${stderr}`,
        ),
      );
    }, timeoutMs);
    proc.once('error', reject);
    proc.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

export interface Running {
  proc: ChildProcess;
  /** everything printed so far */
  stdout(): string;
  stderr(): string;
  /** the banner's lines (D43), once printed */
  banner: string[];
  /** `http://host:port` from the banner's API line */
  origin: string;
  /** `ws://host:port/gateway` from the banner's Gateway line */
  gatewayUrl: string;
  /** resolves when the process has exited */
  exited: Promise<Exited>;
}

/** Start `parley serve` and wait until its banner (D43) is out, through the Docs line. */
export function startParley(env: Record<string, string>, timeoutMs = 60_000): Promise<Running> {
  const proc = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve'], {
    cwd: REPO,
    // D53: a SIGTERM drains for PARLEY_DRAIN_MS (default 5 s) first; tests that do not test the
    // drain keep it short.
    env: childEnv({ PARLEY_DRAIN_MS: '50', ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<Exited>((resolve) => {
    proc.once('close', (code, signal) => resolve({ code, signal, stdout: out, stderr: err }));
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`server did not print its banner in ${timeoutMs} ms:\n${out}\n${err}`));
    }, timeoutMs);
    const onData = (): void => {
      const lines = out.split('\n');
      const start = lines.findIndex((l) => l.startsWith('Parley is running'));
      if (start < 0) return;
      const banner = lines.slice(start);
      const docs = banner.findIndex((l) => /^\s+Docs\s/.test(l));
      if (docs < 0 || banner.length <= docs + 1) return; // the Docs line is not complete yet
      const api = banner
        .map((l) => /^\s+API\s+(https?:\/\/\S+?)\/api\/v1\s*$/.exec(l))
        .find(Boolean);
      const gateway = banner.map((l) => /^\s+Gateway\s+(wss?:\/\/\S+)\s*$/.exec(l)).find(Boolean);
      if (!api?.[1] || !gateway?.[1]) return;
      clearTimeout(timer);
      proc.stdout.off('data', onData);
      resolve({
        proc,
        stdout: () => out,
        stderr: () => err,
        banner: banner.filter((l) => l.trim() !== ''),
        origin: api[1],
        gatewayUrl: gateway[1],
        exited,
      });
    };
    proc.stdout.on('data', onData);
    void exited.then((e) => {
      clearTimeout(timer);
      reject(
        new Error(
          `server exited (${e.code ?? e.signal}) before its banner:\n${e.stdout}\n${e.stderr}`,
        ),
      );
    });
  });
}

/** Send `signal` and wait for the exit (SIGKILL after `timeoutMs`). */
export async function stopParley(
  r: Running | undefined,
  signal: NodeJS.Signals = 'SIGTERM',
  timeoutMs = 15_000,
): Promise<Exited | undefined> {
  if (!r) return undefined;
  if (r.proc.exitCode === null && r.proc.signalCode === null) {
    r.proc.kill(signal);
    const timer = setTimeout(() => r.proc.kill('SIGKILL'), timeoutMs);
    const e = await r.exited;
    clearTimeout(timer);
    return e;
  }
  return r.exited;
}

/** Is something accepting TCP connections on the port? */
export function isListening(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ port, host });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

export interface HttpAnswer {
  status: number;
  headers: Headers;
  /** the body as text ('' when there is none) */
  text: string;
  /** the body parsed as JSON; undefined when there is none */
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- checked field by field
}

/**
 * THE JSON call of the tests that talk to a real server: `body` (if any) goes as JSON, `token`
 * (if any) as a Bearer token, `headers` on top. A non-empty answer that is not JSON throws.
 */
export async function call(
  origin: string,
  method: string,
  url: string,
  token?: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  const res = await fetch(origin + url, {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    throw new Error(`${method} ${url} → ${res.status}, not JSON: ${text.slice(0, 500)}`);
  }
  return { status: res.status, headers: res.headers, text, body: json };
}

/** `call`, for steps that must succeed: the parsed body, or an error naming the status and text. */
export async function callOk(
  origin: string,
  method: string,
  url: string,
  token?: string,
  body?: unknown,
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- checked field by field
): Promise<any> {
  const r = await call(origin, method, url, token, body);
  if (r.status >= 300) throw new Error(`${method} ${url} → ${r.status} ${r.text}`);
  return r.body;
}
