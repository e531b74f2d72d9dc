import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { track } from './children.js';
import { REPO_ROOT } from './paths.js';
import { rssBytes } from './rss.js';

/** A Node process started by a benchmark: a Parley server or the hello-world baseline. */
export class NodeProcess {
  private exited: Promise<void>;

  constructor(
    readonly label: string,
    readonly child: ChildProcess,
    readonly output: { stdout: string; stderr: string },
  ) {
    this.exited =
      child.exitCode !== null || child.signalCode !== null
        ? Promise.resolve()
        : once(child, 'exit').then(() => undefined);
  }

  get pid(): number {
    if (this.child.pid === undefined) throw new Error(`${this.label} has no pid`);
    return this.child.pid;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  rss(): number {
    return rssBytes(this.pid);
  }

  /** SIGTERM (graceful: a CPU profile gets written), SIGKILL if it does not exit in time. */
  async stop(graceMs = 15_000): Promise<void> {
    if (!this.running) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

export interface SpawnOptions {
  label: string;
  /** the script, relative to the repository root */
  script: string;
  /**
   * node options before the script. Without them the script runs under `node --import tsx`
   * (TypeScript source); with them (even an empty list) under plain node — compiled JavaScript
   * started as `npm start` starts the server.
   */
  nodeArgs?: readonly string[];
  args?: string[];
  env: Record<string, string>;
  /** resolves when stdout contains this */
  readyText: string;
  readyTimeoutMs?: number;
  /** `--cpu-prof` into this directory */
  cpuProfDir?: string | undefined;
}

/**
 * Starts `node [nodeArgs | --import tsx] <script>` from the repository root and waits for its
 * ready line.
 */
export async function spawnNode(opts: SpawnOptions): Promise<NodeProcess> {
  const nodeArgs = [
    ...(opts.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProfDir}`] : []),
    ...(opts.nodeArgs ?? ['--import', 'tsx']),
    opts.script,
    ...(opts.args ?? []),
  ];
  const child = spawn(process.execPath, nodeArgs, {
    cwd: REPO_ROOT,
    env: opts.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);
  const output = { stdout: '', stderr: '' };
  const proc = new NodeProcess(opts.label, child, output);
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  // Keep only the tail: a long run must not accumulate the server's whole log in memory.
  const keep = (s: string): string => (s.length > 20_000 ? s.slice(-20_000) : s);
  // BENCH_START_TIMEOUT_MS: a machine shared with other heavy work starts servers slowly.
  const readyMs = opts.readyTimeoutMs ?? (Number(process.env['BENCH_START_TIMEOUT_MS']) || 30_000);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => fail(new Error(`${opts.label} did not start within ${readyMs} ms`)),
      readyMs,
    );
    const onExit = (code: number | null, signal: string | null): void =>
      fail(new Error(`${opts.label} exited during start-up (${signal ?? `code ${code}`})`));
    const fail = (err: Error): void => {
      clearTimeout(timer);
      child.off('exit', onExit);
      if (proc.running) child.kill('SIGKILL');
      // The line naming the error says more than the stack under it.
      const lines = output.stderr.trim().split('\n');
      const cause = lines.find((l) => /Error\b/.test(l)) ?? lines.slice(-3).join('\n');
      reject(cause ? new Error(`${err.message}: ${cause.trim()}`) : err);
    };
    child.stdout?.on('data', (chunk: string) => {
      output.stdout = keep(output.stdout + chunk);
      if (output.stdout.includes(opts.readyText)) {
        clearTimeout(timer);
        child.off('exit', onExit);
        resolve();
      }
    });
    child.stderr?.on('data', (chunk: string) => {
      output.stderr = keep(output.stderr + chunk);
    });
    child.once('exit', onExit);
  });
  return proc;
}

/** The environment a child starts from: this one without any PARLEY_* (the benchmark decides). */
export function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith('PARLEY_')) env[k] = v;
  }
  return env;
}
