import WebSocket from 'ws';
import { BenchSkip } from './types.js';
import { nowMs } from './stats.js';

/**
 * A minimal gateway client written from docs/protocol.md D28–D32 alone: connect with
 * `Authorization: Bearer <token>`, receive op 10 HELLO, then a READY dispatch, then op 0
 * dispatches; heartbeat every heartbeatInterval. Times are `nowMs()` (monotonic, comparable
 * across processes).
 */
export interface DispatchFrame {
  readonly op: 0;
  readonly t: string;
  readonly s: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- event data is checked where used
  readonly d: any;
}

export interface GatewayOptions {
  /** called for every dispatch after READY, with the time the frame arrived */
  onDispatch?: (frame: DispatchFrame, receivedAt: number) => void;
  /**
   * Instead of onDispatch: called for every dispatch after READY with its type and `s` only, read
   * from the frame's first bytes without decoding or parsing the rest — a reader that costs the
   * load generator about what a bare socket counting frames costs (bench/send's connected case
   * against its floor's 50 sockets, issue 29)
   */
  onDispatchHead?: (type: string, s: number) => void;
  /** called when the server closes the connection after READY */
  onClose?: (code: number) => void;
  /** send heartbeats (D30); the first at a random point of the interval to spread them */
  heartbeat?: boolean;
  timeoutMs?: number;
}

export class GatewayConnection {
  /** when the upgrade request was started */
  readonly startedAt = nowMs();
  helloAt = 0;
  readyAt = 0;
  heartbeatInterval = 0;
  sessionId = '';
  lastSeq = 0;
  acks = 0;
  closedWith: number | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(readonly ws: WebSocket) {}

  get helloToReadyMs(): number {
    return this.readyAt - this.helloAt;
  }

  /** the whole opening: TCP, upgrade (authentication), HELLO, READY */
  get openToReadyMs(): number {
    return this.readyAt - this.startedAt;
  }

  startHeartbeat(): void {
    const beat = (): void => {
      if (this.ws.readyState === WebSocket.OPEN)
        this.ws.send(JSON.stringify({ op: 1, d: this.lastSeq || null }));
    };
    // Spread the first beat over the interval: 10,000 clients must not beat in lockstep.
    this.timer = setTimeout(() => {
      beat();
      this.timer = setInterval(beat, this.heartbeatInterval);
      this.timer.unref();
    }, Math.random() * this.heartbeatInterval);
    this.timer.unref();
  }

  /** Close with 1000 (ends the session, D31) or drop the socket at once. */
  close(abrupt = false): void {
    clearTimeout(this.timer);
    clearInterval(this.timer);
    if (abrupt) this.ws.terminate();
    else if (this.ws.readyState === WebSocket.OPEN) this.ws.close(1000);
  }
}

/** Thrown when the server has no gateway yet (the upgrade is answered 404). */
export class GatewayUnavailable extends BenchSkip {
  constructor(detail: string) {
    super(`gateway not available (${detail})`);
  }
}

const DISPATCH_HEAD = /^\{"op":0,"t":"([A-Z_]+)","s":(\d+)[,}]/;

export function connectGateway(
  url: string,
  token: string,
  opts: GatewayOptions = {},
): Promise<GatewayConnection> {
  const ws = new WebSocket(url, {
    headers: { authorization: `Bearer ${token}` },
    perMessageDeflate: false,
  });
  const conn = new GatewayConnection(ws);
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (err: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      ws.terminate();
      reject(err);
    };
    const timer = setTimeout(
      () => fail(new Error(`no HELLO and READY within ${opts.timeoutMs ?? 15_000} ms`)),
      opts.timeoutMs ?? 15_000,
    );
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        const status = res.statusCode ?? 0;
        // No /gateway route at all: the feature is not there yet, which is a skip, not a failure.
        if (status === 404) fail(new GatewayUnavailable(`GET /gateway answered 404`));
        else fail(new Error(`gateway refused the upgrade: HTTP ${status} ${body.slice(0, 200)}`));
      });
    });
    ws.on('error', (err) => fail(err));
    ws.on('close', (code) => {
      conn.closedWith = code;
      if (!settled) fail(new Error(`gateway closed with ${code} before READY`));
      else opts.onClose?.(code);
    });
    ws.on('message', (data) => {
      if (settled && opts.onDispatchHead && Buffer.isBuffer(data)) {
        // `{"op":0,"t":"TYPE","s":N,…` (docs/protocol.md): the head is in the first bytes.
        const head = DISPATCH_HEAD.exec(data.toString('latin1', 0, 64));
        if (head) {
          conn.lastSeq = Number(head[2]);
          opts.onDispatchHead(head[1] as string, conn.lastSeq);
          return;
        }
      }
      const at = nowMs();
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- text frames (D30)
      const frame = JSON.parse(data.toString()) as {
        op: number;
        t?: string;
        s?: number;
        d?: Record<string, unknown> | null;
      };
      switch (frame.op) {
        case 10:
          conn.helloAt = at;
          conn.heartbeatInterval = Number(frame.d?.['heartbeatInterval']) || 30_000;
          return;
        case 11:
          conn.acks += 1;
          return;
        case 1:
          // D30: the server may ask for a heartbeat at once.
          ws.send(JSON.stringify({ op: 1, d: conn.lastSeq || null }));
          return;
        case 0: {
          if (typeof frame.s === 'number') conn.lastSeq = frame.s;
          if (frame.t === 'READY' && !settled) {
            conn.readyAt = at;
            conn.sessionId = typeof frame.d?.['sessionId'] === 'string' ? frame.d['sessionId'] : '';
            settled = true;
            clearTimeout(timer);
            if (opts.heartbeat) conn.startHeartbeat();
            resolve(conn);
            return;
          }
          if (settled) opts.onDispatch?.(frame as DispatchFrame, at);
          return;
        }
        default:
          return;
      }
    });
  });
}
