import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verify } from '@octokit/webhooks-methods';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPatiently } from '../helpers/live-server.js';
import {
  callOk,
  childEnv,
  CLI,
  freePort,
  REPO,
  startParley,
  stopParley,
  tempDir,
  type Running,
} from '../helpers/process.js';

// Issue 14: `parley listen --forward-to` holds the bot's gateway session and POSTs each event to
// a local receiver exactly as webhook delivery would (D38) — checked here with an outside
// verifier of `sha256=` signatures (@octokit/webhooks-methods) — resumes across a server restart,
// and ends the session with close 1000 on Ctrl-C (D31: not resumable afterwards).
const ADMIN = 'listen-admin-token-0123456789abcdef';

interface Got {
  headers: IncomingHttpHeaders;
  body: string;
}

describe('parley listen --forward-to (D38, D31)', () => {
  const data = tempDir('parley-listen-');
  let env: Record<string, string>;
  let server: Running | undefined;
  let origin = '';
  let receiver: Server;
  const got: Got[] = [];
  let answer = 200;
  let listen: ChildProcess | undefined;
  let out = '';

  beforeAll(async () => {
    const port = await freePort();
    env = {
      PARLEY_HOST: '127.0.0.1',
      PARLEY_PORT: String(port),
      PARLEY_DATA_DIR: data.path,
      PARLEY_ADMIN_TOKEN: ADMIN,
      PARLEY_LOG_LEVEL: 'warn',
    };
    server = await startParley(env);
    origin = server.origin;
    receiver = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => (body += c));
      req.on('end', () => {
        got.push({ headers: req.headers, body });
        res.writeHead(answer).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  }, 90_000);

  afterAll(async () => {
    listen?.kill('SIGKILL');
    await stopParley(server);
    await new Promise((r) => receiver.close(r));
    data.remove();
  }, 30_000);

  const waitFor = async (check: () => boolean, what: string, ms = 20_000): Promise<void> => {
    const end = Date.now() + ms;
    while (!check()) {
      if (Date.now() > end)
        throw new Error(`timed out waiting for ${what}; listen printed:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it('forwards each event signed like a webhook, prints its status, resumes, and ends with 1000', async () => {
    const admin = (method: string, url: string, body?: unknown) =>
      callOk(origin, method, `/admin/v1${url}`, ADMIN, body);
    const owner = await admin('POST', '/users', { name: 'owner' });
    const human = await admin('POST', '/users', { name: 'human' });
    const session = await admin('POST', `/users/${human.id}/sessions`);
    const guild = await admin('POST', '/guilds', { name: 'G', ownerId: owner.id });
    const channel = await admin('POST', `/guilds/${guild.id}/channels`, { name: 'general' });
    const bot = await admin('POST', '/bots', { ownerId: owner.id, name: 'listener' });
    await admin('PUT', `/guilds/${guild.id}/members/${human.id}`, {});
    await admin('PUT', `/guilds/${guild.id}/members/${bot.bot.botUser.id}`, {});
    const secret = bot.webhookSecret as string;
    const forwardTo = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;

    listen = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        CLI,
        'listen',
        // Issue 28: the token from the environment (preferred); the secret on the command line,
        // which is warned about.
        '--forward-to',
        forwardTo,
        '--secret',
        secret,
        '--server',
        origin,
      ],
      { cwd: REPO, env: childEnv({ PARLEY_TOKEN: bot.token }), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    listen.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    listen.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((r) => listen!.once('exit', (code) => r(code)));
    await waitFor(() => /session \S+/.test(out), 'the READY line');
    const sessionId = /session (\S+);/.exec(out)![1]!;
    // Issue 28: a secret on the command line is warned about; the token came from PARLEY_TOKEN.
    expect(out).toMatch(/warning: --secret on the command line .* set PARLEY_WEBHOOK_SECRET/);
    expect(out).not.toMatch(/--token on the command line/);
    expect(out).not.toContain(bot.token);

    const send = (content: string) =>
      callOk(origin, 'POST', `/api/v1/channels/${channel.id}/messages`, session.token, { content });
    const m1 = await send('first');
    await waitFor(() => got.length === 1, 'the first delivery');
    answer = 503;
    await send('second');
    await waitFor(() => got.length === 2, 'two deliveries');

    for (const g of got) {
      // The outside verifier agrees with the signature over the exact body bytes (D38).
      expect(await verify(secret, g.body, g.headers['x-service-signature'] as string)).toBe(true);
      expect(g.headers['content-type']).toBe('application/json');
      expect(g.headers['user-agent']).toBe('Parley-Webhooks/1');
      expect(g.headers['x-service-event']).toBe('MESSAGE_CREATE');
      expect(g.headers['x-service-attempt']).toBe('1');
      expect(g.headers['x-service-delivery']).toMatch(/\S{8,}/);
      expect(Math.abs(Number(g.headers['x-service-timestamp']) - Date.now() / 1000)).toBeLessThan(
        30,
      );
    }
    expect(
      await verify(
        'not-the-secret',
        got[0]!.body,
        got[0]!.headers['x-service-signature'] as string,
      ),
    ).toBe(false);
    // the body is the webhook envelope, byte for byte as the server serializes it
    expect(got[0]!.body).toBe(JSON.stringify({ type: 'MESSAGE_CREATE', data: m1 }));
    await waitFor(() => /MESSAGE_CREATE\s+→ 503/.test(out), 'the 503 line');
    expect(out).toMatch(/MESSAGE_CREATE\s+→ 200 \(\d+ ms\)/);

    // A server restart: listen resumes, and what was sent meanwhile still arrives.
    answer = 200;
    await stopParley(server);
    server = await startParley(env);
    await send('third');
    await waitFor(() => got.length === 3, 'the delivery after the restart', 40_000);
    expect(JSON.parse(got[2]!.body).data.content).toBe('third');
    await waitFor(() => /resumed/.test(out), 'the resumed line');

    // Ctrl-C: close 1000 ends the session, so it cannot be resumed (op 9, D31).
    listen.kill('SIGINT');
    expect(await exited).toBe(0);
    const ws = await connectPatiently(
      `${origin.replace('http', 'ws')}/gateway?sessionId=${sessionId}&seq=1`,
      bot.token,
    );
    expect((await ws.next()).op).toBe(10); // HELLO
    expect((await ws.next()).op).toBe(9); // INVALID_SESSION: the session ended with close 1000
    expect((await ws.dispatch('READY')).d.sessionId).not.toBe(sessionId);
    await ws.close();
  }, 120_000);
});
