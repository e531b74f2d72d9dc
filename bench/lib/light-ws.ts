import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

/**
 * A bare WebSocket client (RFC 6455, loopback `ws://` only) for benchmarks that hold thousands of
 * receiving connections: it reads frame headers and skips payloads, so counting 200,000 frames a
 * second costs the client far less than full decoding would, and the machine's CPU goes to the
 * server being measured. It heartbeats (D30), answers WebSocket pings (the server cuts peers that
 * do not) and counts text frames; `onText` (optional) gets a frame's payload when wanted.
 */
export interface LightOptions {
  url: string;
  headers: Record<string, string>;
  heartbeatMs: number;
  onText?: (payload: Buffer) => void;
  onClose?: () => void;
}

export class LightSocket {
  texts = 0;
  closed = false;
  private buf: Buffer = Buffer.alloc(0);
  private timer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly sock: Socket,
    private readonly o: LightOptions,
  ) {}

  static open(o: LightOptions): Promise<LightSocket> {
    const u = new URL(o.url);
    return new Promise((resolve, reject) => {
      const sock = connect(Number(u.port), u.hostname);
      sock.setNoDelay(true);
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
      let head = Buffer.alloc(0);
      const onData = (chunk: Buffer): void => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        sock.off('data', onData);
        const status = head.subarray(0, head.indexOf('\r\n')).toString();
        if (!status.includes(' 101 ')) {
          sock.destroy();
          reject(new Error(`upgrade refused: ${status}`));
          return;
        }
        const ls = new LightSocket(sock, o);
        sock.on('data', (c: Buffer) => ls.onData(c));
        sock.on('close', () => ls.onClosed());
        ls.onData(head.subarray(end + 4));
        ls.startHeartbeat();
        resolve(ls);
      };
      sock.on('data', onData);
      sock.once('error', (err) => {
        if (!sock.readable) reject(err);
      });
      sock.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
  }

  private startHeartbeat(): void {
    this.timer = setTimeout(() => {
      this.sendText('{"op":1,"d":null}');
      this.timer = setInterval(() => this.sendText('{"op":1,"d":null}'), this.o.heartbeatMs);
      this.timer.unref();
    }, Math.random() * this.o.heartbeatMs);
    this.timer.unref();
  }

  private onData(chunk: Buffer): void {
    let b = this.buf.length > 0 ? Buffer.concat([this.buf, chunk]) : chunk;
    for (;;) {
      if (b.length < 2) break;
      const opcode = (b[0] as number) & 0x0f;
      let len = (b[1] as number) & 0x7f;
      let off = 2;
      if (len === 126) {
        if (b.length < 4) break;
        len = b.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (b.length < 10) break;
        len = Number(b.readBigUInt64BE(2));
        off = 10;
      }
      if (b.length < off + len) break;
      if (opcode === 0x1) {
        this.texts++;
        this.o.onText?.(b.subarray(off, off + len));
      } else if (opcode === 0x9) {
        this.control(0xa, b.subarray(off, off + len)); // pong
      } else if (opcode === 0x8) {
        this.sock.end();
      }
      b = b.subarray(off + len);
    }
    this.buf = b.length > 0 ? Buffer.from(b) : Buffer.alloc(0);
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
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.timer);
    this.o.onClose?.();
  }

  close(): void {
    clearTimeout(this.timer);
    clearInterval(this.timer);
    this.sock.destroy();
  }
}
