import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { dbDescribe } from '../helpers/harness.js';
import { makeRemoteWorld, type RemoteWorld } from '../helpers/live-server.js';
import { startLoggedServer, type LoggedServer } from '../helpers/log-capture.js';
import { ADMIN_TOKEN } from '../helpers/harness.js';

// What hostile or clumsy clients leave in the log (issue #10, findings 7 and 8; D54).
// The pino lines are captured as an operator would read them.

const ERROR = 50;

dbDescribe('the log under odd requests (D54)', () => {
  let s: LoggedServer;
  let w: RemoteWorld;
  beforeAll(async () => {
    s = await startLoggedServer();
    w = await makeRemoteWorld(s.origin, ADMIN_TOKEN);
  });
  afterAll(async () => s.close());

  /** Send raw bytes; resolve with everything answered once the server closes (or after `ms`). */
  const raw = (bytes: string, opts: { abortAfterMs?: number; ms?: number } = {}) =>
    new Promise<string>((resolve) => {
      const socket = connect(s.port, '127.0.0.1', () => socket.write(bytes));
      let out = '';
      socket.on('data', (c: Buffer) => (out += c.toString()));
      socket.on('error', () => {});
      socket.on('close', () => resolve(out));
      if (opts.abortAfterMs !== undefined)
        setTimeout(() => socket.resetAndDestroy(), opts.abortAfterMs);
      setTimeout(() => socket.destroy(), opts.ms ?? 3000);
    });

  const settle = () => new Promise((r) => setTimeout(r, 150));

  it('finding 7: a malformed upgrade URL → 400 in the D5 form, and nothing logged as an error', async () => {
    const before = s.lines.length;
    const answer = await raw(
      'GET //[ HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        `Authorization: Bearer ${w.bot.token}\r\n` +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
    const [head = '', body = ''] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head).toMatch(/\r\nx-request-id: [0-9a-f-]{36}/i);
    expect(JSON.parse(body)).toEqual({
      error: { code: 'VALIDATION_ERROR', message: expect.any(String) },
    });
    await settle();
    const logged = s.lines.slice(before);
    expect(logged.filter((l) => l.level >= ERROR)).toEqual([]);
    expect(JSON.stringify(logged)).not.toMatch(/"stack"/);
  });

  it('finding 7: a client aborting its request body (JSON and upload) is logged quietly: no error, no stack, no INTERNAL_ERROR', async () => {
    const before = s.lines.length;
    await raw(
      `POST /api/v1/channels/${w.channelId}/messages HTTP/1.1\r\nHost: x\r\n` +
        `Authorization: Bearer ${w.bot.token}\r\nContent-Type: application/json\r\n` +
        'Content-Length: 1000\r\n\r\n{"content":"hal',
      { abortAfterMs: 100 },
    );
    await raw(
      `POST /api/v1/files/upload HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${w.bot.token}\r\n` +
        'Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: 100000\r\n\r\n' +
        '--XyZ\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n' +
        'Content-Type: image/png\r\n\r\n\x89PNG\r\n\x1a\n' +
        'x'.repeat(2000),
      { abortAfterMs: 100 },
    );
    await settle();
    const logged = s.lines.slice(before);
    expect(logged.filter((l) => l.level >= ERROR)).toEqual([]);
    const text = JSON.stringify(logged);
    expect(text).not.toMatch(/INTERNAL_ERROR|unhandled error/);
    expect(text).not.toMatch(/"stack"/);
    const quiet = logged.filter((l) => /aborted/.test(l.msg ?? ''));
    expect(quiet.length).toBeGreaterThanOrEqual(1);
    for (const l of quiet) expect(l.level).toBeLessThanOrEqual(30); // debug or info
    // the server is fine afterwards
    const r = await fetch(`${s.origin}/api/v1/channels/${w.channelId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.bot.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content: 'after' }),
    });
    expect(r.status).toBe(200);
  });

  it('finding 8: token, sessionId and password values never reach the log', async () => {
    const before = s.lines.length;
    const secrets = Array.from({ length: 8 }, (_, i) => `S3CRET${i}x${Date.now()}`);
    const get = (path: string, headers: Record<string, string> = {}) =>
      fetch(`${s.origin}${path}`, { headers });
    await get(`/api/v1/bot/me?token=${secrets[0]}`);
    await get(`/api/v1/bot/me?a=1&TOKEN=${secrets[1]}&b=2`, {
      authorization: `Bearer ${w.bot.token}`,
    });
    await get(`/gateway?sessionId=${secrets[2]}&seq=3`);
    await get(`/nowhere?password=${secrets[3]}&access_token=${secrets[4]}`);
    await get(`/api/v1/bot/me?%74oken=${secrets[5]}`); // percent-encoded name
    await fetch(`${s.origin}/admin/v1/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'pw-user', password: secrets[6] }),
    });
    await fetch(`${s.origin}/admin/v1/users`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: '', password: secrets[7], extra: 1 }),
    });
    // a refused gateway upgrade carrying a token and a session in its query
    await raw(
      `GET /gateway?token=${secrets[0]}&sessionId=${secrets[2]} HTTP/1.1\r\nHost: x\r\n` +
        'Upgrade: websocket\r\nConnection: Upgrade\r\n' +
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n',
    );
    await settle();
    const text = JSON.stringify(s.lines.slice(before));
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(w.bot.token.length).toBeGreaterThan(20);
    expect(text).not.toContain(w.bot.token);
    expect(text).not.toContain(ADMIN_TOKEN);
    // the request is still recognisable in the log: its path and the redacted parameter's name
    const urls = s.lines
      .slice(before)
      .map((l) => l.req?.url as string | undefined)
      .filter((u): u is string => u !== undefined);
    expect(urls).toContain('/api/v1/bot/me?token=[REDACTED]');
    expect(urls).toContain('/api/v1/bot/me?a=1&TOKEN=[REDACTED]&b=2');
    expect(urls).toContain('/gateway?sessionId=[REDACTED]&seq=3');
  });
});
