import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { nowMs } from './stats.js';

/**
 * Local webhook receivers (node:http on loopback): a healthy one answering 200 at once, or a
 * stalled one that reads the request and never answers (a dead bot backend).
 */
export interface Delivery {
  readonly deliveryId: string;
  readonly content: string;
  readonly at: number;
}

export class WebhookReceiver {
  readonly deliveries: Delivery[] = [];
  /** requests seen (a stalled receiver counts them too) */
  requests = 0;
  url = '';
  private readonly server: http.Server;

  private constructor(private readonly kind: 'healthy' | 'stalled') {
    this.server = http.createServer((req, res) => this.handle(req, res));
    // Parley keeps connections to receivers alive; so does a real receiver.
    this.server.keepAliveTimeout = 30_000;
  }

  static async start(kind: 'healthy' | 'stalled'): Promise<WebhookReceiver> {
    const r = new WebhookReceiver(kind);
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
      let content = '';
      try {
        const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          data?: { content?: unknown };
        };
        if (typeof envelope.data?.content === 'string') content = envelope.data.content;
      } catch {
        // not an envelope: counted as a request, not as a delivery
      }
      const id = req.headers['x-service-delivery'];
      this.deliveries.push({
        deliveryId: Array.isArray(id) ? (id[0] ?? '') : (id ?? ''),
        content,
        at,
      });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
