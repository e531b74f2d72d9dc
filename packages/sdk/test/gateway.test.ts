import { describe, expect, it } from 'vitest';
import { GatewayClient, type WebSocketFactory } from '../src/index.js';

// The gateway client's state machine (D28–D33) against a scripted socket: what it sends, when it
// reconnects, with which URL, and when it stops. (The e2e tests run it against a real server.)
interface FakeConn {
  url: string;
  headers: Record<string, string>;
  sent: Array<{ op: number; d: unknown }>;
  closedWith: number | undefined;
  terminated: boolean;
  frame(f: object): void;
  close(code: number): void;
  refuse(status: number, retryAfterS?: number): void;
}

function fake(): { factory: WebSocketFactory; conns: FakeConn[]; next(): Promise<FakeConn> } {
  const conns: FakeConn[] = [];
  let waiter: ((c: FakeConn) => void) | undefined;
  const factory: WebSocketFactory = (url, headers, on) => {
    const c: FakeConn = {
      url,
      headers,
      sent: [],
      closedWith: undefined,
      terminated: false,
      frame: (f) => on.message(JSON.stringify(f)),
      close: (code) => on.close(code, ''),
      refuse: (status, ra) => on.refused(status, ra, '{}'),
    };
    conns.push(c);
    queueMicrotask(() => {
      on.open();
      waiter?.(c);
    });
    return {
      send: (d) => void c.sent.push(JSON.parse(d) as { op: number; d: unknown }),
      close: (code) => {
        c.closedWith = code;
        queueMicrotask(() => on.close(code ?? 1005, ''));
      },
      terminate: () => {
        c.terminated = true;
        queueMicrotask(() => on.close(1006, ''));
      },
    };
  };
  const next = () => new Promise<FakeConn>((r) => (waiter = r));
  return { factory, conns, next };
}

const ready = (sessionId = 'S1') => ({
  op: 0,
  t: 'READY',
  s: 1,
  d: {
    sessionId,
    bot: { name: 'b' },
    user: { id: 2, name: 'b', isBot: true },
    guilds: [],
    resumeWindowS: 300,
  },
});
const msg = (s: number, id: number) => ({
  op: 0,
  t: 'MESSAGE_CREATE',
  s,
  d: { id, channelId: 1, guildId: 1, content: 'x', author: { id: 9, name: 'p' }, timestamp: 't' },
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('GatewayClient (D28–D33)', () => {
  it('sends the token in the header, heartbeats with the last s, and a missing ACK is a dead link: resume', async () => {
    const f = fake();
    const client = new GatewayClient({
      token: 'tok',
      gatewayUrl: 'ws://x/gateway',
      webSocket: f.factory,
    });
    const first = f.next();
    const connected = client.connect();
    const c1 = await first;
    expect(c1.headers.authorization).toBe('Bearer tok');
    expect(c1.url).toBe('ws://x/gateway');
    c1.frame({ op: 10, d: { heartbeatInterval: 100 } });
    c1.frame(ready());
    await connected;
    c1.frame(msg(2, 50));
    await sleep(120); // first beat within the interval (jitter), with d = last s
    expect(c1.sent[0]).toEqual({ op: 1, d: 2 });
    const second = f.next();
    await sleep(150); // no ACK came: the link is dead
    expect(c1.terminated).toBe(true);
    const c2 = await second; // after ≥ 1 s (D29)
    expect(c2.url).toBe('ws://x/gateway?sessionId=S1&seq=2');
    await client.close();
  });

  it('an ACKed heartbeat keeps the link; op 1 from the server gets a beat at once', async () => {
    const f = fake();
    const client = new GatewayClient({
      token: 't',
      gatewayUrl: 'ws://x/gateway',
      webSocket: f.factory,
    });
    const first = f.next();
    void client.connect();
    const c = await first;
    c.frame({ op: 10, d: { heartbeatInterval: 60 } });
    c.frame(ready());
    for (let i = 0; i < 4; i++) {
      await sleep(60);
      c.frame({ op: 11, d: null });
    }
    expect(c.terminated).toBe(false);
    const n = c.sent.length;
    c.frame({ op: 1, d: null });
    expect(c.sent.length).toBe(n + 1);
    await client.close();
    expect(c.closedWith).toBe(1000); // D31: ends the session
  });

  it('resumes after op 7 without ending the session, skips replayed events, and op 9 starts over', async () => {
    const f = fake();
    const client = new GatewayClient({
      token: 't',
      gatewayUrl: 'ws://x/gateway',
      webSocket: f.factory,
    });
    const got: number[] = [];
    const meta: string[] = [];
    client.on('MESSAGE_CREATE', (m) => void got.push(m.id));
    client.on('invalidSession', () => void meta.push('invalid'));
    client.on('resumed', () => void meta.push('resumed'));
    const first = f.next();
    void client.connect();
    const c1 = await first;
    c1.frame({ op: 10, d: { heartbeatInterval: 30_000 } });
    c1.frame(ready());
    c1.frame(msg(2, 10));
    c1.frame(msg(3, 11));
    const second = f.next();
    c1.frame({ op: 7, d: null });
    expect(c1.closedWith).toBe(4000); // not 1000/1001: the session stays resumable
    const c2 = await second;
    expect(c2.url).toContain('sessionId=S1&seq=3');
    c2.frame({ op: 10, d: { heartbeatInterval: 30_000 } });
    c2.frame(msg(3, 11)); // already processed: not given twice
    c2.frame(msg(4, 12));
    c2.frame({ op: 0, t: 'RESUMED', s: 5, d: {} });
    expect(got).toEqual([10, 11, 12]);
    const third = f.next();
    c2.close(4000);
    const c3 = await third;
    c3.frame({ op: 10, d: { heartbeatInterval: 30_000 } });
    c3.frame({ op: 9, d: false });
    c3.frame(ready('S2'));
    expect(client.sessionId).toBe('S2');
    expect(client.seq).toBe(1);
    expect(meta).toEqual(['resumed', 'invalid']);
    await client.close();
  });

  it('stops on 4010 and 4004 with a clear error; pauses after 4008; waits out a 429 refusal', async () => {
    for (const [code, name] of [
      [4010, 'SESSION_REPLACED'],
      [4004, 'AUTHENTICATION_FAILED'],
    ] as const) {
      const f = fake();
      const client = new GatewayClient({
        token: 't',
        gatewayUrl: 'ws://x/gateway',
        webSocket: f.factory,
      });
      const first = f.next();
      void client.connect();
      const c = await first;
      c.frame({ op: 10, d: { heartbeatInterval: 30_000 } });
      c.frame(ready());
      const stopped = new Promise((r) => client.on('stopped', r));
      const reconnects: unknown[] = [];
      client.on('reconnecting', (i) => void reconnects.push(i));
      c.close(code);
      expect(await stopped).toMatchObject({ code: name, status: code });
      expect(reconnects).toEqual([]);
    }

    const f = fake();
    const client = new GatewayClient({
      token: 't',
      gatewayUrl: 'ws://x/gateway',
      webSocket: f.factory,
    });
    const delays: number[] = [];
    client.on('reconnecting', (i) => void delays.push(i.delayMs));
    const first = f.next();
    const pending = client.connect().catch((e: unknown) => e);
    (await first).close(4008);
    expect(delays[0]).toBeGreaterThanOrEqual(5000); // D33: resume after a pause
    await client.close();
    expect(await pending).toMatchObject({ code: 'STOPPED' }); // closed before READY

    const g = fake();
    const other = new GatewayClient({
      token: 't',
      gatewayUrl: 'ws://x/gateway',
      webSocket: g.factory,
    });
    const waits: number[] = [];
    other.on('reconnecting', (i) => void waits.push(i.delayMs));
    const a = g.next();
    const refused = other.connect();
    (await a).refuse(429, 1.5);
    expect(waits).toEqual([1500]); // D28: as long as Retry-After says
    const b = g.next();
    await b.then((c) => c.refuse(401));
    await expect(refused).rejects.toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
  }, 15_000);

  it('is an async iterator of event envelopes that ends when the client stops', async () => {
    const f = fake();
    const client = new GatewayClient({
      token: 't',
      gatewayUrl: 'ws://x/gateway',
      webSocket: f.factory,
    });
    const first = f.next();
    void client.connect();
    const c = await first;
    c.frame({ op: 10, d: { heartbeatInterval: 30_000 } });
    c.frame(ready());
    const seen: Array<[string, number]> = [];
    const reading = (async () => {
      for await (const e of client) if (e.type === 'MESSAGE_CREATE') seen.push([e.type, e.data.id]);
    })();
    await sleep(0);
    c.frame(msg(2, 20));
    c.frame(msg(3, 21));
    await sleep(0);
    await client.close();
    await reading;
    expect(seen).toEqual([
      ['MESSAGE_CREATE', 20],
      ['MESSAGE_CREATE', 21],
    ]);
  });
});
