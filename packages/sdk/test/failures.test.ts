import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { Bot, GatewayClient, ParleyError, RestClient } from '../src/index.js';
import { freePort } from '../../server/test/helpers/process.js';

// Issue #27: a bot author's mistakes fail fast with a message that says what is wrong — never a
// silent hang. Each case here must fail within 20 s (the default timeouts are 15 s).
const servers: { close(): void }[] = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A web server that is not Parley: every request gets a page of HTML. */
const notParley = (status: number) =>
  listen(
    createServer((_req, res) =>
      res.writeHead(status, { 'content-type': 'text/html' }).end('<html>hello</html>'),
    ),
  );

/** Runs `fn`, expecting it to fail; the error and how long it took. */
async function failure(fn: () => Promise<unknown>): Promise<{ err: ParleyError; ms: number }> {
  const started = Date.now();
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ParleyError);
    return { err: err as ParleyError, ms: Date.now() - started };
  }
  throw new Error('it did not fail');
}

describe('clear failures (issue #27)', () => {
  it('a url ending in /api/v1 (or /gateway) is refused at once, saying what to pass', () => {
    for (const make of [
      () => new Bot({ token: 't', url: 'http://127.0.0.1:8080/api/v1' }),
      () => new RestClient({ token: 't', url: 'https://chat.example.org/api/v1/' }),
      () => new GatewayClient({ token: 't', url: 'http://127.0.0.1:8080/gateway' }),
    ])
      expect(make).toThrow(
        expect.objectContaining({
          code: 'BAD_URL',
          message: expect.stringMatching(/without \/(api\/v1|gateway): use https?:\/\/[\w.:]+$/),
        }),
      );
    expect(() => new RestClient({ token: 't', url: 'chat.example.org' })).toThrow(
      expect.objectContaining({ code: 'BAD_URL', message: expect.stringMatching(/origin/) }),
    );
    // An origin behind a path prefix stays allowed.
    expect(new RestClient({ token: 't', url: 'https://example.org/parley/' }).baseUrl).toBe(
      'https://example.org/parley/api/v1',
    );
  });

  it('a url that answers something that is not Parley: REST and bot.start() say so within seconds', async () => {
    for (const status of [200, 404]) {
      const url = await notParley(status);
      const rest = await failure(() => new RestClient({ token: 't', url }).bot.me());
      expect(rest.err.code).toBe('NOT_PARLEY');
      expect(rest.err.message).toMatch(/not a Parley API answer.*origin/);
      expect(rest.ms).toBeLessThan(5000);
      const bot = new Bot({ token: 't', url });
      const start = await failure(() => bot.start());
      expect(start.err.code).toBe('NOT_PARLEY');
      expect(start.err.message).toMatch(new RegExp(`HTTP ${status}: not a Parley gateway`));
      expect(start.ms).toBeLessThan(5000);
    }
  });

  it('a refused connection: REST and bot.start() say "connection refused" within seconds', async () => {
    const url = `http://127.0.0.1:${await freePort()}`; // nothing listens there
    const rest = await failure(() => new RestClient({ token: 't', url }).bot.me()); // GET: retried
    expect(rest.err).toMatchObject({ code: 'NETWORK_ERROR', status: 0 });
    expect(rest.err.message).toMatch(
      /connection refused by http:\/\/127\.0\.0\.1:\d+ — is Parley running there\?/,
    );
    expect(rest.ms).toBeLessThan(10_000);
    const start = await failure(() => new Bot({ token: 't', url }).start());
    expect(start.err.code).toBe('NETWORK_ERROR');
    expect(start.err.message).toMatch(
      /connection refused — is Parley running at ws:\/\/127\.0\.0\.1:\d+\/gateway\?/,
    );
    expect(start.ms).toBeLessThan(5000);
  });

  it('a server that never answers: a request times out after 15 s by default', async () => {
    const url = await listen(createServer(() => {})); // accepts, never answers
    const r = await failure(() => new RestClient({ token: 't', url }).messages.send(1, 'hello'));
    expect(r.err.code).toBe('TIMEOUT');
    expect(r.err.message).toMatch(
      /POST \/channels\/:channelId\/messages: no answer from .* within 15 s/,
    );
    expect(r.ms).toBeGreaterThanOrEqual(14_500);
    expect(r.ms).toBeLessThan(20_000);
    // and shorter when asked
    const quick = await failure(() =>
      new RestClient({ token: 't', url, timeoutMs: 500 }).messages.send(1, 'hello'),
    );
    expect(quick.err.message).toMatch(/within 0\.5 s/);
  }, 25_000);

  it('a gateway that accepts the socket but never says HELLO: connect() gives up after 15 s', async () => {
    const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    servers.push(wss);
    await new Promise((r) => wss.once('listening', r));
    const url = `http://127.0.0.1:${(wss.address() as AddressInfo).port}`;
    const client = new GatewayClient({ token: 't', url });
    const r = await failure(() => client.connect());
    expect(r.err.code).toBe('TIMEOUT');
    expect(r.err.message).toMatch(/no READY from the gateway at ws:\/\/.*\/gateway within 15 s/);
    expect(r.ms).toBeGreaterThanOrEqual(14_500);
    expect(r.ms).toBeLessThan(20_000);
    // the client stopped: no reconnecting in the background
    await expect(client.connect()).rejects.toMatchObject({ code: 'TIMEOUT' });
  }, 25_000);
});
