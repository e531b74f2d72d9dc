import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import type { RateSpec } from '../config/config.js';
import type { Clock } from '../ids/clock.js';
import { take, type BucketState } from '../ratelimit/token-bucket.js';
import { Close } from './close-codes.js';
import { errorFrame, HEARTBEAT_ACK_FRAME, helloFrame, parseClientFrame } from './frames.js';

/** D32: past the limit, this many more frames while still limited close with 4008. */
const LIMITED_FRAMES_BEFORE_CLOSE = 20;
/** D32: at most one ERROR RATE_LIMIT frame per second. */
const ERROR_FRAME_EVERY_MS = 1000;
/** After sending a close frame, how long a peer gets to answer before the socket is cut. */
const CLOSE_GRACE_MS = 3000;

export interface LinkOptions {
  readonly heartbeatMs: number;
  readonly rate: RateSpec | null;
  readonly clock: Clock;
  /** we are closing the socket with `code` (the owner stops feeding it) */
  readonly closing?: (code: number) => void;
  /** the socket has closed: `code` is ours when we closed it, else the peer's (D33) */
  readonly closed: (code: number) => void;
  /** a client heartbeat arrived (D30 op 1, with its `d`) */
  readonly heartbeat?: (lastSeq: number | null) => void;
  /** D66: a person's client said whether it is visible (op 3); absent: op 3 closes 4001 */
  readonly visibility?: (visible: boolean) => void;
  /**
   * D70: past this many unsent bytes queued for the peer (a client that does not read) the
   * socket closes with 4000. Frames sent with `exempt` (READY) do not count while unsent.
   * Undefined: no bound (bots' connections stop being fed instead, connection.ts `busy`).
   */
  readonly maxUnsentBytes?: number;
}

/**
 * The protocol mechanics every gateway connection shares, bots' and people's (D30–D33): HELLO,
 * the heartbeat watchdog (4009), WebSocket pings that find dead peers, the client-frame rate
 * limit (ERROR RATE_LIMIT, then 4008), decode errors (4002), unknown opcodes (4001),
 * INVALID_PAYLOAD, and writes batched per turn of the event loop. What a connection carries
 * (bots' streams, people's fan-out) is its owner's business.
 */
export class SocketLink {
  private heartbeat: NodeJS.Timeout | undefined;
  private pinger: NodeJS.Timeout | undefined;
  private awaitingPong = false;
  private bucket: BucketState | undefined;
  private limitedFrames = 0;
  private lastErrorFrameAt = -Infinity;
  /** set once close() was called: the close code we chose */
  closeCode: number | undefined;
  /** corked until the next tick (see corkForTurn) */
  corked = false;
  /** bytes handed to the socket so far (frames and their headers; pings are not counted) */
  private queued = 0;
  /** `queued` at the end of the last exempt frame (D70: READY does not count while unsent) */
  private exemptEnd = 0;

  constructor(
    private readonly ws: WebSocket,
    /** the upgraded TCP socket under `ws`, to batch writes */
    readonly socket: Duplex | undefined,
    private readonly o: LinkOptions,
  ) {}

  get closing(): boolean {
    return this.closeCode !== undefined;
  }

  /** bytes queued in the socket and not yet sent (slow readers) */
  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  /** Listeners, HELLO, and the timers. */
  start(): void {
    this.ws.on('message', (data: Buffer, isBinary: boolean) => this.onFrame(data, isBinary));
    this.ws.on('close', (code: number) => {
      this.stopTimers();
      this.o.closed(this.closeCode ?? code);
    });
    this.ws.on('pong', () => {
      this.awaitingPong = false;
    });
    // A socket error is followed by 'close'; the listener keeps it from being thrown.
    this.ws.on('error', () => {});
    this.send(helloFrame(this.o.heartbeatMs));
    // D32: silence for 1.5 × the interval closes with 4009.
    this.heartbeat = setTimeout(
      () => this.close(Close.SESSION_TIMED_OUT, 'no heartbeat'),
      this.o.heartbeatMs * 1.5,
    );
    // WebSocket pings find dead TCP peers (no close frame would ever reach them).
    this.pinger = setInterval(() => {
      if (this.awaitingPong) {
        this.ws.terminate();
        return;
      }
      this.awaitingPong = true;
      this.ws.ping();
    }, this.o.heartbeatMs);
  }

  private onFrame(data: Buffer, isBinary: boolean): void {
    if (this.closing) return;
    if (data.length <= 4096 && this.o.rate && !this.allowFrame(this.o.rate)) return;
    const frame = parseClientFrame(data, isBinary, this.o.visibility !== undefined);
    switch (frame.kind) {
      case 'close':
        this.close(frame.code, frame.reason);
        return;
      case 'invalid':
        this.send(errorFrame('INVALID_PAYLOAD', frame.message));
        return;
      case 'heartbeat':
        this.heartbeat?.refresh();
        this.send(HEARTBEAT_ACK_FRAME);
        this.o.heartbeat?.(frame.lastSeq);
        return;
      case 'visibility':
        this.o.visibility?.(frame.visible);
        return;
    }
  }

  /** D32: 10/s burst 20 (configurable); ERROR frame, then 4008 after 20 more limited frames. */
  private allowFrame(rate: RateSpec): boolean {
    const now = this.o.clock.now();
    const { decision, state } = take(this.bucket, rate, now);
    if (decision.allowed) {
      this.bucket = state;
      this.limitedFrames = 0;
      return true;
    }
    if (this.limitedFrames++ >= LIMITED_FRAMES_BEFORE_CLOSE) {
      this.close(Close.RATE_LIMITED, 'rate limited');
      return false;
    }
    if (now - this.lastErrorFrameAt >= ERROR_FRAME_EVERY_MS) {
      this.lastErrorFrameAt = now;
      this.send(errorFrame('RATE_LIMIT', 'too many messages'));
    }
    return false;
  }

  /**
   * A text frame. `exempt`: the session's own opening frame (READY), which may be large (every
   * guild with its channels) and does not count against `maxUnsentBytes` while it is unsent.
   */
  send(frame: string, exempt = false): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    corkForTurn(this);
    this.ws.send(frame);
    const bytes = Buffer.byteLength(frame);
    // ws adds a 2–10 byte header: counted as 10, so the exempt part never falls short.
    this.queued += bytes + 10;
    if (exempt) this.exemptEnd = this.queued;
    this.checkUnsent();
  }

  /**
   * D70: the bytes queued for the peer and not yet taken by the kernel, READY's rest left out,
   * above `maxUnsentBytes` → close 4000 (resumable: the client resumes if the session's replay
   * still covers what it missed, else op 9). Checked after every write, so the queue never holds
   * more than the bound plus one write.
   */
  private checkUnsent(): void {
    const max = this.o.maxUnsentBytes;
    if (max === undefined || this.closing) return;
    const unsent = this.ws.bufferedAmount;
    if (unsent <= max) return;
    // Bytes already taken by the kernel = queued − unsent; what is left of READY is unsent.
    const exemptLeft = Math.max(0, this.exemptEnd - (this.queued - unsent));
    if (unsent - exemptLeft > max) this.close(Close.UNKNOWN_ERROR, 'too much unsent data');
  }

  /**
   * Complete WebSocket frames, already framed (people-hub.ts frameInto), written to the socket as
   * they are: one write per recipient instead of ws's header, list and cork per frame. Safe beside
   * ws's own writes: without per-message deflate ws writes each frame whole and synchronously.
   * Returns true when the bytes were taken at once — copied to the kernel by a write that
   * completed synchronously, copied here, or dropped with a closed socket — so the caller may
   * reuse the buffer; false when the socket keeps it until it can write (a slow reader).
   * `immutable`: the caller never changes `frames`, so the socket may keep it without a copy.
   */
  sendFrame(frames: Buffer, immutable = false): boolean {
    if (this.ws.readyState !== this.ws.OPEN) return true;
    const socket = this.socket;
    this.queued += frames.length;
    if (!socket) {
      for (const payload of unframe(frames)) this.ws.send(Buffer.from(payload), TEXT);
      this.checkUnsent();
      return true;
    }
    if (immutable) {
      socket.write(frames);
      this.checkUnsent();
      return true;
    }
    if (socket.writableLength > 0 || socket.writableCorked > 0) {
      // Queued behind other bytes: a copy of its own, so the caller's buffer stays free.
      socket.write(Buffer.from(frames));
      this.checkUnsent();
      return true;
    }
    socket.write(frames);
    this.checkUnsent();
    // 0: the write went to the kernel synchronously; else the socket holds `frames`.
    return socket.writableLength === 0;
  }

  /** Close with a D33 code (once); the peer gets CLOSE_GRACE_MS to answer. */
  close(code: number, reason: string): void {
    if (this.closing) return;
    this.closeCode = code;
    this.stopTimers();
    this.o.closing?.(code);
    this.ws.close(code, reason);
    setTimeout(() => this.ws.terminate(), CLOSE_GRACE_MS).unref();
  }

  stopTimers(): void {
    clearTimeout(this.heartbeat);
    clearInterval(this.pinger);
  }
}

const TEXT = { binary: false } as const;

/** The payloads of frames built by frameInto (for a link without its raw socket: tests, tools). */
function unframe(frames: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  while (at < frames.length) {
    const len7 = (frames[at + 1] as number) & 0x7f;
    const head = len7 < 126 ? 2 : len7 === 126 ? 4 : 10;
    const len =
      len7 < 126
        ? len7
        : len7 === 126
          ? frames.readUInt16BE(at + 2)
          : Number(frames.readBigUInt64BE(at + 2));
    out.push(frames.subarray(at + head, at + head + len));
    at += head + len;
  }
  return out;
}

/**
 * Frames made in the same turn of the loop (a group commit hands over several events at once, a
 * replay a whole batch, one people's event reaches thousands of sockets) leave in one write per
 * socket instead of one system call per frame: each socket is corked at its first frame of the
 * turn, and ONE callback uncorks them all on the next tick.
 */
const corkedLinks: SocketLink[] = [];

function corkForTurn(link: SocketLink): void {
  const socket = link.socket;
  if (!socket || link.corked) return;
  link.corked = true;
  socket.cork();
  if (corkedLinks.push(link) === 1) process.nextTick(uncorkAll);
}

function uncorkAll(): void {
  // Taken in one go: an uncork may run code that corks again (a new turn's list).
  const links = corkedLinks.splice(0);
  for (const l of links) {
    l.corked = false;
    l.socket?.uncork();
  }
}
