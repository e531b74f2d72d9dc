import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createHarness, dbDescribe, type Harness } from '../helpers/harness.js';

// D5/D7: even what Node's HTTP parser refuses before Fastify sees it is answered in the error
// form, with an X-Request-Id — never a bare "400 Bad Request" or a stack trace.
dbDescribe('errors below the router', () => {
  let h: Harness;
  let port: number;
  beforeAll(async () => {
    h = await createHarness();
    await h.app.listen({ host: '127.0.0.1', port: 0 });
    port = (h.app.server.address() as AddressInfo).port;
  });
  afterAll(async () => h.close());

  const raw = (request: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(request));
      let out = '';
      socket.on('data', (c: Buffer) => (out += c.toString()));
      socket.on('end', () => resolve(out));
      socket.on('error', reject);
    });

  const parse = (response: string) => {
    const [head, body] = response.split('\r\n\r\n');
    return {
      status: Number(head?.split(' ')[1]),
      head: head ?? '',
      body: JSON.parse(body ?? 'null'),
    };
  };

  it('headers over the limit → 431 HEADERS_TOO_LARGE in the D5 form', async () => {
    const r = parse(
      await raw(`GET /api/v1/bot/me HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
    );
    expect(r.status).toBe(431);
    expect(r.body).toEqual({
      error: { code: 'HEADERS_TOO_LARGE', message: 'Request headers are too large' },
    });
    expect(r.head).toMatch(/\r\nX-Request-Id: [0-9a-f-]{36}/i);
  });

  it('malformed HTTP → 400 VALIDATION_ERROR in the D5 form', async () => {
    const r = parse(await raw('THIS IS NOT HTTP\r\n\r\n'));
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('VALIDATION_ERROR');
    expect(Object.keys(r.body.error).sort()).toEqual(['code', 'message']);
  });
});
