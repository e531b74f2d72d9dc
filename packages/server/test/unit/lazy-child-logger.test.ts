import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lazyChildLogger } from '../../src/http/lazy-child-logger.js';

// http/lazy-child-logger.ts: a request's pino child is made only when the request logs at an
// enabled level — and what it logs is the real child's line (request id, D54's redaction).
describe('lazy request loggers', () => {
  const lines: Array<Record<string, unknown>> = [];
  const out = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  const root = pino({ level: 'warn', redact: ['token'] }, out);
  // counts the children made of the server's logger (pino's children inherit from it: a
  // child's own children go through this too, and are not counted)
  let children = 0;
  // eslint-disable-next-line @typescript-eslint/unbound-method -- re-bound below, to each caller
  const child = root.child;
  root.child = function (this: typeof root, ...args: Parameters<typeof child>) {
    if (this === root) children++;
    return child.apply(this, args);
  } as typeof root.child;
  const app = Fastify({ loggerInstance: root, childLoggerFactory: lazyChildLogger });
  app.get('/quiet', async (req) => {
    req.log.info('below the level');
    req.log.debug('below the level');
    return { ok: true };
  });
  app.get('/loud', async (req) => {
    req.log.warn({ token: 's3cret' }, 'loud');
    req.log.child({ part: 'inner' }).error('from a child');
    return { level: req.log.level };
  });
  app.get('/debug', { logLevel: 'debug' }, async (req) => {
    req.log.debug('route level');
    return { level: req.log.level };
  });
  beforeAll(() => app.ready());
  afterAll(() => app.close());
  const settle = () => new Promise((r) => setImmediate(r));

  it('a request that logs nothing at an enabled level makes no child', async () => {
    const before = children;
    const res = await app.inject({ url: '/quiet' });
    expect(res.statusCode).toBe(200);
    await settle();
    expect(children).toBe(before);
    expect(lines.filter((l) => l['msg'] === 'below the level')).toEqual([]);
  });

  it('what a request logs carries its request id, redacted as configured', async () => {
    const res = await app.inject({ url: '/loud' });
    expect(res.json()).toEqual({ level: 'warn' });
    await settle();
    const loud = lines.find((l) => l['msg'] === 'loud');
    expect(loud).toMatchObject({
      level: 40,
      reqId: res.headers['x-request-id'] ?? expect.any(String),
      token: '[Redacted]',
    });
    const inner = lines.find((l) => l['msg'] === 'from a child');
    expect(inner).toMatchObject({ level: 50, reqId: loud?.['reqId'], part: 'inner' });
    expect(JSON.stringify(lines)).not.toContain('s3cret');
  });

  it("a route's own log level wins over the server's", async () => {
    const res = await app.inject({ url: '/debug' });
    expect(res.json()).toEqual({ level: 'debug' });
    await settle();
    const line = lines.find((l) => l['msg'] === 'route level');
    expect(line).toMatchObject({ level: 20, reqId: expect.any(String) });
  });

  it("without pino (logging off) the factory is Fastify's own", async () => {
    const off = Fastify({ logger: false, childLoggerFactory: lazyChildLogger });
    off.get('/', async (req) => {
      req.log.error('nowhere');
      return { ok: true };
    });
    expect((await off.inject({ url: '/' })).statusCode).toBe(200);
    await off.close();
  });
});

// The factory remembers whether its last parent was pino (one parent per server): a different
// parent — another app in the same process, pino or not — is asked again.
describe('lazy request loggers: the parent changes', () => {
  it('a pino parent gets a lazy child, any other parent its own child, in any order', () => {
    const made: unknown[] = [];
    const plain = {
      child: (b: unknown) => {
        made.push(b);
        return plain;
      },
    } as unknown as Parameters<typeof lazyChildLogger>[0];
    const p = pino({ level: 'warn' });
    const lazy = lazyChildLogger(p, { reqId: 'a' }, {});
    expect(lazy).not.toBe(p);
    expect(lazy.constructor.name).toBe('LazyChild');
    expect(lazyChildLogger(plain, { reqId: 'b' }, {})).toBe(plain);
    expect(made).toEqual([{ reqId: 'b' }]);
    expect(lazyChildLogger(p, { reqId: 'c' }, {}).constructor.name).toBe('LazyChild');
    expect(lazyChildLogger(plain, { reqId: 'd' }, {})).toBe(plain);
    expect(made).toEqual([{ reqId: 'b' }, { reqId: 'd' }]);
  });
});
