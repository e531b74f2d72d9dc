import { signal } from '@preact/signals';
import { GatewayOp } from '@parley/protocol';

/**
 * The people's gateway (D51), authenticated by the session cookie on this same origin. It keeps
 * the session's sequence number and, when the connection drops, reconnects with
 * `?sessionId=…&seq=…` (D31): the server replays what was missed, then sends RESUMED. When it
 * cannot (op 9), a fresh READY follows and the store refetches with `after=` cursors — nothing
 * missed, nothing shown twice (messages are keyed by id).
 */
export type ConnState = 'connecting' | 'ready' | 'reconnecting' | 'closed';
export const connState = signal<ConnState>('connecting');
/**
 * D70: why the server ended the connection for good, when it said (4011: this person's 17th
 * connection closed this one, the oldest). The app does not reconnect by itself then.
 */
export const stoppedBy = signal<'too-many-connections' | null>(null);

export interface GatewayHandlers {
  /** a fresh session: READY (first connect, or after op 9) */
  onReady(d: unknown, fresh: boolean): void;
  onResumed(): void;
  onDispatch(t: string, d: unknown): void;
  /** 4004: the session ended (logged out elsewhere, password changed) */
  onAuthFailed(): void;
}

// Our own close code for "reconnect and resume" (any code but 1000/1001 keeps the session, D31).
const CLOSE_RESUME = 4900;

export class Gateway {
  private ws: WebSocket | null = null;
  private sessionId: string | null = null;
  private seq = 0;
  private hadReady = false;
  private heartbeat: ReturnType<typeof setInterval> | null = null;
  private acked = true;
  private retries = 0;
  private stopped = false;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly h: GatewayHandlers) {
    // D66: the server pushes a notification only to people with no visible tab (op 3).
    if (typeof document !== 'undefined')
      document.addEventListener('visibilitychange', () => this.reportVisibility());
  }

  /** D66 (op 3, people only): tell the server whether this tab can be seen now. */
  private reportVisibility(): void {
    if (this.ws?.readyState !== WebSocket.OPEN || connState.value !== 'ready') return;
    const visible = typeof document !== 'undefined' && document.visibilityState === 'visible';
    this.ws.send(JSON.stringify({ op: GatewayOp.VISIBILITY, d: { visible } }));
  }

  start(): void {
    this.stopped = false;
    stoppedBy.value = null;
    this.open();
  }

  /** Ends the session for good (logout): a 1000 close is not resumable (D31). */
  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.clearHeartbeat();
    this.ws?.close(1000, 'bye');
    this.ws = null;
    this.sessionId = null;
    connState.value = 'closed';
  }

  /** For tests and the banner: drop the connection as a network failure would. */
  drop(): void {
    this.ws?.close(CLOSE_RESUME, 'drop');
  }

  private url(): string {
    const base = `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/gateway`;
    return this.sessionId === null
      ? base
      : `${base}?sessionId=${encodeURIComponent(this.sessionId)}&seq=${this.seq}`;
  }

  private open(): void {
    connState.value = this.hadReady ? 'reconnecting' : 'connecting';
    const ws = new WebSocket(this.url());
    this.ws = ws;
    ws.onmessage = (ev) => this.onFrame(ev.data);
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.clearHeartbeat();
      if (this.stopped) return;
      if (ev.code === 4004) {
        this.stopped = true;
        connState.value = 'closed';
        this.h.onAuthFailed();
        return;
      }
      // D33/D70: not resumable, and the client must not reconnect by itself.
      if (ev.code === 4010 || ev.code === 4011) {
        this.stopped = true;
        this.sessionId = null;
        connState.value = 'closed';
        stoppedBy.value = 'too-many-connections';
        return;
      }
      connState.value = 'reconnecting';
      // D28: at most one attempt a second; back off to 8 s while the server stays away.
      const delay = Math.min(8000, 1000 * 2 ** Math.min(this.retries, 3)) + Math.random() * 400;
      this.retries++;
      this.retryTimer = setTimeout(() => this.open(), this.retries === 1 ? 1000 : delay);
    };
  }

  private onFrame(raw: unknown): void {
    if (typeof raw !== 'string') return;
    let f: { op: number; t?: string; s?: number; d?: unknown };
    try {
      f = JSON.parse(raw) as typeof f;
    } catch {
      return;
    }
    switch (f.op) {
      case GatewayOp.HELLO: {
        const d = f.d as { heartbeatInterval: number };
        this.startHeartbeat(d.heartbeatInterval);
        break;
      }
      case GatewayOp.HEARTBEAT:
        this.beat();
        break;
      case GatewayOp.HEARTBEAT_ACK:
        this.acked = true;
        break;
      case GatewayOp.RECONNECT:
        this.ws?.close(CLOSE_RESUME, 'reconnect');
        break;
      case GatewayOp.INVALID_SESSION:
        // D31: a fresh READY follows on this connection.
        this.sessionId = null;
        this.seq = 0;
        break;
      case GatewayOp.DISPATCH: {
        if (typeof f.s === 'number') this.seq = f.s;
        if (f.t === 'READY') {
          const d = f.d as { sessionId: string };
          this.sessionId = d.sessionId;
          this.retries = 0;
          connState.value = 'ready';
          const fresh = this.hadReady;
          this.hadReady = true;
          this.reportVisibility();
          this.h.onReady(f.d, fresh);
        } else if (f.t === 'RESUMED') {
          this.retries = 0;
          connState.value = 'ready';
          this.reportVisibility();
          this.h.onResumed();
        } else if (f.t && f.t !== 'ERROR') {
          this.h.onDispatch(f.t, f.d);
        }
        break;
      }
    }
  }

  private startHeartbeat(interval: number): void {
    this.clearHeartbeat();
    this.acked = true;
    // D32: the first one early, then every interval; no ack since the last one → a zombie.
    const first = setTimeout(() => this.beat(), Math.min(interval * Math.random(), 5000));
    this.heartbeat = setInterval(() => {
      if (!this.acked) {
        this.ws?.close(CLOSE_RESUME, 'no heartbeat ack');
        return;
      }
      this.beat();
    }, interval);
    this.firstBeat = first;
  }
  private firstBeat: ReturnType<typeof setTimeout> | null = null;

  private beat(): void {
    if (this.ws?.readyState !== WebSocket.OPEN) return;
    this.acked = false;
    this.ws.send(JSON.stringify({ op: GatewayOp.HEARTBEAT, d: this.seq }));
  }

  private clearHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    if (this.firstBeat) clearTimeout(this.firstBeat);
    this.heartbeat = null;
    this.firstBeat = null;
  }
}
