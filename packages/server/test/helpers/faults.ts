import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import WebSocket from 'ws';
import { PG_URL } from './harness.js';
import { call, type HttpAnswer } from './process.js';

/**
 * D72's fault suite (test/process/faults.test.ts): services the suite owns and may break — its
 * own redis-server on a free port, its own PostgreSQL database — and clients that behave like
 * real ones through the faults (a sender that records every answer, gateway clients that
 * reconnect and resume). Nothing here touches the shared Redis at 6379 or any other database.
 */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A redis-server of the suite's own, without persistence, that can be stopped and started. */
export class OwnRedis {
  private proc: ChildProcess | undefined;

  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const proc = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    );
    this.proc = proc;
    const deadline = Date.now() + 10_000;
    for (;;) {
      const r = new Redis(this.url, {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      r.on('error', () => {});
      try {
        await r.connect();
        await r.ping();
        return;
      } catch (err) {
        if (proc.exitCode !== null || Date.now() > deadline)
          throw new Error(`redis-server did not start on ${this.port}: ${String(err)}`);
        await sleep(50);
      } finally {
        r.disconnect();
      }
    }
  }

  /** A crash: SIGKILL, and wait for the process to be gone. */
  async stop(): Promise<void> {
    const proc = this.proc;
    this.proc = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGKILL');
    await gone;
  }
}

/**
 * A PostgreSQL database of the suite's own (`fault_<random>` next to the shared `test`). Its
 * faults act on it alone: every statement names it, and backends of other databases are never
 * touched.
 */
export class OwnDatabase {
  readonly name = `fault_${randomBytes(6).toString('hex')}`;

  get url(): string {
    const u = new URL(PG_URL);
    u.pathname = `/${this.name}`;
    return u.toString();
  }

  /** Run `sql` on the shared database's connection (never inside the suite's own database). */
  private async admin<T extends pg.QueryResultRow>(sql: string, params: unknown[] = []) {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    try {
      return await c.query<T>(sql, params);
    } finally {
      await c.end();
    }
  }

  async create(): Promise<void> {
    await this.admin(`create database ${this.name}`);
  }

  /** What a failover, a restart or a proxy's idle timeout does: every backend of it ends. */
  async terminate(): Promise<number> {
    const r = await this.admin<{ pid: number }>(
      'select pg_terminate_backend(pid) as pid from pg_stat_activity ' +
        'where datname = $1 and pid <> pg_backend_pid()',
      [this.name],
    );
    return r.rowCount ?? 0;
  }

  /** Refuse new connections to it and end the ones it has. */
  async refuse(): Promise<void> {
    await this.admin(`alter database ${this.name} with allow_connections false`);
    await this.terminate();
  }

  async allow(): Promise<void> {
    await this.admin(`alter database ${this.name} with allow_connections true`);
  }

  async drop(): Promise<void> {
    await this.admin(`alter database ${this.name} with allow_connections true`).catch(() => {});
    await this.admin(`drop database if exists ${this.name} with (force)`);
  }
}

/** One send and its answer, as the load generator saw it. */
export interface SendRecord {
  sender: string;
  node: number;
  /** when the request was sent and answered (ms, Date.now()) */
  at: number;
  done: number;
  /** the HTTP status, or 0 when the node could not be reached at all */
  status: number;
  retryAfter: string | null;
  code: string | undefined;
  content: string;
  /** the message id when acknowledged (200) */
  id: number | undefined;
}

/**
 * A bot sending to one channel at a steady rate, through its node; while that node cannot be
 * reached at all (killed) it goes to the other, as a load balancer would. Every answer is kept.
 */
export class Sender {
  readonly sent: SendRecord[] = [];
  private running = false;
  private loop: Promise<void> | undefined;
  private n = 0;

  constructor(
    readonly name: string,
    private readonly origins: string[],
    private readonly home: number,
    private readonly token: string,
    private readonly channelId: number,
    private readonly everyMs: number,
  ) {}

  start(): void {
    this.running = true;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async run(): Promise<void> {
    let node = this.home;
    /** after its node could not be reached, the sender stays on the other this long */
    let homeAgainAt = 0;
    while (this.running) {
      if (node !== this.home && Date.now() >= homeAgainAt) node = this.home;
      const started = Date.now();
      const content = `${this.name}-${++this.n}`;
      let r: HttpAnswer | undefined;
      try {
        r = await call(
          this.origins[node] as string,
          'POST',
          `/api/v1/channels/${this.channelId}/messages`,
          this.token,
          { content },
        );
      } catch {
        r = undefined; // connection refused: the node is down
      }
      this.sent.push({
        sender: this.name,
        node,
        at: started,
        done: Date.now(),
        status: r?.status ?? 0,
        retryAfter: r?.headers.get('retry-after') ?? null,
        code: r?.body?.error?.code,
        content,
        id: r?.status === 200 ? Number(r.body.id) : undefined,
      });
      // A node that does not answer at all is out of the balancer for a second: the other one
      // takes its sends.
      if (r === undefined) {
        node = 1 - node;
        homeAgainAt = Date.now() + 1000;
      }
      const wait = this.everyMs - (Date.now() - started);
      if (wait > 0) await sleep(wait);
    }
  }
}

type Frame = { op: number; t?: string; s?: number; d: any }; // eslint-disable-line @typescript-eslint/no-explicit-any -- checked field by field

/**
 * A gateway client that lives through faults as a real one does (D30–D33, D51): heartbeats,
 * and on any close but 4004/4010 it reconnects after D28's second — resuming with the last `s`
 * it processed, on its own node, or the other when its own cannot be reached. Every
 * MESSAGE_CREATE it is dispatched is kept (duplicates included: they are counted). A person's
 * client that gets op 9 and a fresh READY refetches through the API what came since a few
 * seconds before its newest message (ids of two nodes interleave, so a little is read again and
 * merged by id), as the web app does after op 9.
 */
export class FaultClient {
  /** message ids in dispatch order (live or replayed) */
  readonly dispatched: number[] = [];
  /** message ids read through the API after an op 9 */
  readonly refetched = new Set<number>();
  readonly events: Array<{ at: number; what: string }> = [];
  closes: number[] = [];
  private ws: WebSocket | undefined;
  private sessionId: string | undefined;
  private seq = 0;
  private hb: NodeJS.Timeout | undefined;
  private stopped = false;
  private hadReady = false;
  private invalidated = false;
  private node: number;
  private readyWaiters: Array<() => void> = [];

  constructor(
    readonly name: string,
    private readonly origins: string[],
    private readonly home: number,
    private readonly token: string,
    private readonly kind: 'bot' | 'person',
    private readonly channelId: number,
  ) {
    this.node = home;
  }

  /** Resolves at the first READY. */
  start(): Promise<void> {
    const ready = new Promise<void>((resolve) => this.readyWaiters.push(resolve));
    this.connect();
    return ready;
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.hb);
    this.ws?.close(1000);
  }

  /** Lose the connection (no close frame): the client resumes, as after a network blip. */
  drop(): void {
    clearInterval(this.hb);
    this.ws?.terminate();
  }

  private note(what: string): void {
    this.events.push({ at: Date.now(), what });
  }

  private connect(): void {
    if (this.stopped) return;
    const gw = (this.origins[this.node] as string).replace(/^http/, 'ws') + '/gateway';
    const url = this.sessionId ? `${gw}?sessionId=${this.sessionId}&seq=${this.seq}` : gw;
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${this.token}` } });
    this.ws = ws;
    let opened = false;
    let refused = false;
    ws.on('open', () => {
      opened = true;
    });
    ws.on('unexpected-response', (_req, res) => {
      // An answer (503 while the database is away, 429 too soon): the node is there.
      refused = true;
      this.note(`refused ${res.statusCode} on node ${this.node + 1}`);
      res.resume();
      ws.terminate();
    });
    ws.on('error', () => {});
    ws.on('message', (data: Buffer) => this.onFrame(JSON.parse(data.toString('utf8')) as Frame));
    ws.on('close', (code) => {
      clearInterval(this.hb);
      if (opened) this.closes.push(code);
      this.note(`closed ${opened ? code : 'before open'} on node ${this.node + 1}`);
      if (this.stopped || code === 4004 || code === 4010) return;
      // Its node cannot be reached at all: the other one (a balancer would do the same).
      if (!opened && !refused) this.node = 1 - this.node;
      else if (opened) this.node = this.home;
      setTimeout(() => this.connect(), 1100);
    });
  }

  private onFrame(f: Frame): void {
    if (f.op === 10) {
      const every = (f.d as { heartbeatInterval: number }).heartbeatInterval;
      this.hb = setInterval(() => {
        if (this.ws?.readyState === WebSocket.OPEN)
          this.ws.send(JSON.stringify({ op: 1, d: this.seq || null }));
      }, every);
      return;
    }
    if (f.op === 7) {
      this.note('op 7');
      this.ws?.close(4900);
      return;
    }
    if (f.op === 9) {
      this.note('op 9');
      this.sessionId = undefined;
      this.seq = 0;
      this.invalidated = true;
      return;
    }
    if (f.op !== 0) return;
    if (typeof f.s === 'number') this.seq = f.s;
    if (f.t === 'READY') {
      this.sessionId = f.d.sessionId as string;
      this.note(`READY on node ${this.node + 1}`);
      const fresh = this.hadReady;
      this.hadReady = true;
      for (const w of this.readyWaiters.splice(0)) w();
      if (fresh && this.invalidated && this.kind === 'person') void this.catchUp();
      this.invalidated = false;
    } else if (f.t === 'RESUMED') {
      this.note(`RESUMED on node ${this.node + 1} (${f.d.replayed} replayed)`);
    } else if (f.t === 'MESSAGE_CREATE' && f.d.channelId === this.channelId) {
      this.dispatched.push(Number(f.d.id));
    }
  }

  /** After op 9: what came since a few seconds before the newest message held (5 s of ids). */
  private async catchUp(): Promise<void> {
    const newest = Math.max(0, ...this.dispatched, ...this.refetched);
    let after = Math.max(0, newest - 5000 * 4096);
    for (let page = 0; page < 50; page++) {
      let r: HttpAnswer;
      try {
        r = await call(
          this.origins[this.node] as string,
          'GET',
          `/api/v1/channels/${this.channelId}/messages?after=${after}&limit=100`,
          this.token,
        );
      } catch {
        r = { status: 0 } as HttpAnswer;
      }
      if (r.status !== 200) {
        await sleep(500);
        continue;
      }
      const ids = (r.body.messages as Array<{ id: number }>).map((m) => Number(m.id));
      for (const id of ids) this.refetched.add(id);
      if (!r.body.hasMore || ids.length === 0) break;
      after = Math.max(...ids);
    }
    this.note('refetched');
  }
}

/** Every message of a channel, through the API, oldest first. */
export async function readChannel(
  origin: string,
  token: string,
  channelId: number,
): Promise<Array<{ id: number; content: string }>> {
  const out: Array<{ id: number; content: string }> = [];
  let after = 0;
  for (;;) {
    const r = await call(
      origin,
      'GET',
      `/api/v1/channels/${channelId}/messages?after=${after}&limit=100`,
      token,
    );
    if (r.status !== 200) throw new Error(`read back: ${r.status} ${r.text}`);
    const page = (r.body.messages as Array<{ id: number; content: string }>)
      .map((m) => ({ id: Number(m.id), content: m.content }))
      .sort((a, b) => a.id - b.id);
    out.push(...page);
    if (!r.body.hasMore || page.length === 0) return out;
    after = (page.at(-1) as { id: number }).id;
  }
}

/** /readyz of each node every `everyMs`: its status and body, with the time. */
export class ReadyzWatch {
  readonly seen: Array<{ node: number; at: number; status: number; body: any }> = []; // eslint-disable-line @typescript-eslint/no-explicit-any -- checked field by field
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly origins: string[],
    private readonly everyMs = 200,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.origins.forEach((o, node) => {
        const at = Date.now();
        fetch(`${o}/readyz`, { signal: AbortSignal.timeout(3000) })
          .then(async (r) => this.seen.push({ node, at, status: r.status, body: await r.json() }))
          .catch(() => this.seen.push({ node, at, status: 0, body: null }));
      });
    }, this.everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  between(from: number, to: number, node?: number) {
    return this.seen.filter(
      (s) => s.at >= from && s.at <= to && (node === undefined || s.node === node),
    );
  }
}
