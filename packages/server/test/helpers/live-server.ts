import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import type { Clock } from '../../src/ids/clock.js';
import { createHarness, type Harness } from './harness.js';
import { call } from './process.js';

/**
 * A real listening server for gateway tests: the harness's app (same database choice, same
 * world helpers) listening on 127.0.0.1:0, and real `ws` clients. The clock is real time plus an
 * offset the test can advance — enough to step over D28's one-second reconnect rule without
 * sleeping, while heartbeats and timers stay real.
 */
export class SteppedClock implements Clock {
  private offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
  advance(ms: number): void {
    this.offset += ms;
  }
}

export interface LiveServer {
  h: Harness;
  clock: SteppedClock;
  /** ws://127.0.0.1:<port>/gateway */
  gatewayUrl: string;
  /** a connection that was accepted (HELLO is already waiting in its queue) */
  connect(token: string, opts?: ConnectOptions): Promise<GatewayClient>;
  /** an attempt that may be refused: the upgrade answer or the open client */
  attempt(token: string | undefined, opts?: ConnectOptions): Promise<Attempt>;
  /**
   * Wait until the server has settled a closed connection's session in the database: released
   * (resumable) or ended. A client sees its close before the server has written that down.
   */
  sessionSettled(sessionId: string): Promise<{ ended: boolean }>;
  close(): Promise<void>;
}

export interface ConnectOptions {
  /** e.g. `sessionId=…&seq=3` */
  query?: string;
  /** answer HELLO by heartbeating at its interval (default true) */
  heartbeat?: boolean;
  headers?: Record<string, string>;
  /** false: do not answer WebSocket pings (a peer that looks dead) */
  autoPong?: boolean;
}

export type Attempt =
  | { kind: 'open'; client: GatewayClient }
  | {
      kind: 'refused';
      status: number;
      headers: Record<string, string | string[] | undefined>;
      body: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- checked field by field
    };

export async function startLiveServer(
  opts: { env?: Record<string, string> } = {},
): Promise<LiveServer> {
  const clock = new SteppedClock();
  const h = await createHarness({ ...(opts.env ? { env: opts.env } : {}), clock });
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = h.app.server.address() as AddressInfo;
  const gatewayUrl = `ws://127.0.0.1:${port}/gateway`;
  const clients = new Set<GatewayClient>();
  const attempt = (token: string | undefined, o: ConnectOptions = {}): Promise<Attempt> =>
    openGateway(gatewayUrl, token, o).then((a) => {
      if (a.kind === 'open') clients.add(a.client);
      return a;
    });
  return {
    h,
    clock,
    gatewayUrl,
    attempt,
    connect: async (token, o) => {
      const a = await attempt(token, o);
      if (a.kind !== 'open')
        throw new Error(`gateway refused: ${a.status} ${JSON.stringify(a.body)}`);
      return a.client;
    },
    sessionSettled: async (sessionId) => {
      const deadline = Date.now() + 5000;
      for (;;) {
        const row = await h.services.domain.db
          .selectFrom('gateway_sessions')
          .select(['connected', 'ended'])
          .where('id', '=', sessionId)
          .executeTakeFirst();
        if (row && (!row.connected || row.ended)) return { ended: row.ended === 1 };
        if (Date.now() > deadline) throw new Error(`session ${sessionId} was never settled`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    close: async () => {
      for (const c of clients) c.terminate();
      await h.close();
    },
  };
}

export function openGateway(
  gatewayUrl: string,
  token: string | undefined,
  o: ConnectOptions = {},
): Promise<Attempt> {
  const url = o.query ? `${gatewayUrl}?${o.query}` : gatewayUrl;
  const headers = {
    ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
    ...o.headers,
  };
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers, autoPong: o.autoPong ?? true });
    const client = new GatewayClient(ws, o.heartbeat ?? true);
    ws.once('open', () => resolve({ kind: 'open', client }));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: keep the text
        }
        resolve({ kind: 'refused', status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    ws.once('error', (err) => reject(err));
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- frames are checked field by field
export type Frame = { op: number; t?: string; s?: number; d: any };

/** A gateway client that queues every frame, for tests to await one by one. */
export class GatewayClient {
  private readonly queue: Frame[] = [];
  private readonly waiters: Array<() => void> = [];
  private hb: NodeJS.Timeout | undefined;
  /** every frame's text, in arrival order */
  readonly raw: string[] = [];
  /** the last dispatch `s` received */
  lastSeq = 0;
  readonly closed: Promise<{ code: number; reason: string }>;
  private closeInfo: { code: number; reason: string } | undefined;

  constructor(
    readonly ws: WebSocket,
    private readonly autoHeartbeat: boolean,
  ) {
    this.closed = new Promise((resolve) => {
      ws.on('close', (code, reason) => {
        clearInterval(this.hb);
        this.closeInfo = { code, reason: reason.toString() };
        resolve(this.closeInfo);
        this.wakeAll();
      });
    });
    ws.on('error', () => {});
    ws.on('message', (data: Buffer) => {
      const text = data.toString('utf8');
      this.raw.push(text);
      const f = JSON.parse(text) as Frame;
      if (f.op === 10 && this.autoHeartbeat) {
        const every = (f.d as { heartbeatInterval: number }).heartbeatInterval;
        this.hb = setInterval(() => this.send({ op: 1, d: this.lastSeq || null }), every);
      }
      if (f.op === 0 && typeof f.s === 'number') this.lastSeq = f.s;
      this.queue.push(f);
      this.wakeAll();
    });
  }

  private wakeAll(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  /** The next frame (HEARTBEAT_ACKs skipped unless asked for). */
  async next(o: { acks?: boolean; timeoutMs?: number } = {}): Promise<Frame> {
    const deadline = Date.now() + (o.timeoutMs ?? 5000);
    for (;;) {
      while (this.queue.length > 0) {
        const f = this.queue.shift() as Frame;
        if (f.op === 11 && !o.acks) continue;
        return f;
      }
      if (this.closeInfo)
        throw new Error(`gateway closed (${this.closeInfo.code} ${this.closeInfo.reason})`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no gateway frame in time');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** The next dispatch; it must be of type `t`. */
  async dispatch(t: string, timeoutMs?: number): Promise<Frame> {
    const f = await this.next(timeoutMs === undefined ? {} : { timeoutMs });
    if (f.op !== 0 || f.t !== t)
      throw new Error(`expected dispatch ${t}, got ${JSON.stringify(f)}`);
    return f;
  }

  /** HELLO then READY: the session's id and the READY frame. */
  async ready(): Promise<{ sessionId: string; frame: Frame }> {
    const hello = await this.next();
    if (hello.op !== 10) throw new Error(`expected HELLO, got ${JSON.stringify(hello)}`);
    const frame = await this.dispatch('READY');
    return { sessionId: frame.d.sessionId as string, frame };
  }

  /** Frames already received and not yet taken (acks included). */
  pending(): Frame[] {
    return [...this.queue];
  }

  send(frame: unknown): void {
    if (this.ws.readyState === WebSocket.OPEN)
      this.ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
  }

  close(code = 1000): Promise<{ code: number; reason: string }> {
    clearInterval(this.hb);
    this.ws.close(code);
    return this.closed;
  }

  /** Drop the TCP connection without a close frame (the session stays resumable). */
  terminate(): void {
    clearInterval(this.hb);
    this.ws.terminate();
  }
}

// Real server processes (test/process/): started with startParley (process.ts).

export interface RemoteWorld {
  guildId: number;
  channelId: number;
  human: { id: number; token: string };
  bot: { id: number; userId: number; token: string };
}

/** The harness's small world, built through a running server's operator API (D41). */
export async function makeRemoteWorld(origin: string, adminToken: string): Promise<RemoteWorld> {
  const admin = async (method: string, url: string, body?: unknown, status = 201) => {
    const r = await call(origin, method, `/admin/v1${url}`, adminToken, body);
    if (r.status !== status)
      throw new Error(`${method} ${url}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const owner = await admin('POST', '/users', { name: 'owner' });
  const human = await admin('POST', '/users', { name: 'human' });
  const session = await admin('POST', `/users/${human.id}/sessions`);
  const guild = await admin('POST', '/guilds', { name: 'Guild', ownerId: owner.id });
  const channel = await admin('POST', `/guilds/${guild.id}/channels`, { name: 'general' });
  const bot = await admin('POST', '/bots', { ownerId: owner.id, name: 'bot' });
  await admin('PUT', `/guilds/${guild.id}/members/${human.id}`, {});
  await admin('PUT', `/guilds/${guild.id}/members/${bot.bot.botUser.id}`, {});
  return {
    guildId: guild.id,
    channelId: channel.id,
    human: { id: human.id, token: session.token },
    bot: { id: bot.bot.id, userId: bot.bot.botUser.id, token: bot.token },
  };
}

/** Connect, honouring D28: a 429 names when to try again (Retry-After), so wait that long. */
export async function connectPatiently(
  gatewayUrl: string,
  token: string,
  o: ConnectOptions = {},
): Promise<GatewayClient> {
  for (let i = 0; i < 5; i++) {
    const a = await openGateway(gatewayUrl, token, o);
    if (a.kind === 'open') return a.client;
    if (a.status !== 429) throw new Error(`gateway refused: ${a.status} ${JSON.stringify(a.body)}`);
    await new Promise((r) => setTimeout(r, Number(a.body.error.retryAfter) * 1000 + 20));
  }
  throw new Error('gateway kept refusing');
}
