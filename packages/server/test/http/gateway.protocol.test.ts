import { GATEWAY_CLOSE_RESUMABLE } from '@parley/protocol';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CLOSE_TABLE } from '../../src/gateway/close-codes.js';
import {
  dbDescribe,
  expectStatus,
  makeBot,
  makeUser,
  makeWorld,
  type World,
} from '../helpers/harness.js';
import { startLiveServer, type LiveServer } from '../helpers/live-server.js';

// Issue 5, acceptance 5: heartbeats (D32), frame rules (D30, D32), close codes (D33), the upgrade
// refusals (D28, D9), D29 replacement and D8 token reset, graceful shutdown (op 7).
dbDescribe('gateway protocol (D28–D33)', () => {
  let live: LiveServer;
  let w: World;

  beforeAll(async () => {
    live = await startLiveServer();
    w = await makeWorld(live.h);
  });
  afterAll(async () => live.close());

  const freshBot = async (name: string) =>
    makeBot(live.h, (await makeUser(live.h, `${name}-owner`)).id, name);

  const readyClient = async (token: string) => {
    live.clock.advance(1000); // D28
    const c = await live.connect(token);
    await c.ready();
    return c;
  };

  it('op 1 is answered with op 11 {d:null}, with d null or the last s', async () => {
    const c = await readyClient(w.bot.token);
    c.send({ op: 1, d: null });
    expect(await c.next({ acks: true })).toStrictEqual({ op: 11, d: null });
    c.send({ op: 1, d: 1 });
    expect(await c.next({ acks: true })).toStrictEqual({ op: 11, d: null });
    c.send({ op: 1 });
    expect(await c.next({ acks: true })).toStrictEqual({ op: 11, d: null });
    await c.close();
  });

  it('bad JSON → 4002', async () => {
    const c = await readyClient(w.bot.token);
    c.send('{"op":1,');
    expect(await c.closed).toMatchObject({ code: 4002 });
  });

  it('a frame over 4096 bytes → 4002 (not 1009); exactly 4096 bytes is fine', async () => {
    const c = await readyClient(w.bot.token);
    const frame = (size: number): string => {
      const base = '{"op":1,"d":null,"pad":""}';
      return base.replace('""', `"${'x'.repeat(size - base.length)}"`);
    };
    expect(Buffer.byteLength(frame(4096))).toBe(4096);
    c.send(frame(4096));
    expect(await c.next({ acks: true })).toStrictEqual({ op: 11, d: null });
    c.send(frame(4097));
    expect(await c.closed).toMatchObject({ code: 4002 });
  });

  it('a 2 MiB frame → 4002 too, refused from its header (D32)', async () => {
    const c = await readyClient(w.bot.token);
    c.send(`{"op":1,"d":null,"pad":"${'x'.repeat(2 << 20)}"}`);
    expect(await c.closed).toMatchObject({ code: 4002 });
  });

  it('not a JSON object with an integer op, or a binary frame → 4002', async () => {
    for (const bad of ['[1]', '"hi"', '{"d":null}', '{"op":"1"}', Buffer.from('{"op":1}')]) {
      const c = await readyClient(w.bot.token);
      if (typeof bad === 'string') c.send(bad);
      else c.ws.send(bad, { binary: true });
      expect(await c.closed, String(bad)).toMatchObject({ code: 4002 });
    }
  });

  it('unknown op, or an op only the server sends → 4001', async () => {
    for (const op of [2, 10]) {
      const c = await readyClient(w.bot.token);
      c.send({ op, d: null });
      expect(await c.closed).toMatchObject({ code: 4001 });
    }
  });

  it('a heartbeat with a malformed d is answered with ERROR INVALID_PAYLOAD; the connection stays', async () => {
    const c = await readyClient(w.bot.token);
    c.send({ op: 1, d: 'x' });
    const err = await c.next();
    expect(err).toMatchObject({ op: 0, t: 'ERROR', d: { code: 'INVALID_PAYLOAD' } });
    expect(err.s).toBeUndefined();
    c.send({ op: 1, d: null });
    expect(await c.next({ acks: true })).toStrictEqual({ op: 11, d: null });
    await c.close();
  });

  it('D28: refusals are HTTP answers in the error form — 401 without a bot token, 404 elsewhere', async () => {
    const cases: Array<[string | undefined, string, number]> = [
      [undefined, '', 401],
      ['not-a-token', '', 401],
      ['pus_unknown-session', '', 401], // D51: a person connects with a session token — a live one
      [undefined, `token=${w.bot.token}`, 401], // D9: a token in the query is ignored
    ];
    for (const [token, query, status] of cases) {
      const a = await live.attempt(token, { query });
      if (a.kind !== 'refused') throw new Error('expected a refusal');
      expect(a.status).toBe(status);
      expect(a.body).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
      expect(typeof a.body.error.message).toBe('string');
      expect(a.headers['www-authenticate']).toBe('Bearer');
      expect(a.headers['x-request-id']).toBeTruthy();
      expect(a.headers['content-type']).toMatch(/^application\/json/);
    }
    const sub = await live.attempt(w.bot.token, {
      headers: { 'sec-websocket-protocol': w.bot.token },
    });
    expect(sub.kind).toBe('refused'); // a token as subprotocol: still needs the header (D9)
  });

  it('D28: a reconnect less than 1 s after the previous attempt → 429 with Retry-After and retryAfter', async () => {
    const bot = await freshBot('eager');
    const c = await live.connect(bot.token);
    await c.ready();
    await c.close();
    const a = await live.attempt(bot.token);
    if (a.kind !== 'refused') throw new Error('expected a refusal');
    expect(a.status).toBe(429);
    expect(a.body.error.code).toBe('RATE_LIMIT_EXCEEDED');
    expect(a.body.error.retryAfter).toBeGreaterThan(0);
    expect(a.body.error.retryAfter).toBeLessThanOrEqual(1);
    expect(a.headers['retry-after']).toBe('1');
    live.clock.advance(1000);
    const ok = await live.attempt(bot.token);
    expect(ok.kind).toBe('open');
    if (ok.kind === 'open') await ok.client.close();
  });

  it('D29: a second connection closes the first with 4010', async () => {
    const bot = await freshBot('twin');
    const first = await readyClient(bot.token);
    const second = await readyClient(bot.token);
    expect(await first.closed).toMatchObject({ code: 4010 });
    await second.close();
  });

  it('D8: a token reset (operator API) closes the live connection with 4004; the old token is refused', async () => {
    const bot = await freshBot('resettable');
    const c = await readyClient(bot.token);
    const started = Date.now();
    await expectStatus(await live.h.admin.post(`/bots/${bot.id}/token`), 200);
    expect(await c.closed).toMatchObject({ code: 4004 });
    expect(Date.now() - started).toBeLessThan(1000);
    live.clock.advance(1000);
    const again = await live.attempt(bot.token);
    expect(again.kind === 'refused' && again.status).toBe(401);
  });

  it('D8: a reset made by another process (no signal, only the database) closes within a second', async () => {
    const bot = await freshBot('cli-reset');
    const c = await readyClient(bot.token);
    const started = Date.now();
    // What `parley admin bot reset-token` does from its own process: the generation moves on.
    await live.h.services.domain.db
      .updateTable('bots')
      .set((eb) => ({ token_generation: eb('token_generation', '+', 1) }))
      .where('id', '=', bot.id)
      .execute();
    expect(await c.closed).toMatchObject({ code: 4004 });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('the close-code table agrees with the protocol package on what is resumable (D33)', () => {
    for (const [code, resumable] of Object.entries(GATEWAY_CLOSE_RESUMABLE))
      expect(CLOSE_TABLE[Number(code) as keyof typeof CLOSE_TABLE].resumable, code).toBe(resumable);
  });
});

dbDescribe('gateway heartbeats and limits (D32)', () => {
  let live: LiveServer;
  let w: World;

  beforeAll(async () => {
    live = await startLiveServer({
      env: { PARLEY_HEARTBEAT_MS: '200', PARLEY_RATE_GATEWAY: '10/20' },
    });
    w = await makeWorld(live.h);
  });
  afterAll(async () => live.close());

  const fresh = async (name: string) =>
    makeBot(live.h, (await makeUser(live.h, `${name}-owner`)).id, name);

  it('no heartbeat for 1.5 × the interval → 4009; a client that heartbeats stays', async () => {
    const quiet = await fresh('quiet');
    const started = Date.now(); // before the server can have armed its timer
    const silent = await live.connect(quiet.token, { heartbeat: false });
    expect(await silent.next()).toStrictEqual({ op: 10, d: { heartbeatInterval: 200 } });
    expect(await silent.closed).toMatchObject({ code: 4009 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300); // 1.5 × 200 ms

    const beating = await live.connect(w.bot.token);
    await beating.ready();
    for (let i = 0; i < 4; i++) await beating.next({ acks: true }); // ~800 ms of heartbeats
    expect(beating.ws.readyState).toBe(beating.ws.OPEN);
    await beating.close();
  });

  it('a peer that stops answering WebSocket pings is cut off', async () => {
    const bot = await fresh('deaf');
    const c = await live.connect(bot.token, { autoPong: false });
    await c.ready();
    expect(await c.closed).toMatchObject({ code: 1006 });
  });

  it('25 frames in a burst → ERROR RATE_LIMIT "too many messages" (no s); 20 more while limited → 4008', async () => {
    const bot = await fresh('chatty');
    const c = await live.connect(bot.token, { heartbeat: false });
    await c.ready();
    for (let i = 0; i < 25; i++) c.send({ op: 1, d: null });
    let acks = 0;
    for (;;) {
      const f = await c.next({ acks: true });
      if (f.op === 11) {
        acks++;
        continue;
      }
      expect(f).toStrictEqual({
        op: 0,
        t: 'ERROR',
        d: { code: 'RATE_LIMIT', message: 'too many messages' },
      });
      break;
    }
    expect(acks).toBeGreaterThanOrEqual(20); // the burst (a token may have refilled meanwhile)
    expect(acks).toBeLessThan(25);
    for (let i = 0; i < 40; i++) c.send({ op: 1, d: null });
    expect(await c.closed).toMatchObject({ code: 4008 });
  });
});

dbDescribe('gateway shutdown', () => {
  it('op 7 to every client, then close 1012; the session stays resumable', async () => {
    const live = await startLiveServer();
    const w = await makeWorld(live.h);
    const c = await live.connect(w.bot.token);
    const { sessionId } = await c.ready();
    const db = live.h.services.domain.db;
    const closing = live.h.app.close();
    expect(await c.next()).toStrictEqual({ op: 7, d: null });
    expect(await c.closed).toMatchObject({ code: 1012 });
    await closing;
    const row = await db
      .selectFrom('gateway_sessions')
      .select(['connected', 'ended'])
      .where('id', '=', sessionId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ connected: 0, ended: 0 });
    await live.close();
  });
});
