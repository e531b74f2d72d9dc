import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe } from 'vitest';
import { PG_URL, postgresAvailable } from './harness.js';
import { makeRemoteWorld, type RemoteWorld } from './live-server.js';
import { startParley, stopParley, type Running } from './process.js';
import { dropPrefix, redisDescribe, redisUrlWithPrefix, uniquePrefix } from './redis.js';

/**
 * A `describe` for suites that need PostgreSQL and Redis: in CI a missing service fails
 * (postgresAvailable / redisAvailable throw); elsewhere the suite is skipped after a loud warning.
 */
export const clusterDescribe: (name: string, fn: () => void) => void = (await postgresAvailable())
  ? redisDescribe
  : (name, fn) => describe.skipIf(true)(`${name} [no PostgreSQL]`, fn);

export interface TwoNodes {
  /** Both server processes (available inside tests, after beforeAll). */
  readonly nodes: () => { A: Running; B: Running };
  /** A guild with a channel, a person and a bot, made through node A. */
  readonly world: () => RemoteWorld;
  /** This cluster's PostgreSQL schema and Redis key prefix. */
  readonly schema: string;
  readonly prefix: string;
}

/**
 * D42/D51: two server processes on one PostgreSQL (a fresh schema of their own) and one Redis
 * (a prefix of their own), started in beforeAll and stopped in afterAll of the calling describe.
 */
export function twoNodes(
  tag: string,
  adminToken: string,
  env: Record<string, string> = {},
): TwoNodes {
  const schema = `${tag}_${randomBytes(6).toString('hex')}`;
  const prefix = uniquePrefix();
  let a: Running | undefined;
  let b: Running | undefined;
  let w: RemoteWorld | undefined;

  beforeAll(async () => {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`create schema ${schema}`);
    await c.end();
    const common = {
      PARLEY_HOST: '127.0.0.1',
      PARLEY_PORT: '0',
      PARLEY_DATA_DIR: `/tmp/parley-${schema}`,
      // D42: one database for both nodes, in this run's own schema.
      PARLEY_DATABASE_URL: `${PG_URL}?options=-c%20search_path%3D${schema}`,
      PARLEY_REDIS_URL: redisUrlWithPrefix(prefix),
      PARLEY_ADMIN_TOKEN: adminToken,
      PARLEY_RATE_GLOBAL: 'off',
      PARLEY_RATE_MESSAGES: 'off',
      PARLEY_LOG_LEVEL: 'warn',
      ...env,
    };
    // One after the other: the first migrates and creates the token secret, the second finds it.
    a = await startParley({ ...common, PARLEY_NODE_ID: '1' });
    b = await startParley({ ...common, PARLEY_NODE_ID: '2' });
    w = await makeRemoteWorld(a.origin, adminToken);
  }, 150_000);

  afterAll(async () => {
    await Promise.all([stopParley(a), stopParley(b)]);
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`drop schema if exists ${schema} cascade`);
    await c.end();
    await dropPrefix(prefix);
  }, 30_000);

  return {
    nodes: () => {
      if (!a || !b) throw new Error('the cluster has not started');
      return { A: a, B: b };
    },
    world: () => {
      if (!w) throw new Error('the cluster has not started');
      return w;
    },
    schema,
    prefix,
  };
}
