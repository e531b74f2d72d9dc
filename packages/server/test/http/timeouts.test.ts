import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  ADMIN_TOKEN,
  createHarness,
  dbDescribe,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';

// D54 (issue #10, finding 1): a request whose body has not fully arrived within the request
// timeout after its headers → 408 in the D5 form, and the connection closes. Headers that never
// finish are cut the same way. The timeout is PARLEY_REQUEST_TIMEOUT_MS (30 s by default);
// here 600 ms so the suite stays fast.
const TIMEOUT_MS = 600;

dbDescribe('request timeouts (D54)', () => {
  let h: Harness;
  let port: number;
  let w: World;
  beforeAll(async () => {
    h = await createHarness({ env: { PARLEY_REQUEST_TIMEOUT_MS: String(TIMEOUT_MS) } });
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    port = (h.app.server.address() as AddressInfo).port;
    w = await makeWorld(h);
  });
  afterAll(async () => h.close());

  interface Stalled {
    socket: Socket;
    /** everything the server sent, and how long after the request began it closed */
    done: Promise<{ text: string; afterMs: number }>;
  }

  /** Write `head` (and a partial body) and never finish it. */
  const stall = (head: string): Stalled => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1', () => socket.write(head));
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString()));
    const done = new Promise<{ text: string; afterMs: number }>((resolve) => {
      socket.on('error', () => {});
      socket.on('close', () => resolve({ text, afterMs: Date.now() - started }));
    });
    return { socket, done };
  };

  const within = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
    Promise.race([
      p,
      new Promise<T>((_, reject) =>
        setTimeout(() => reject(new Error(`${what}: still open after ${ms} ms`)), ms),
      ),
    ]);

  const expect408 = async (s: Stalled, what: string): Promise<void> => {
    const { text, afterMs } = await within(s.done, TIMEOUT_MS * 5 + 2000, what);
    const [head = '', body = ''] = text.split('\r\n\r\n');
    expect(head, what).toMatch(/^HTTP\/1\.1 408 /);
    expect(head, what).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}/i);
    expect(JSON.parse(body), what).toEqual({
      error: { code: 'REQUEST_TIMEOUT', message: expect.any(String) },
    });
    expect(afterMs, what).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
  };

  const post = (path: string, token: string | undefined, type: string, length: number) =>
    `POST ${path} HTTP/1.1\r\nHost: x\r\n` +
    (token ? `Authorization: Bearer ${token}\r\n` : '') +
    `Content-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n`;

  it('stalled bodies — unknown path, message send, upload, admin route — get 408 and are closed', async () => {
    const cases: Array<[string, Stalled]> = [
      ['unknown path', stall(post('/nowhere', undefined, 'application/json', 100) + '{"a"')],
      [
        'message send',
        stall(
          post(`/api/v1/channels/${w.channelId}/messages`, w.bot.token, 'application/json', 100) +
            '{"content":',
        ),
      ],
      [
        'upload',
        stall(
          post('/api/v1/files/upload', w.bot.token, 'multipart/form-data; boundary=XyZ', 100_000) +
            '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n' +
            'Content-Type: image/png\r\n\r\n\x89PNG',
        ),
      ],
      [
        'admin route',
        stall(post('/admin/v1/users', ADMIN_TOKEN, 'application/json', 100) + '{"name"'),
      ],
    ];
    for (const [what, s] of cases) await expect408(s, what);
  });

  it('headers that never finish get 408 and are closed', async () => {
    await expect408(stall('GET /api/v1/bot/me HTTP/1.1\r\nHost: x\r\nX-Slow: a'), 'headers');
  });

  it('with 200 stalled sockets open, /healthz still answers', async () => {
    const stalled = Array.from({ length: 200 }, () =>
      stall(post('/admin/v1/users', ADMIN_TOKEN, 'application/json', 100) + '{'),
    );
    await new Promise((r) => setTimeout(r, 100));
    const res = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(res.status).toBe(200);
    const all = await within(
      Promise.all(stalled.map((s) => s.done)),
      TIMEOUT_MS * 5 + 5000,
      'stalled sockets',
    );
    expect(all.filter((d) => d.text.startsWith('HTTP/1.1 408 ')).length).toBe(200);
  });

  it('a request that completes in time is unaffected', async () => {
    const r = await fetch(`http://127.0.0.1:${port}/api/v1/channels/${w.channelId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.bot.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'in time' }),
    });
    expect(r.status).toBe(200);
  });
});
