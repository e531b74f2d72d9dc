import {
  createServer,
  type IncomingHttpHeaders,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real local webhook receiver (the "far edge" of docs/architecture.md#habit-5 is an outside HTTP server: here it
 * is a node:http server on loopback). Each request is recorded with its exact body bytes; the
 * answer is programmable per request.
 */
export interface Received {
  headers: IncomingHttpHeaders;
  body: Buffer;
  at: number;
  path: string;
}

export type Answer = (res: ServerResponse, req: Received) => void;

export const ok: Answer = (res) => {
  res.writeHead(200).end('ok');
};
export const status =
  (code: number, headers: Record<string, string> = {}): Answer =>
  (res) => {
    res.writeHead(code, headers).end();
  };
/** never answers (the connection stays open until the server is closed) */
export const hang: Answer = () => {};

export class Receiver {
  readonly received: Received[] = [];
  private readonly script: Answer[] = [];
  private fallback: Answer = ok;
  private waiters: Array<{ n: number; resolve: () => void }> = [];
  private server: Server;
  port = 0;
  /** requests received and not yet answered or dropped, now and at most */
  open = 0;
  maxOpen = 0;

  constructor() {
    this.server = createServer((req, res) => {
      this.open += 1;
      this.maxOpen = Math.max(this.maxOpen, this.open);
      res.on('close', () => {
        this.open -= 1;
      });
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const r: Received = {
          headers: req.headers,
          body: Buffer.concat(chunks),
          at: Date.now(),
          path: req.url ?? '/',
        };
        this.received.push(r);
        (this.script.shift() ?? this.fallback)(res, r);
        this.waiters = this.waiters.filter((w) => {
          if (this.received.length >= w.n) w.resolve();
          return this.received.length < w.n;
        });
      });
    });
  }

  /** answers for the next requests, in order; then `always` */
  answer(...answers: Answer[]): this {
    this.script.push(...answers);
    return this;
  }

  always(a: Answer): this {
    this.fallback = a;
    return this;
  }

  async listen(port = 0): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** resolves once `n` requests in all have arrived (bounded by `ms`) */
  async waitFor(n: number, ms = 10_000): Promise<Received[]> {
    if (this.received.length < n) {
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(
          () =>
            reject(new Error(`receiver got ${this.received.length} of ${n} requests in ${ms} ms`)),
          ms,
        );
        this.waiters.push({
          n,
          resolve: () => {
            clearTimeout(t);
            resolve();
          },
        });
      });
    }
    return this.received;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
