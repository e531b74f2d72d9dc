import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, postgresAvailable } from '../helpers/harness.js';
import { connectPatiently, makeRemoteWorld } from '../helpers/live-server.js';
import {
  call,
  freePort,
  REPO,
  startParley,
  stopParley,
  tempDir,
  type Running,
} from '../helpers/process.js';
import { dropPrefix, redisDescribe, redisUrlWithPrefix, uniquePrefix } from '../helpers/redis.js';

// Issue #13: docs/deploy.md's several-node recipe is the one this test runs. The guide's
// variable block (between the parley-cluster-env markers) is read here; two nodes start with
// exactly those variables — site-specific values (addresses, the database, secrets) replaced by
// this machine's — and an event sent to node 1 reaches a bot connected to node 2.
const pgOk = await postgresAvailable();
const suite = pgOk
  ? redisDescribe
  : (name: string, fn: () => void) => describe.skipIf(true)(`${name} [no PostgreSQL]`, fn);

function guideVariables(): Map<string, string> {
  const guide = readFileSync(`${REPO}docs/deploy.md`, 'utf8');
  const m =
    /<!-- parley-cluster-env[^>]*-->\s*```sh\n([\s\S]*?)```\s*<!-- \/parley-cluster-env -->/.exec(
      guide,
    );
  if (!m?.[1]) throw new Error('docs/deploy.md lost its parley-cluster-env block');
  const vars = new Map<string, string>();
  for (const line of m[1].split('\n')) {
    const kv = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (kv?.[1] !== undefined) vars.set(kv[1], kv[2] ?? '');
  }
  return vars;
}

suite('docs/deploy.md: two nodes on PostgreSQL + Redis', () => {
  const schema = `deploy_${randomBytes(6).toString('hex')}`;
  const prefix = uniquePrefix();
  const data = tempDir('parley-deploy-');
  const nodes: Running[] = [];

  afterAll(async () => {
    await Promise.all(nodes.map((n) => stopParley(n)));
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`drop schema if exists ${schema} cascade`);
    await c.end();
    await dropPrefix(prefix);
    data.remove();
  }, 30_000);

  it('the guide names PARLEY_NODE_ID, PARLEY_TRUST_PROXY, the database and Redis; an event crosses nodes', async () => {
    const guide = guideVariables();
    for (const v of [
      'PARLEY_NODE_ID',
      'PARLEY_TRUST_PROXY',
      'PARLEY_DATABASE_URL',
      'PARLEY_REDIS_URL',
      'PARLEY_PUBLIC_URL',
    ])
      expect(guide.has(v), v).toBe(true);

    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`create schema ${schema}`);
    await c.end();
    const ports = [await freePort(), await freePort()];
    const admin = randomBytes(16).toString('hex');
    const local: Record<string, (node: number) => string> = {
      PARLEY_HOST: () => '127.0.0.1',
      PARLEY_PORT: (n) => String(ports[n]),
      // The balancer's address in the guide; here node 1 stands in for it.
      PARLEY_PUBLIC_URL: () => `http://127.0.0.1:${ports[0]}`,
      PARLEY_DATABASE_URL: () => `${PG_URL}?options=-c%20search_path%3D${schema}`,
      PARLEY_REDIS_URL: () => redisUrlWithPrefix(prefix),
      PARLEY_DATA_DIR: () => data.path,
      PARLEY_ADMIN_TOKEN: () => admin,
      PARLEY_TOKEN_SECRET: () => 'deploy-test-token-secret-0123456789',
      PARLEY_NODE_ID: (n) => String(n + 1),
    };
    const envOf = (n: number): Record<string, string> => {
      const env: Record<string, string> = {};
      for (const [k, v] of guide) env[k] = local[k]?.(n) ?? v; // the guide's own value otherwise
      return env;
    };
    // Exactly the guide's variables (values aside).
    expect(Object.keys(envOf(0)).sort()).toEqual([...guide.keys()].sort());
    expect(envOf(0)['PARLEY_TRUST_PROXY']).toBe(guide.get('PARLEY_TRUST_PROXY'));

    // One after the other: the first creates the tables.
    nodes.push(await startParley(envOf(0)));
    nodes.push(await startParley(envOf(1)));
    const origins = ports.map((p) => `http://127.0.0.1:${p}`);
    for (const o of origins) {
      const ready = await fetch(`${o}/readyz`);
      expect(ready.status, o).toBe(200);
    }
    const [one, two] = origins as [string, string];
    const w = await makeRemoteWorld(one, admin);
    const bot = await connectPatiently(`ws://127.0.0.1:${ports[1]}/gateway`, w.bot.token);
    await bot.ready();
    const sent = await call(
      one,
      'POST',
      `/api/v1/channels/${w.channelId}/messages`,
      w.human.token,
      {
        content: 'from node 1',
      },
    );
    expect(sent.status).toBe(200);
    const got = await bot.dispatch('MESSAGE_CREATE');
    expect(got.d).toMatchObject({ id: sent.body.id, content: 'from node 1' });
    // And the other way: written on node 2, read on node 1.
    const back = await call(
      two,
      'POST',
      `/api/v1/channels/${w.channelId}/messages`,
      w.human.token,
      {
        content: 'from node 2',
      },
    );
    expect(back.status).toBe(200);
    const list = await call(one, 'GET', `/api/v1/channels/${w.channelId}/messages`, w.human.token);
    expect(list.body.messages[0].id).toBe(back.body.id);
    bot.terminate();
  }, 180_000);
});
