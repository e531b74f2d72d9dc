import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { describe, expect } from 'vitest';
import { loadConfig, type Config } from '../../src/config/config.js';
import { buildApp } from '../../src/http/app.js';
import type { Clock } from '../../src/ids/clock.js';
import { openServices, type Services } from '../../src/services.js';

/**
 * The test harness: a real server app over a real database — SQLite (a fresh in-memory
 * database) or PostgreSQL (a fresh schema per harness, dropped afterwards), chosen by
 * PARLEY_TEST_DIALECT, so one HTTP suite runs on both (ARCHITECTURE habit 5).
 */
export type TestDialect = 'sqlite' | 'postgres';
export const dialect: TestDialect =
  process.env['PARLEY_TEST_DIALECT'] === 'postgres' ? 'postgres' : 'sqlite';
export const PG_URL =
  process.env['PARLEY_TEST_PG_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test';
export const ADMIN_TOKEN = 'test-admin-token-0123456789';

let pgReachable: boolean | undefined;

/** Is PostgreSQL there? In CI it must be (a missing service fails); elsewhere we say so loudly. */
export async function postgresAvailable(): Promise<boolean> {
  if (pgReachable !== undefined) return pgReachable;
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('select 1');
    pgReachable = true;
  } catch (err) {
    if (process.env['CI'] === 'true')
      throw new Error(`PostgreSQL is required in CI but unreachable at ${PG_URL}: ${String(err)}`);
    console.warn(
      `\n!!!! PostgreSQL unreachable at ${PG_URL}: the postgres suites are SKIPPED on this machine !!!!\n`,
    );
    pgReachable = false;
  } finally {
    await client.end().catch(() => {});
  }
  return pgReachable;
}

const pgOk = dialect === 'postgres' ? await postgresAvailable() : true;

/** `describe` that runs on the selected dialect, or is skipped (loudly) when its service is missing. */
export const dbDescribe = (name: string, fn: () => void): void => {
  describe.skipIf(!pgOk)(`${name} [${dialect}]`, fn);
};

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- test bodies are checked field by field
  body: any;
  raw: string;
}

export interface Harness {
  /** where its data lives (a second harness may share it: a second node) */
  database: { url: string; schema?: string | undefined };
  app: FastifyInstance;
  services: Services;
  config: Config;
  request(opts: InjectOptions): Promise<Reply>;
  /** calls with `Authorization: Bearer <token>` (undefined token: no header) */
  as(token: string | undefined): Caller;
  /** D45: calls to the people's API `/app/v1` with a session token as bearer (undefined: none) */
  people(token: string | undefined): Caller;
  admin: Caller;
  close(): Promise<void>;
}

export interface Caller {
  get(url: string): Promise<Reply>;
  delete(url: string): Promise<Reply>;
  post(url: string, body?: unknown): Promise<Reply>;
  put(url: string, body?: unknown): Promise<Reply>;
  patch(url: string, body?: unknown): Promise<Reply>;
}

export async function createHarness(
  opts: {
    env?: Record<string, string>;
    clock?: Clock;
    webDir?: string;
    /** a second node on the first one's database (its owner drops it) */
    sameDatabaseAs?: Harness;
    /** a database the test made itself (an upgrade fixture): used as it is, never dropped */
    databaseUrl?: string;
  } = {},
): Promise<Harness> {
  let schema: string | undefined;
  let databaseUrl = 'sqlite::memory:';
  const owns = opts.sameDatabaseAs === undefined && opts.databaseUrl === undefined;
  if (opts.databaseUrl !== undefined) {
    databaseUrl = opts.databaseUrl;
  } else if (opts.sameDatabaseAs) {
    databaseUrl = opts.sameDatabaseAs.database.url;
    schema = opts.sameDatabaseAs.database.schema;
  } else if (dialect === 'postgres') {
    schema = `t_${randomBytes(6).toString('hex')}`;
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`create schema ${schema}`);
    await c.end();
    databaseUrl = PG_URL;
  }
  const config = loadConfig({
    PARLEY_DATABASE_URL: databaseUrl,
    PARLEY_PUBLIC_URL: 'http://parley.test',
    PARLEY_ADMIN_TOKEN: ADMIN_TOKEN,
    PARLEY_DATA_DIR: '/tmp/parley-test-unused',
    // Limits are off unless a suite tests them (the rate-limit suites pass their own values).
    PARLEY_RATE_GLOBAL: 'off',
    PARLEY_RATE_MESSAGES: 'off',
    PARLEY_RATE_GATEWAY: 'off',
    ...opts.env,
  });
  const services = await openServices(config, {
    ...(schema ? { schema } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
    poolSize: 5,
  });
  const app = await buildApp(services, opts.webDir === undefined ? {} : { webDir: opts.webDir });
  await app.ready();

  const request = async (o: InjectOptions): Promise<Reply> => {
    const res = await app.inject(o);
    let body: unknown = undefined;
    if (res.body !== '') {
      try {
        body = JSON.parse(res.body);
      } catch {
        body = res.body;
      }
    }
    return { status: res.statusCode, headers: res.headers, body, raw: res.body };
  };
  const caller = (token: string | undefined, prefix: string): Caller => {
    const headers = (): Record<string, string> =>
      token === undefined ? {} : { authorization: `Bearer ${token}` };
    const withBody = (method: 'POST' | 'PUT' | 'PATCH', url: string, body: unknown) =>
      request({
        method,
        url: prefix + url,
        headers: {
          ...headers(),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
    return {
      get: (url) => request({ method: 'GET', url: prefix + url, headers: headers() }),
      delete: (url) => request({ method: 'DELETE', url: prefix + url, headers: headers() }),
      post: (url, body) => withBody('POST', url, body),
      put: (url, body) => withBody('PUT', url, body),
      patch: (url, body) => withBody('PATCH', url, body),
    };
  };
  return {
    database: { url: config.databaseUrl, schema },
    app,
    services,
    config,
    request,
    as: (token) => caller(token, '/api/v1'),
    people: (token) => caller(token, '/app/v1'),
    admin: caller(ADMIN_TOKEN, '/admin/v1'),
    close: async () => {
      await app.close();
      await services.close();
      if (schema && owns) {
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        await c.query(`drop schema ${schema} cascade`);
        await c.end();
      }
    },
  };
}

/** A small world built through the operator API: a guild, channels, people and a bot in it. */
export interface World {
  guildId: number;
  channelId: number;
  owner: { id: number; token: string };
  human: { id: number; token: string };
  bot: { id: number; userId: number; token: string; webhookSecret: string };
}

export async function expectStatus(r: Reply, status: number): Promise<Reply> {
  if (r.status !== status) throw new Error(`expected HTTP ${status}, got ${r.status}: ${r.raw}`);
  return r;
}

export async function makeUser(h: Harness, name: string): Promise<{ id: number; token: string }> {
  const u = await expectStatus(await h.admin.post('/users', { name }), 201);
  const s = await expectStatus(await h.admin.post(`/users/${u.body.id}/sessions`), 201);
  return { id: u.body.id, token: s.body.token };
}

export async function makeBot(h: Harness, ownerId: number, name = 'bot'): Promise<World['bot']> {
  const b = await expectStatus(await h.admin.post('/bots', { ownerId, name }), 201);
  return {
    id: b.body.bot.id,
    userId: b.body.bot.botUser.id,
    token: b.body.token,
    webhookSecret: b.body.webhookSecret,
  };
}

export async function join(
  h: Harness,
  guildId: number,
  userId: number,
  roles?: number[],
): Promise<void> {
  const r = await h.admin.put(`/guilds/${guildId}/members/${userId}`, roles ? { roles } : {});
  if (r.status !== 201 && r.status !== 200) throw new Error(`join failed: ${r.status} ${r.raw}`);
}

export async function makeWorld(h: Harness): Promise<World> {
  const owner = await makeUser(h, 'owner');
  const human = await makeUser(h, 'human');
  const guild = await expectStatus(
    await h.admin.post('/guilds', { name: 'Guild', ownerId: owner.id }),
    201,
  );
  const channel = await expectStatus(
    await h.admin.post(`/guilds/${guild.body.id}/channels`, { name: 'general', topic: 'hi' }),
    201,
  );
  const bot = await makeBot(h, owner.id);
  await join(h, guild.body.id, human.id);
  await join(h, guild.body.id, bot.userId);
  return { guildId: guild.body.id, channelId: channel.body.id, owner, human, bot };
}

/** D5–D7: an error answer — the status, JSON, the body exactly `{error:{code, message, …}}`, a request id. */
export function expectError(r: Reply, status: number, code: string, what = ''): void {
  expect(r.status, `${what} ${r.raw}`).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(r.body)).toEqual(['error']);
  expect(r.body.error.code, what).toBe(code);
  expect(typeof r.body.error.message).toBe('string');
  expect(r.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
}
