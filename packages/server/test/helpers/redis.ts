import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { describe } from 'vitest';

/**
 * Redis for the suites that need it (shared rate limits, D27). Like `postgresAvailable` in
 * harness.ts: in CI (CI=true) Redis must be there and a missing service fails the run; elsewhere
 * its absence is announced loudly and those suites are skipped.
 */
export const REDIS_URL = process.env['PARLEY_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

let reachable: boolean | undefined;

export async function redisAvailable(): Promise<boolean> {
  if (reachable !== undefined) return reachable;
  const client = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 2000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.ping();
    reachable = true;
  } catch (err) {
    if (process.env['CI'] === 'true')
      throw new Error(`Redis is required in CI but unreachable at ${REDIS_URL}: ${String(err)}`);
    console.warn(
      `\n!!!! Redis unreachable at ${REDIS_URL}: the Redis suites are SKIPPED on this machine !!!!\n`,
    );
    reachable = false;
  } finally {
    client.disconnect();
  }
  return reachable;
}

const redisOk = await redisAvailable();

/** `describe` that runs when Redis is there, or is skipped (loudly, never in CI). */
export const redisDescribe = (name: string, fn: () => void): void => {
  describe.skipIf(!redisOk)(`${name} [redis]`, fn);
};

/** A key prefix of its own for each test run, so parallel runs never share a bucket. */
export const uniquePrefix = (): string => `parley-test:${randomBytes(6).toString('hex')}:`;

/** The Redis URL with a run-unique `keyPrefix` (ioredis reads options from the query). */
export function redisUrlWithPrefix(prefix: string): string {
  const u = new URL(REDIS_URL);
  u.searchParams.set('keyPrefix', prefix);
  return u.toString();
}

/** Delete every key under a prefix (test clean-up). */
export async function dropPrefix(prefix: string): Promise<void> {
  const client = new Redis(REDIS_URL, { lazyConnect: true });
  client.on('error', () => {});
  try {
    await client.connect();
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      if (keys.length > 0) await client.del(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
}
