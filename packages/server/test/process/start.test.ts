import { existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  freePort,
  isListening,
  startParley,
  stopParley,
  tempDir,
  type Running,
} from '../helpers/process.js';

// Acceptance 1 (issue 2), D43: `npm start` on a fresh data directory runs the server on the
// embedded default (SQLite under PARLEY_DATA_DIR), creates what it needs, prints where the API,
// gateway and docs are, serves the API, and stops cleanly on SIGTERM.

const ADMIN = 'process-start-admin-token-0123';

describe('npm start (parley serve) on a fresh data directory', () => {
  const tmp = tempDir();
  // A data directory that does not exist yet: the server creates it (D43).
  const dataDir = path.join(tmp.path, 'fresh', 'data');
  let port: number;
  let server: Running | undefined;
  let botToken = '';

  beforeAll(async () => {
    port = await freePort();
    server = await startParley({
      PARLEY_DATA_DIR: dataDir,
      PARLEY_PORT: String(port),
      PARLEY_ADMIN_TOKEN: ADMIN,
      PARLEY_LOG_LEVEL: 'warn',
    });
  }, 90_000);

  afterAll(async () => {
    await stopParley(server, 'SIGKILL');
    tmp.remove();
  });

  it('prints the API, Gateway and Docs URLs on the configured port (D1, D43)', () => {
    const s = server as Running;
    const origin = `http://127.0.0.1:${port}`;
    expect(s.origin).toBe(origin);
    const line = (label: string): string => {
      const l = s.banner.find((x) => new RegExp(`^\\s+${label}\\s`).test(x));
      expect(l, `${label} line in:\n${s.banner.join('\n')}`).toBeDefined();
      return (l ?? '').trim();
    };
    expect(line('API')).toMatch(new RegExp(`^API\\s+${origin}/api/v1$`));
    expect(line('Gateway')).toMatch(
      new RegExp(`^Gateway\\s+ws://127\\.0\\.0\\.1:${port}/gateway$`),
    );
    expect(line('Docs')).toContain(`${origin}/docs`);
    expect(line('Web app')).toBe(`Web app  ${origin}/`); // D55
    expect(s.banner[0]).toMatch(/^Parley is running \(sqlite/);
    // Nothing alarming on stderr during a normal start.
    expect(s.stderr()).toBe('');
  });

  it('creates the SQLite database in the data directory', () => {
    const db = path.join(dataDir, 'parley.db');
    expect(existsSync(db)).toBe(true);
    expect(statSync(db).size).toBeGreaterThan(0);
  });

  it('serves the API: 401 in the D5 form without a token, the docs, and a bot end to end', async () => {
    const origin = (server as Running).origin;
    const anon = await call(origin, 'GET', '/api/v1/bot/me');
    expect(anon.status).toBe(401);
    expect(anon.headers.get('www-authenticate')).toBe('Bearer');
    expect(anon.body).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.any(String) } });
    expect(anon.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);

    const docs = await fetch(`${origin}/docs`, { redirect: 'follow' });
    expect(docs.status).toBe(200);
    const openapi = await call(origin, 'GET', '/openapi.json');
    expect(openapi.status).toBe(200);
    expect(Object.keys(openapi.body.paths)).toContain('/api/v1/bot/me');

    const user = await call(origin, 'POST', '/admin/v1/users', ADMIN, { name: 'alice' });
    expect(user.status).toBe(201);
    const guild = await call(origin, 'POST', '/admin/v1/guilds', ADMIN, {
      name: 'g',
      ownerId: user.body.id,
    });
    const channel = await call(
      origin,
      'POST',
      `/admin/v1/guilds/${guild.body.id}/channels`,
      ADMIN,
      {
        name: 'general',
      },
    );
    const bot = await call(origin, 'POST', '/admin/v1/bots', ADMIN, {
      ownerId: user.body.id,
      name: 'helper',
    });
    expect(bot.status).toBe(201);
    botToken = bot.body.token;
    await call(
      origin,
      'PUT',
      `/admin/v1/guilds/${guild.body.id}/members/${bot.body.bot.botUser.id}`,
      ADMIN,
      {},
    );
    const me = await call(origin, 'GET', '/api/v1/bot/me', botToken);
    expect(me.status).toBe(200);
    expect(me.body.avatar).toBe(`${origin}/cdn/avatars/default.png`);
    const sent = await call(
      origin,
      'POST',
      `/api/v1/channels/${channel.body.id}/messages`,
      botToken,
      {
        content: 'hello over real HTTP',
      },
    );
    expect(sent.status).toBe(200);
    // D44 over a real socket: bodiless requests with Content-Type: application/json.
    const json = { 'content-type': 'application/json' };
    const list = await call(
      origin,
      'GET',
      `/api/v1/channels/${channel.body.id}/messages`,
      botToken,
      undefined,
      json,
    );
    expect(list.status).toBe(200);
    expect(list.body.messages[0].content).toBe('hello over real HTTP');
    const dm = await call(
      origin,
      'POST',
      `/api/v1/users/${user.body.id}/dm`,
      botToken,
      undefined,
      json,
    );
    expect(dm.status).toBe(200);
    const del = await call(
      origin,
      'DELETE',
      `/api/v1/channels/${channel.body.id}/messages/${sent.body.id}`,
      botToken,
      undefined,
      json,
    );
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
  });

  it('stops cleanly on SIGTERM: exit code 0, the port is released, no error output', async () => {
    const e = await stopParley(server, 'SIGTERM');
    expect(e?.signal).toBeNull();
    expect(e?.code).toBe(0);
    expect(e?.stderr).toBe('');
    expect(await isListening(port)).toBe(false);
  });

  it('a restart on the same data directory keeps the data: the bot token still works', async () => {
    expect(botToken).not.toBe('');
    const again = await startParley({
      PARLEY_DATA_DIR: dataDir,
      PARLEY_PORT: String(port),
      PARLEY_LOG_LEVEL: 'warn',
    });
    try {
      // Without PARLEY_ADMIN_TOKEN the operator line says so (D41).
      expect(again.banner.find((l) => /^\s+Operator\s/.test(l))).toMatch(/disabled/);
      const me = await call(again.origin, 'GET', '/api/v1/bot/me', botToken);
      expect(me.status).toBe(200);
      expect(me.body.name).toBe('helper');
      const e = await stopParley(again, 'SIGINT');
      expect(e?.code).toBe(0);
    } finally {
      await stopParley(again, 'SIGKILL');
    }
  }, 90_000);
});

// D43 as the README says it: `npm start` runs in the server's workspace folder, yet the default
// `./data` is where the operator ran npm (npm's INIT_CWD), and the banner says where it is.
describe('the default data directory is relative to where npm was run', () => {
  const tmp = tempDir();
  const operatorDir = path.join(tmp.path, 'checkout');
  let server: Running | undefined;

  afterAll(async () => {
    await stopParley(server, 'SIGKILL');
    tmp.remove();
  });

  it('creates ./data in that folder and prints it', async () => {
    mkdirSync(operatorDir, { recursive: true });
    server = await startParley({
      INIT_CWD: operatorDir,
      PARLEY_PORT: '0',
      PARLEY_LOG_LEVEL: 'warn',
    });
    const db = path.join(operatorDir, 'data', 'parley.db');
    expect(existsSync(db)).toBe(true);
    const data = server.banner.find((l) => /^\s+Data\s/.test(l))?.trim();
    expect(data).toBe(`Data     ${path.join(operatorDir, 'data')} (${db})`);
  }, 90_000);
});
