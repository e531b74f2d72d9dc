import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { nowMs } from './stats.js';

/**
 * Local webhook receivers (node:http on loopback): a healthy one answering 200 at once, a
 * stalled one that reads the request and never answers (a dead bot backend), a failing one
 * answering 500 at once, or a slow one answering 200 after `slowMs` (a backend under strain).
 */
export type ReceiverKind = 'healthy' | 'stalled' | 'failing' | 'slow';

export interface Delivery {
  readonly deliveryId: string;
  readonly content: string;
  /** the envelope's `type` and `data.id` (a message's id for message events; 0 if none) */
  readonly type: string;
  readonly id: number;
  readonly at: number;
}

export class WebhookReceiver {
  readonly deliveries: Delivery[] = [];
  /** requests seen (a stalled receiver counts them too) */
  requests = 0;
  url = '';
  private readonly server: http.Server;

  private constructor(
    private readonly kind: ReceiverKind,
    private readonly slowMs: number,
  ) {
    this.server = http.createServer((req, res) => this.handle(req, res));
    // Parley keeps connections to receivers alive; so does a real receiver.
    this.server.keepAliveTimeout = 30_000;
  }

  static async start(kind: ReceiverKind, slowMs = 3000): Promise<WebhookReceiver> {
    const r = new WebhookReceiver(kind, slowMs);
    await new Promise<void>((resolve) => r.server.listen(0, '127.0.0.1', resolve));
    r.url = `http://127.0.0.1:${(r.server.address() as AddressInfo).port}/hook`;
    return r;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = nowMs();
      this.requests += 1;
      if (this.kind === 'stalled') return; // never answer: the sender's timeout must fire
      if (this.kind === 'failing') {
        res.writeHead(500, { 'content-type': 'text/plain' }).end('failing on purpose');
        return;
      }
      let content = '';
      let type = '';
      let id = 0;
      try {
        const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          type?: unknown;
          data?: { content?: unknown; id?: unknown };
        };
        if (typeof envelope.data?.content === 'string') content = envelope.data.content;
        if (typeof envelope.type === 'string') type = envelope.type;
        if (typeof envelope.data?.id === 'number') id = envelope.data.id;
      } catch {
        // not an envelope: counted as a request, not as a delivery
      }
      const dId = req.headers['x-service-delivery'];
      this.deliveries.push({
        deliveryId: Array.isArray(dId) ? (dId[0] ?? '') : (dId ?? ''),
        content,
        type,
        id,
        at,
      });
      if (this.kind === 'slow') {
        const timer = setTimeout(
          () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'),
          this.slowMs,
        );
        res.once('close', () => clearTimeout(timer));
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
      }
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
