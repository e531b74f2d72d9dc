import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { pngOfSize } from '../../packages/server/test/helpers/media.js';
import { nowMs, Samples } from '../lib/stats.js';

/**
 * Hostile clients for the soak (issue 10): `sockets` raw TCP connections kept open all the time,
 * each doing one of three things the server must cut (D54: a request whose headers and body have
 * not fully arrived within PARLEY_REQUEST_TIMEOUT_MS → 408 and the connection closes):
 *
 * - slowloris: a request line and headers dribbled one byte at a time, never finished;
 * - a stalled upload: an authenticated multipart upload that sends its part head and the start
 *   of a PNG, a little more a moment later, then nothing (Content-Length promises 1 MB);
 * - a stalled send: an authenticated JSON message send whose body stops half-way.
 *
 * When the server closes one, the slot opens the next (until `stop()`), so the server faces
 * `sockets` of them for the whole run. Each socket's hold time runs from its first byte to its
 * close; the status line the server answered with (if any) is counted.
 */
export interface HostileOptions {
  readonly origin: string;
  readonly sockets: number;
  /** bot or person tokens for the authenticated stalls (round-robin) */
  readonly tokens: readonly string[];
  readonly channelIds: readonly number[];
  /** one header byte per this many ms (slowloris) */
  readonly dribbleMs: number;
}

type Kind = 'slowloris' | 'stalled-upload' | 'stalled-send';
const KINDS: readonly Kind[] = ['slowloris', 'stalled-upload', 'stalled-send'];

export class HostileLoad {
  /** hold times (ms) of sockets the server closed */
  readonly held = new Samples(4096);
  /** the longest hold per kind, ms */
  readonly maxHeldByKind = new Map<Kind, number>();
  /** every closed socket: kind, when it connected (nowMs) and how long it was held */
  readonly holds: Array<{ kind: Kind; at: number; ms: number }> = [];
  opened = 0;
  closedByServer = 0;
  /** first status line per close, e.g. `HTTP/1.1 408 Request Timeout` → count */
  readonly answers = new Map<string, number>();
  readonly byKind = new Map<Kind, number>();
  private running = false;
  private readonly live = new Set<{ sock: Socket; startedAt: number; timers: NodeJS.Timeout[] }>();
  private next = 0;
  private readonly url: URL;

  constructor(private readonly o: HostileOptions) {
    this.url = new URL(o.origin);
  }

  start(): void {
    this.running = true;
    // Opened over a second, not all in one turn.
    for (let i = 0; i < this.o.sockets; i++)
      setTimeout(() => this.open(KINDS[i % KINDS.length] as Kind), (i * 1000) / this.o.sockets);
  }

  /** The oldest socket still open, in ms (0 when none). */
  oldestOpenMs(): number {
    const now = nowMs();
    let oldest = 0;
    for (const l of this.live) oldest = Math.max(oldest, now - l.startedAt);
    return oldest;
  }

  get openNow(): number {
    return this.live.size;
  }

  /** Stops opening sockets and drops every open one; returns the age of the oldest dropped. */
  stop(): number {
    this.running = false;
    const oldest = this.oldestOpenMs();
    for (const l of this.live) {
      for (const t of l.timers) clearTimeout(t);
      l.sock.destroy();
    }
    this.live.clear();
    return oldest;
  }

  private open(kind: Kind): void {
    if (!this.running) return;
    const sock = connect(Number(this.url.port), this.url.hostname);
    const entry = { sock, startedAt: nowMs(), timers: [] as NodeJS.Timeout[] };
    this.live.add(entry);
    this.opened += 1;
    this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + 1);
    let answer = '';
    sock.setNoDelay(true);
    sock.on('data', (c: Buffer) => {
      if (answer.length < 64) answer += c.toString('latin1');
    });
    sock.on('error', () => {});
    sock.once('connect', () => {
      entry.startedAt = nowMs();
      this.script(kind, sock, entry.timers);
    });
    sock.once('close', () => {
      for (const t of entry.timers) clearTimeout(t);
      if (!this.live.delete(entry)) return; // dropped by stop()
      this.closedByServer += 1;
      const ms = nowMs() - entry.startedAt;
      this.held.push(ms);
      this.holds.push({ kind, at: entry.startedAt, ms });
      this.maxHeldByKind.set(kind, Math.max(ms, this.maxHeldByKind.get(kind) ?? 0));
      const status = answer.split('\r\n')[0] || '(closed without an answer)';
      this.answers.set(status, (this.answers.get(status) ?? 0) + 1);
      // The next one of the same kind, a moment later (never a tight reconnect loop).
      const t = setTimeout(() => this.open(kind), 100);
      t.unref();
    });
  }

  private script(kind: Kind, sock: Socket, timers: NodeJS.Timeout[]): void {
    const host = `Host: ${this.url.host}\r\n`;
    const token = this.o.tokens[this.next++ % this.o.tokens.length] ?? '';
    const channelId = this.o.channelIds[this.next % this.o.channelIds.length] ?? 0;
    const later = (ms: number, fn: () => void): void => {
      const t = setTimeout(() => {
        if (!sock.destroyed) fn();
      }, ms);
      timers.push(t);
    };
    if (kind === 'slowloris') {
      sock.write(`GET /api/v1/bot/me HTTP/1.1\r\n${host}`);
      const header = 'X-Slow: ' + 'a'.repeat(10_000);
      let i = 0;
      const drip = (): void => {
        sock.write(header[i++ % header.length] as string);
        timers.length = 0;
        later(this.o.dribbleMs, drip);
      };
      later(this.o.dribbleMs, drip);
    } else if (kind === 'stalled-upload') {
      const boundary = `----soak${randomBytes(8).toString('hex')}`;
      sock.write(
        `POST /api/v1/files/upload HTTP/1.1\r\n${host}Authorization: Bearer ${token}\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 1000000\r\n\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="stall.png"\r\n` +
          `Content-Type: image/png\r\n\r\n`,
      );
      const png = pngOfSize(12_000);
      sock.write(png.subarray(0, 8000));
      later(1500, () => sock.write(png.subarray(8000)));
    } else {
      const body = JSON.stringify({ content: 'this send never finishes '.repeat(4) });
      sock.write(
        `POST /api/v1/channels/${channelId}/messages HTTP/1.1\r\n${host}Authorization: Bearer ${token}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n` +
          body.slice(0, 20),
      );
    }
  }
}
