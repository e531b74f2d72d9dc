import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.js';
import { baseEnv, spawnNode, type NodeProcess } from './node-process.js';
import { PG_URL, pgSchema } from './parley-server.js';
import { compiledBaseline, serverStartCommand } from './server-build.js';

/** `sqlite-search`: with D67's search index written in the send's transaction */
export type FloorMode = 'sqlite' | 'sqlite-search' | 'pg' | 'pg-batch';

export interface FloorServer {
  readonly proc: NodeProcess;
  readonly origin: string;
  dispose(): Promise<void>;
}

/**
 * The send benchmark's floor (bench/servers/floor.ts): the least a durable send costs on this
 * stack, started as the server is (compiled, plain node, the start script's V8 flags), on SQLite
 * in a temporary directory or PostgreSQL in a schema of its own, both removed by dispose().
 */
export async function startFloor(mode: FloorMode): Promise<FloorServer> {
  const port = await freePort();
  const dir = mode.startsWith('sqlite')
    ? mkdtempSync(path.join(tmpdir(), 'parley-floor-'))
    : undefined;
  const schema = dir ? undefined : `bench_floor_${randomBytes(6).toString('hex')}`;
  if (schema) await pgSchema('create', schema);
  const target = dir
    ? path.join(dir, 'floor.db')
    : `${PG_URL}?options=-c%20search_path%3D${schema ?? ''}`;
  const cleanup = async () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (schema) await pgSchema('drop', schema);
  };
  let proc: NodeProcess;
  try {
    proc = await spawnNode({
      label: `floor server (${mode})`,
      script: compiledBaseline('bench/servers/floor.ts'),
      // BENCH_FLOOR_NODE_ARGS: flags after the start script's, as BENCH_SERVER_NODE_ARGS for the
      // Parley servers (an --import that counts promises, an --inspect for heap sampling)
      nodeArgs: [
        ...serverStartCommand().nodeArgs,
        ...(process.env['BENCH_FLOOR_NODE_ARGS'] ?? '').split(/\s+/).filter(Boolean),
      ],
      args: [String(port), mode, target],
      env: baseEnv(),
      readyText: 'floor server ready',
      // the same profile switch as the Parley servers' (send-quick): compare like with like
      cpuProfDir: process.env['BENCH_FLOOR_PROFILE_DIR'],
    });
  } catch (err) {
    await cleanup().catch(() => undefined);
    throw err;
  }
  return {
    proc,
    origin: `http://127.0.0.1:${port}`,
    dispose: async () => {
      await proc.stop();
      await cleanup();
    },
  };
}
