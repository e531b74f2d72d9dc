import type {
  BotEventDataMap,
  BotEventEnvelope,
  BotEventType,
  GatewayErrorData,
  ReadyData,
} from '@parley/protocol';
import { GatewayClose, GatewayOp } from '@parley/protocol/gateway';
import { originOf, tell, type DebugListener } from './debug.js';
import { Emitter } from './emitter.js';
import { ParleyError } from './errors.js';

/** Listener signatures: the eight bot events (D34, D35) by name, and the client's own events. */
export type GatewayEvents = {
  [K in BotEventType]: (data: BotEventDataMap[K]) => unknown;
} & {
  /** every event, as the webhook envelope `{type, data}` (D30: `d` is exactly `data`) */
  event: (event: BotEventEnvelope) => unknown;
  /** READY: a new session (the first connect, or after op 9) */
  ready: (ready: ReadyData) => unknown;
  /** RESUMED: the missed events were replayed, live ones follow (D31) */
  resumed: () => unknown;
  /** op 9: the session could not be resumed; events in between may be missed (D31) */
  invalidSession: () => unknown;
  /** the connection went away; the client will reconnect after `delayMs` */
  reconnecting: (info: { attempt: number; delayMs: number; reason: string }) => unknown;
  /** ERROR frame from the server (D32: RATE_LIMIT; D33: INVALID_PAYLOAD) */
  gatewayError: (error: GatewayErrorData) => unknown;
  /** the client stopped for good: `close()`, or a close it must not resume after (4004, 4010) */
  stopped: (error: ParleyError | undefined) => unknown;
};

/** What the client needs of a WebSocket: `ws` on Node 20, the global one elsewhere. */
interface Socket {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  /** drop the connection without a closing handshake (a dead link) */
  terminate(): void;
}

interface SocketHandlers {
  open(): void;
  message(text: string): void;
  /** `error`: why a connection that never opened failed (ECONNREFUSED, …), when known */
  close(code: number, reason: string, error?: string): void;
  /** the upgrade was answered with an HTTP status instead (D28) */
  refused(status: number, retryAfterS: number | undefined, body: string): void;
}

export type WebSocketFactory = (
  url: string,
  headers: Record<string, string>,
  on: SocketHandlers,
) => Socket;

export interface GatewayOptions {
  /** the bot token (D8): sent in the Authorization header of the upgrade (D28) */
  token: string;
  /** the server's public origin (D1); default `http://127.0.0.1:8080` */
  url?: string | undefined;
  /** the gateway address, when not `<origin>/gateway` */
  gatewayUrl?: string;
  /** reconnect delays: first `minMs` (≥ 1 s, D29), doubling up to `maxMs` */
  reconnect?: { minMs?: number; maxMs?: number };
  /** a WebSocket to use instead of the global one / `ws` */
  webSocket?: WebSocketFactory;
  /**
   * `connect()` gives up when no READY came within this long (default 15,000 ms): a wrong
   * address or a server that never answers fails with an error instead of waiting forever
   */
  connectTimeoutMs?: number;
  /** hears each connection, reconnect and resume (see {@link DebugEvent}) */
  debug?: DebugListener | undefined;
}

/** D33, what a client should do after each close code. */
type Action = 'resume' | 'pause' | 'stop';
function actionFor(code: number): Action {
  if (code === GatewayClose.AUTHENTICATION_FAILED || code === GatewayClose.SESSION_REPLACED)
    return 'stop';
  if (code === GatewayClose.RATE_LIMITED) return 'pause';
  return 'resume';
}

const CLOSE_MESSAGES: Record<number, string> = {
  [GatewayClose.AUTHENTICATION_FAILED]:
    'gateway closed with 4004: authentication failed — the token was reset or the bot deleted (D8); use the new token',
  [GatewayClose.SESSION_REPLACED]:
    'gateway closed with 4010: another connection of this bot replaced this one (D29); not reconnecting',
};

/**
 * The bot's gateway connection (D28–D33): authenticates with the header, heartbeats at the
 * server's interval (the first beat after a random part of it), treats a missing HEARTBEAT_ACK
 * as a dead link, resumes with `?sessionId&seq` after drops and op 7, starts over after op 9,
 * obeys the close-code table (stop on 4004 and 4010, pause on 4008, resume otherwise), reconnects
 * with capped exponential backoff, and waits out a 429 on the upgrade as its Retry-After says.
 */
export class GatewayClient
  extends Emitter<GatewayEvents>
  implements AsyncIterable<BotEventEnvelope>
{
  /** the current session (D31), resumable after a drop */
  sessionId: string | undefined;
  /** the last `s` processed: sent in heartbeats and when resuming */
  seq = 0;
  private readonly token: string;
  private readonly url: string;
  private readonly minMs: number;
  private readonly maxMs: number;
  private readonly factory: WebSocketFactory | undefined;
  private socket: Socket | undefined;
  private state: 'idle' | 'connecting' | 'open' | 'waiting' | 'stopped' = 'idle';
  private failures = 0;
  private lastAttempt = 0;
  private heartbeat: ReturnType<typeof setTimeout> | undefined;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private awaitingAck = false;
  private firstReady: { resolve(r: ReadyData): void; reject(e: unknown): void } | undefined;
  private stopError: ParleyError | undefined;
  private readonly connectTimeoutMs: number;
  private readonly debug: DebugListener | undefined;
  /** a READY has been seen: from then on failures are reconnected, not reported */
  private everReady = false;
  private connectTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(opts: GatewayOptions) {
    super();
    if (!opts.token) throw new TypeError('GatewayClient: a bot token is required');
    this.token = opts.token;
    // A URL ending in /api/v1 or /gateway (or not a URL) is refused here, saying what to pass.
    this.url =
      opts.gatewayUrl ?? `${originOf(opts.url, 'GatewayClient').replace(/^http/, 'ws')}/gateway`;
    this.connectTimeoutMs = opts.connectTimeoutMs ?? 15_000;
    this.debug = opts.debug;
    this.minMs = Math.max(1000, opts.reconnect?.minMs ?? 1000);
    this.maxMs = Math.max(this.minMs, opts.reconnect?.maxMs ?? 30_000);
    this.factory = opts.webSocket;
  }

  /** Connect; resolves with the first READY, rejects when the client stops before it. */
  connect(): Promise<ReadyData> {
    if (this.state === 'stopped')
      return Promise.reject(
        this.stopError ?? new ParleyError('STOPPED', 'the client was closed', 0),
      );
    const ready = new Promise<ReadyData>(
      (resolve, reject) => (this.firstReady = { resolve, reject }),
    );
    if (!this.everReady && !this.connectTimer) {
      this.connectTimer = setTimeout(() => {
        this.connectTimer = undefined;
        if (this.everReady) return;
        this.socket?.terminate();
        this.stop(
          new ParleyError(
            'TIMEOUT',
            `no READY from the gateway at ${this.url} within ${this.connectTimeoutMs / 1000} s ` +
              `(connectTimeoutMs): is url the Parley server's origin?`,
            0,
          ),
        );
      }, this.connectTimeoutMs);
      this.connectTimer.unref?.();
    }
    if (this.state === 'idle') void this.open();
    return ready;
  }

  /** End the session: close with 1000 (not resumable, D31) and stop reconnecting. */
  close(): Promise<void> {
    const socket = this.socket;
    this.stop(undefined);
    if (!socket) return Promise.resolve();
    return new Promise((resolve) => {
      this.closedWaiter = resolve;
      socket.close(1000, 'bye');
      setTimeout(resolve, 2000).unref?.();
    });
  }
  private closedWaiter: (() => void) | undefined;

  /** Events as an async iterator: `for await (const { type, data } of client) …` */
  [Symbol.asyncIterator](): AsyncIterator<BotEventEnvelope> {
    const queue: BotEventEnvelope[] = [];
    let wake: (() => void) | undefined;
    let done = this.state === 'stopped';
    const onEvent = (e: BotEventEnvelope): void => {
      queue.push(e);
      wake?.();
    };
    const onStop = (): void => {
      done = true;
      wake?.();
    };
    this.on('event', onEvent).on('stopped', onStop);
    const cleanup = (): void => {
      this.off('event', onEvent).off('stopped', onStop);
    };
    return {
      next: async () => {
        for (;;) {
          const e = queue.shift();
          if (e) return { value: e, done: false };
          if (done) {
            cleanup();
            return { value: undefined, done: true };
          }
          await new Promise<void>((r) => (wake = r));
          wake = undefined;
        }
      },
      return: async () => {
        cleanup();
        return { value: undefined, done: true };
      },
    };
  }

  private async open(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'connecting';
    // D29: at most one connection attempt per second.
    const since = Date.now() - this.lastAttempt;
    if (since < 1000) await sleep(1000 - since);
    if (this.state !== 'connecting') return;
    this.lastAttempt = Date.now();
    const url =
      this.sessionId === undefined
        ? this.url
        : `${this.url}?sessionId=${encodeURIComponent(this.sessionId)}&seq=${this.seq}`;
    tell(this.debug, { type: 'connect', url: this.url, resume: this.sessionId !== undefined });
    if (this.sessionId !== undefined)
      tell(this.debug, { type: 'resume', sessionId: this.sessionId, seq: this.seq });
    const factory = this.factory ?? (await defaultFactory());
    let settled = false;
    const settle = (): boolean => {
      if (settled) return false;
      settled = true;
      return true;
    };
    let helloTimer: ReturnType<typeof setTimeout> | undefined;
    const socket = factory(
      url,
      { authorization: `Bearer ${this.token}` },
      {
        open: () => {
          // HELLO comes first (D30); without it the link is not working.
          helloTimer = setTimeout(() => socket.terminate(), 15_000);
        },
        message: (text) => {
          if (helloTimer) clearTimeout(helloTimer);
          helloTimer = undefined;
          this.onFrame(socket, text);
        },
        close: (code, reason, error) => {
          if (helloTimer) clearTimeout(helloTimer);
          if (!settle()) return;
          this.onClose(socket, code, reason, error);
        },
        refused: (status, retryAfterS, body) => {
          if (!settle()) return;
          this.onRefused(status, retryAfterS, body);
        },
      },
    );
    this.socket = socket;
  }

  private onFrame(socket: Socket, text: string): void {
    if (socket !== this.socket) return;
    let f: { op?: number; t?: string; s?: number; d?: unknown };
    try {
      f = JSON.parse(text) as typeof f;
    } catch {
      return;
    }
    switch (f.op) {
      case GatewayOp.HELLO: {
        this.state = 'open';
        const interval =
          Number((f.d as { heartbeatInterval?: unknown } | null)?.heartbeatInterval) || 30_000;
        this.startHeartbeat(socket, interval);
        return;
      }
      case GatewayOp.HEARTBEAT:
        this.sendHeartbeat(socket); // D30: the server asks for one at once
        return;
      case GatewayOp.HEARTBEAT_ACK:
        this.awaitingAck = false;
        return;
      case GatewayOp.RECONNECT:
        // D30: reconnect and resume. Not 1000/1001, which would end the session (D31).
        socket.close(4000, 'reconnect requested');
        return;
      case GatewayOp.INVALID_SESSION:
        // D31: a fresh READY follows on this same connection.
        this.sessionId = undefined;
        this.seq = 0;
        this.emit('invalidSession');
        return;
      case GatewayOp.DISPATCH:
        this.onDispatch(f.t ?? '', f.s, f.d);
        return;
    }
  }

  private onDispatch(t: string, s: number | undefined, d: unknown): void {
    if (t === 'ERROR') {
      this.emit('gatewayError', d as GatewayErrorData);
      return;
    }
    if (t === 'READY') {
      const ready = d as ReadyData;
      this.sessionId = ready.sessionId;
      if (s !== undefined) this.seq = s;
      this.failures = 0;
      this.everReady = true;
      if (this.connectTimer) clearTimeout(this.connectTimer);
      this.connectTimer = undefined;
      tell(this.debug, { type: 'ready', sessionId: ready.sessionId });
      this.emit('ready', ready);
      this.firstReady?.resolve(ready);
      this.firstReady = undefined;
      return;
    }
    if (t === 'RESUMED') {
      if (s !== undefined && s > this.seq) this.seq = s;
      this.failures = 0;
      tell(this.debug, { type: 'resumed', seq: this.seq });
      this.emit('resumed');
      return;
    }
    // A replayed dispatch at or below what was processed is not given twice.
    if (s !== undefined && s <= this.seq) return;
    const event = { type: t, data: d } as BotEventEnvelope;
    this.emit(t as BotEventType, d as never);
    this.emit('event', event);
    if (s !== undefined) this.seq = s; // processed: a resume starts after it
  }

  private startHeartbeat(socket: Socket, interval: number): void {
    this.stopHeartbeat();
    this.awaitingAck = false;
    const beat = (): void => {
      if (socket !== this.socket) return;
      if (this.awaitingAck) {
        // No ACK for the last beat: the link is dead. Drop it (no close frame: resumable, D31).
        socket.terminate();
        return;
      }
      this.sendHeartbeat(socket);
      this.heartbeat = setTimeout(beat, interval);
    };
    // The first beat after a random part of the interval, so many bots do not beat in step.
    this.heartbeat = setTimeout(beat, Math.floor(interval * Math.random()));
  }

  private sendHeartbeat(socket: Socket): void {
    this.awaitingAck = true;
    try {
      socket.send(JSON.stringify({ op: GatewayOp.HEARTBEAT, d: this.seq > 0 ? this.seq : null }));
    } catch {
      // the close handler takes over
    }
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearTimeout(this.heartbeat);
    this.heartbeat = undefined;
  }

  private onClose(socket: Socket, code: number, reason: string, error?: string): void {
    if (socket !== this.socket) return;
    this.socket = undefined;
    this.stopHeartbeat();
    if (this.state === 'stopped') {
      this.closedWaiter?.();
      return;
    }
    if (!this.everReady && error !== undefined) {
      // The first connection never opened: a wrong address or no server. Say so now rather
      // than retrying silently (after a READY, drops are reconnected as usual).
      const why =
        error === 'ECONNREFUSED'
          ? `connection refused — is Parley running at ${this.url}?`
          : error === 'ENOTFOUND' || error === 'EAI_AGAIN'
            ? `the host of ${this.url} was not found (DNS) — is the url right?`
            : `${this.url}: ${error}`;
      this.stop(new ParleyError('NETWORK_ERROR', `cannot connect to the gateway: ${why}`, 0));
      return;
    }
    const action = actionFor(code);
    if (action === 'stop') {
      this.stop(
        new ParleyError(
          code === GatewayClose.SESSION_REPLACED ? 'SESSION_REPLACED' : 'AUTHENTICATION_FAILED',
          CLOSE_MESSAGES[code] ?? `gateway closed with ${code}`,
          code,
        ),
      );
      return;
    }
    const delay = action === 'pause' ? Math.max(5000, this.nextDelay()) : this.nextDelay();
    this.retry(delay, `closed ${code}${reason ? ` ${reason}` : ''}`);
  }

  private onRefused(status: number, retryAfterS: number | undefined, body: string): void {
    this.socket = undefined;
    if (status === 401) {
      // D9, D28: the token is not (or no longer) valid.
      let message = 'the gateway refused the token (401): it is wrong, or was reset (D8)';
      try {
        const e = (JSON.parse(body) as { error?: { message?: string } }).error;
        if (e?.message) message = `gateway refused the token (401): ${e.message}`;
      } catch {
        // keep the default message
      }
      this.stop(new ParleyError('UNAUTHORIZED', message, 401));
      return;
    }
    if (status === 429) {
      // D28: a connection attempt less than 1 s after the previous one; wait as asked.
      this.retry(Math.max(1000, Math.ceil((retryAfterS ?? 1) * 1000)), 'refused 429', false);
      return;
    }
    if (!this.everReady && status < 500) {
      // A Parley gateway answers an upgrade with 101, 401 or 429 (D28): anything else before
      // the first READY is another server at that address.
      this.stop(
        new ParleyError(
          'NOT_PARLEY',
          `${this.url} answered the WebSocket upgrade with HTTP ${status}: not a Parley gateway — ` +
            `is url the Parley server's origin (without /api/v1)?`,
          status,
        ),
      );
      return;
    }
    this.retry(this.nextDelay(), `refused ${status}`);
  }

  private nextDelay(): number {
    const base = Math.min(this.maxMs, this.minMs * 2 ** this.failures);
    this.failures++;
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }

  private retry(delayMs: number, reason: string, count = true): void {
    if (this.state === 'stopped') return;
    this.state = 'waiting';
    tell(this.debug, {
      type: 'reconnect',
      attempt: count ? this.failures : this.failures + 1,
      delayMs,
      reason,
    });
    this.emit('reconnecting', {
      attempt: count ? this.failures : this.failures + 1,
      delayMs,
      reason,
    });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.open();
    }, delayMs);
  }

  private stop(error: ParleyError | undefined): void {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    this.stopError = error;
    this.stopHeartbeat();
    if (this.retryTimer) clearTimeout(this.retryTimer);
    if (this.connectTimer) clearTimeout(this.connectTimer);
    this.connectTimer = undefined;
    if (error) this.firstReady?.reject(error);
    else this.firstReady?.reject(new ParleyError('STOPPED', 'the client was closed', 0));
    this.firstReady = undefined;
    this.emit('stopped', error);
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * The WebSocket: the global one where it exists (Node ≥ 22, Bun, Deno: they take `headers`),
 * else `ws` (Node 20, which has none).
 */
async function defaultFactory(): Promise<WebSocketFactory> {
  const Global = (globalThis as { WebSocket?: GlobalWebSocket }).WebSocket;
  if (Global) return globalFactory(Global);
  const { default: WS } = await import('ws');
  return (url, headers, on) => {
    const ws = new WS(url, { headers, maxPayload: 16 * 1024 * 1024 });
    let opened = false;
    let failure: string | undefined;
    ws.on('open', () => {
      opened = true;
      on.open();
    });
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (!isBinary) on.message(data.toString('utf8'));
    });
    ws.on('close', (code: number, reason: Buffer) =>
      on.close(code, reason.toString(), opened ? undefined : failure),
    );
    ws.on('error', (err: Error & { code?: string }) => {
      // 'close' follows (code 1006); before 'open' this says why the connection failed
      failure = err.code ?? err.message;
    });
    ws.on('unexpected-response', (req, res) => {
      // D28: the upgrade was answered with an HTTP status (401, 429 with Retry-After, …).
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += body.length < 4096 ? c : ''));
      res.on('end', () => {
        on.refused(res.statusCode ?? 0, retryAfterOf(res.headers['retry-after'], body), body);
        req.destroy();
        ws.terminate();
      });
    });
    return {
      send: (d) => ws.send(d),
      close: (c, r) => ws.close(c, r),
      terminate: () => ws.terminate(),
    };
  };
}

type GlobalWebSocket = new (url: string, opts?: unknown) => WebSocket;

/**
 * The standard WebSocket does not tell why a connection failed before opening. Then the token
 * is checked with `GET /api/v1/bot/me` (docs/interface.md#authentication): a 401 there stops the
 * client as a 401 refusal would (D28), anything else is treated as a dropped link.
 */
function globalFactory(G: GlobalWebSocket): WebSocketFactory {
  return (url, headers, on) => {
    const ws = new G(url, { headers });
    let opened = false;
    ws.onopen = () => {
      opened = true;
      on.open();
    };
    ws.onmessage = (e) => {
      if (typeof e.data === 'string') on.message(e.data);
    };
    ws.onclose = (e) => {
      if (opened) return on.close(e.code, e.reason);
      const origin = url.replace(/^ws/, 'http').replace(/\/gateway(\?.*)?$/, '');
      fetch(`${origin}/api/v1/bot/me`, { headers })
        .then(async (res) => {
          if (res.status === 401) on.refused(401, undefined, await res.text());
          // Not Parley's JSON: another server at this address (reported as its status).
          else if (!/\bjson\b/i.test(res.headers.get('content-type') ?? ''))
            on.refused(res.status >= 300 && res.status < 500 ? res.status : 404, undefined, '');
          else on.close(e.code, e.reason);
        })
        .catch((err: { cause?: { code?: string } }) =>
          on.close(e.code, e.reason, err.cause?.code ?? 'connection failed'),
        );
    };
    return {
      send: (d) => ws.send(d),
      close: (c, r) => ws.close(c, r),
      terminate: () => ws.close(4000),
    };
  };
}

function retryAfterOf(header: string | string[] | undefined, body: string): number | undefined {
  try {
    const e = (JSON.parse(body) as { error?: { retryAfter?: unknown } }).error;
    if (typeof e?.retryAfter === 'number') return e.retryAfter;
  } catch {
    // not JSON
  }
  const n = Number(Array.isArray(header) ? header[0] : header);
  return Number.isFinite(n) ? n : undefined;
}
