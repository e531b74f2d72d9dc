import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

/**
 * A bare WebSocket client (RFC 6455, loopback `ws://` only) for benchmarks that hold thousands of
 * receiving connections, built so that the machine's CPU goes to the server being measured:
 *
 * - it reads with `onread` into one buffer shared by every socket of the process (no buffer per
 *   read), walks frame headers and skips payloads, looking only at a payload's first bytes
 *   (`onText` gets at most PEEK_BYTES of it);
 * - with `batchMs`, a socket reads only when `drain` or `drainAll` is called (its owner does so
 *   about every `batchMs`): between drains the kernel keeps what arrives, so one read takes many frames and
 *   no process wake-up happens per frame. The server's work per frame is the same whether its
 *   peer reads at once or a few hundred milliseconds later (a client on another machine);
 * - it heartbeats (D30), answers WebSocket pings (the server cuts peers that do not) and counts
 *   text frames.
 */
export interface LightOptions {
  url: string;
  headers: Record<string, string>;
  heartbeatMs: number;
  /** read only on drainAll (see above); 0 or absent: read as data arrives */
  batchMs?: number;
  /** a text frame's first bytes (up to `peekBytes`) */
  onText?: (peek: Buffer) => void;
  /** how much of a text frame's payload onText sees (PEEK_BYTES unless given) */
  peekBytes?: number;
  onClose?: () => void;
}

/** How much of a text frame's payload onText sees by default. */
export const PEEK_BYTES = 32;

const READ_BUFFER = Buffer.allocUnsafe(256 * 1024);
const lazySockets = new Set<LightSocket>();

export class LightSocket {
  texts = 0;
  closed = false;
  private sock!: Socket;
  /** the upgrade answer so far (until its blank line) */
  private head: Buffer | undefined = Buffer.alloc(0);
  /** bytes of a frame header or peek cut by the end of a read */
  private carry: Buffer | undefined;
  /** payload bytes still to skip */
  private skip = 0;
  private timer: NodeJS.Timeout | undefined;
  private opened: ((ok: boolean, err?: Error) => void) | undefined;

  private constructor(private readonly o: LightOptions) {}

  static open(o: LightOptions): Promise<LightSocket> {
    const u = new URL(o.url);
    const ls = new LightSocket(o);
    return new Promise((resolve, reject) => {
      ls.opened = (ok, err) => {
        ls.opened = undefined;
        if (ok) resolve(ls);
        else reject(err ?? new Error('connection failed'));
      };
      const sock = connect({
        port: Number(u.port),
        host: u.hostname,
        onread: {
          buffer: READ_BUFFER,
          callback: (n: number, buf: Uint8Array) => ls.onRead(buf.subarray(0, n) as Buffer),
        },
      });
      ls.sock = sock;
      sock.setNoDelay(true);
      sock.on('close', () => ls.onClosed());
      sock.on('error', (err) => ls.opened?.(false, err));
      const key = randomBytes(16).toString('base64');
      const lines = [
        `GET ${u.pathname}${u.search} HTTP/1.1`,
        `Host: ${u.host}`,
        'Upgrade: websocket',
        'Connection: Upgrade',
        `Sec-WebSocket-Key: ${key}`,
        'Sec-WebSocket-Version: 13',
        ...Object.entries(o.headers).map(([k, v]) => `${k}: ${v}`),
      ];
      sock.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
  }

  /** Let every batched socket of the process read what the kernel holds for it (once each). */
  static drainAll(): void {
    for (const s of lazySockets) s.sock.resume();
  }

  /** Let this (batched) socket read what the kernel holds for it, once. */
  drain(): void {
    if (!this.closed && !this.head) this.sock.resume();
  }

  /** false: stop reading until the next drainAll (batched sockets, after each read) */
  private onRead(chunk: Buffer): boolean {
    if (this.head) {
      const head = Buffer.concat([this.head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        this.head = head;
        return true;
      }
      this.head = undefined;
      const status = head.subarray(0, head.indexOf('\r\n')).toString();
      if (!status.includes(' 101 ')) {
        this.sock.destroy();
        this.opened?.(false, new Error(`upgrade refused: ${status}`));
        return false;
      }
      this.startHeartbeat();
      this.opened?.(true);
      this.frames(Buffer.from(head.subarray(end + 4)));
      if (this.o.batchMs) {
        lazySockets.add(this);
        return false;
      }
      return true;
    }
    this.frames(chunk);
    return !this.o.batchMs;
  }

  /** Walk the frames of `chunk` (only valid during the call: the read buffer is shared). */
  private frames(input: Buffer): void {
    let b = input;
    if (this.skip > 0) {
      const k = Math.min(this.skip, b.length);
      this.skip -= k;
      b = b.subarray(k);
    }
    if (this.carry) {
      b = Buffer.concat([this.carry, b]);
      this.carry = undefined;
    }
    let off = 0;
    while (off < b.length) {
      if (b.length - off < 2) break;
      const opcode = (b[off] as number) & 0x0f;
      let len = (b[off + 1] as number) & 0x7f;
      let h = 2;
      if (len === 126) {
        if (b.length - off < 4) break;
        len = b.readUInt16BE(off + 2);
        h = 4;
      } else if (len === 127) {
        if (b.length - off < 10) break;
        len = Number(b.readBigUInt64BE(off + 2));
        h = 10;
      }
      // Control frames are read whole (≤ 125 bytes); a text frame's first bytes are peeked.
      const need = opcode >= 0x8 ? len : Math.min(len, this.o.peekBytes ?? PEEK_BYTES);
      if (b.length - off - h < need) break;
      const at = off + h;
      if (opcode === 0x1) {
        this.texts++;
        this.o.onText?.(b.subarray(at, at + need));
      } else if (opcode === 0x9) {
        this.control(0xa, Buffer.from(b.subarray(at, at + len))); // pong
      } else if (opcode === 0x8) {
        this.sock.end();
      }
      const inChunk = Math.min(len, b.length - at);
      this.skip = len - inChunk;
      off = at + inChunk;
    }
    if (off < b.length) this.carry = Buffer.from(b.subarray(off));
  }

  private startHeartbeat(): void {
    this.timer = setTimeout(() => {
      this.sendText('{"op":1,"d":null}');
      this.timer = setInterval(() => this.sendText('{"op":1,"d":null}'), this.o.heartbeatMs);
      this.timer.unref();
    }, Math.random() * this.o.heartbeatMs);
    this.timer.unref();
  }

  sendText(text: string): void {
    this.control(0x1, Buffer.from(text));
  }

  /** A masked client frame (RFC 6455 §5.3); payloads here are under 126 bytes. */
  private control(opcode: number, payload: Buffer): void {
    if (this.closed) return;
    const mask = randomBytes(4);
    const frame = Buffer.alloc(6 + payload.length);
    frame[0] = 0x80 | opcode;
    frame[1] = 0x80 | payload.length;
    mask.copy(frame, 2);
    for (let i = 0; i < payload.length; i++)
      frame[6 + i] = (payload[i] as number) ^ (mask[i & 3] as number);
    this.sock.write(frame);
  }

  private onClosed(): void {
    lazySockets.delete(this);
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.timer);
    if (this.opened) this.opened(false, new Error('closed before the upgrade'));
    else this.o.onClose?.();
  }

  close(): void {
    clearTimeout(this.timer);
    clearInterval(this.timer);
    this.sock.destroy();
  }
}
