import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';
import { baseEnv, spawnNode, type NodeProcess } from './node-process.js';
import { serverStartCommand } from './server-build.js';

/**
 * A Parley server for one benchmark: started the way `npm start` starts it (the compiled
 * packages/server/dist/parley.js under plain node with the start script's V8 flags, built once
 * per run; see server-build.ts), on loopback, SQLite in a fresh data directory, rate limits off
 * (D27: benchmarks raise them) unless asked to keep the server's defaults, the operator API
 * enabled.
 */
export interface ParleyServer {
  readonly proc: NodeProcess;
  readonly origin: string;
  readonly gatewayUrl: string;
  readonly adminToken: string;
  readonly dataDir: string;
  readonly dbFile: string;
  /** PostgreSQL: the server's own schema (undefined on SQLite) */
  readonly schema: string | undefined;
  /** stops the process (graceful), keeping the data directory */
  stop(): Promise<void>;
  /** stops it and deletes the data directory */
  dispose(): Promise<void>;
}

export interface ParleyOptions {
  label?: string;
  /** extra PARLEY_* variables (e.g. PARLEY_HEARTBEAT_MS) */
  env?: Record<string, string>;
  /** reuse this data directory (a restart over seeded data) instead of a fresh one */
  dataDir?: string;
  cpuProfDir?: string | undefined;
  /** `default`: keep the server's own rate limits (D25, D32) instead of turning them off */
  rateLimits?: 'off' | 'default';
  /**
   * PostgreSQL (127.0.0.1:5432, database `test`, or BENCH_PG_URL) in a fresh schema of its own,
   * dropped by dispose(), instead of SQLite
   */
  postgres?: boolean;
}

export const PG_URL = process.env['BENCH_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';

export async function pgSchema(action: 'create' | 'drop', schema: string): Promise<void> {
  const { default: pg } = await import('pg');
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    await c.query(
      action === 'create' ? `create schema ${schema}` : `drop schema if exists ${schema} cascade`,
    );
  } finally {
    await c.end();
  }
}

export async function startParley(opts: ParleyOptions = {}): Promise<ParleyServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(tmpdir(), 'parley-bench-'));
  const dbFile = path.join(dataDir, 'parley.db');
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const adminToken = `bench-${randomBytes(16).toString('hex')}`;
  const schema = opts.postgres ? `bench_${randomBytes(6).toString('hex')}` : undefined;
  if (schema) await pgSchema('create', schema);
  const env: Record<string, string> = {
    ...baseEnv(),
    PARLEY_HOST: '127.0.0.1',
    PARLEY_PORT: String(port),
    PARLEY_PUBLIC_URL: origin,
    PARLEY_DATA_DIR: dataDir,
    PARLEY_DATABASE_URL: schema
      ? `${PG_URL}?options=-c%20search_path%3D${schema}`
      : `sqlite:${dbFile}`,
    PARLEY_ADMIN_TOKEN: adminToken,
    PARLEY_LOG_LEVEL: 'warn',
    PARLEY_RATE_GLOBAL: 'off',
    PARLEY_RATE_MESSAGES: 'off',
    PARLEY_RATE_GATEWAY: 'off',
    // Empty values override anything a developer's .env file might set (real variables win).
    PARLEY_REDIS_URL: '',
    PARLEY_TLS_CERT: '',
    PARLEY_TLS_KEY: '',
    PARLEY_TOKEN_SECRET: '',
    ...opts.env,
  };
  if (opts.rateLimits === 'default') {
    for (const k of ['PARLEY_RATE_GLOBAL', 'PARLEY_RATE_MESSAGES', 'PARLEY_RATE_GATEWAY'])
      if (!opts.env?.[k]) delete env[k];
  }
  // BENCH_SERVER_SCRIPT: measure another entry point that accepts `serve` and the same
  // PARLEY_* variables (a branch's copy, or a stand-in when checking the benchmarks): a .ts
  // script runs under tsx, a .js one with the start script's flags.
  const other = process.env['BENCH_SERVER_SCRIPT'];
  const start = other?.endsWith('.ts') ? undefined : serverStartCommand();
  let proc: NodeProcess;
  try {
    proc = await spawnNode({
      label: opts.label ?? 'parley server',
      script: other ?? start?.entry ?? '',
      // BENCH_SERVER_NODE_ARGS: flags after the start script's (a later flag wins), to try one
      ...(start
        ? {
            nodeArgs: [
              ...start.nodeArgs,
              ...(process.env['BENCH_SERVER_NODE_ARGS'] ?? '').split(/\s+/).filter(Boolean),
            ],
          }
        : {}),
      args: ['serve'],
      env,
      readyText: 'Parley is running',
      cpuProfDir: opts.cpuProfDir,
    });
  } catch (err) {
    if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    if (schema) await pgSchema('drop', schema).catch(() => undefined);
    throw err;
  }
  const stop = (): Promise<void> => proc.stop();
  return {
    proc,
    origin,
    gatewayUrl: `ws://127.0.0.1:${port}/gateway`,
    adminToken,
    dataDir,
    dbFile,
    schema,
    stop,
    dispose: async () => {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
      if (schema) await pgSchema('drop', schema);
    },
  };
}
