import { afterAll, describe, expect, it } from 'vitest';
import { connectPatiently, makeRemoteWorld } from '../helpers/live-server.js';
import { startParley, stopParley, tempDir, type Running } from '../helpers/process.js';

// D53: on SIGTERM the node first answers /readyz with 503 (the load balancer stops sending),
// and only after the drain delay tells its gateway clients op 7 and stops.
const ADMIN = 'shutdown-admin-token-0123456789';
const DRAIN_MS = 1500;

describe('SIGTERM: drain, then op 7', () => {
  const data = tempDir('parley-drain-');
  let server: Running | undefined;

  afterAll(async () => {
    await stopParley(server);
    data.remove();
  }, 30_000);

  it('/readyz turns 503 before the gateway closes with op 7; the process exits 0', async () => {
    server = await startParley({
      PARLEY_HOST: '127.0.0.1',
      PARLEY_PORT: '0',
      PARLEY_DATA_DIR: data.path,
      PARLEY_ADMIN_TOKEN: ADMIN,
      PARLEY_DRAIN_MS: String(DRAIN_MS),
      PARLEY_LOG_LEVEL: 'info',
    });
    const origin = server.origin;
    expect((await fetch(`${origin}/readyz`)).status).toBe(200);
    const w = await makeRemoteWorld(origin, ADMIN);
    const client = await connectPatiently(server.gatewayUrl, w.bot.token);
    await client.ready();

    let op7At: number | undefined;
    const op7 = (async () => {
      const f = await client.next({ timeoutMs: DRAIN_MS + 10_000 });
      expect(f.op).toBe(7);
      op7At = Date.now();
    })();
    const sentAt = Date.now();
    server.proc.kill('SIGTERM');

    // /readyz answers 503 while draining (the HTTP server still serves).
    let readyz503At: number | undefined;
    while (readyz503At === undefined && Date.now() - sentAt < DRAIN_MS) {
      const r = await fetch(`${origin}/readyz`).catch(() => undefined);
      if (r?.status === 503) {
        readyz503At = Date.now();
        expect(await r.json()).toMatchObject({ ready: false, phase: 'draining' });
      } else await new Promise((res) => setTimeout(res, 20));
    }
    expect(readyz503At, '/readyz never answered 503').toBeDefined();
    expect(op7At, 'op 7 came before /readyz said 503').toBeUndefined();
    // Still serving while draining: liveness holds, so does the API.
    expect((await fetch(`${origin}/healthz`)).status).toBe(200);

    await op7;
    expect(op7At! - sentAt).toBeGreaterThanOrEqual(DRAIN_MS - 100);
    expect(op7At!).toBeGreaterThan(readyz503At!);
    const closed = await client.closed;
    expect(closed.code).toBe(1012); // service restart: resume elsewhere (D30 op 7)
    const exit = await server.exited;
    expect(exit.code).toBe(0);
    // Issue #13 logs: the connection's open and close lines, and no probe noise at info.
    expect(exit.stdout).toMatch(/"msg":"gateway connection opened"/);
    expect(exit.stdout).toMatch(/"msg":"gateway connection closed"/);
    expect(exit.stdout).not.toMatch(/"url":"\/readyz"/);
    expect(exit.stdout).not.toMatch(/"url":"\/healthz"/);
    server = undefined;
  });
});
