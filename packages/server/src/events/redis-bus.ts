import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { isSignal, type Signal, type SignalBus } from './bus.js';

const CHANNEL = 'parley:signals';

/**
 * Several nodes: signals over Redis pub/sub. A bot connected to node B hears about an event
 * committed on node A within a Redis round trip. Each process tags its messages and ignores its
 * own (it already acted on them directly). The publishing connection opens on first use, so
 * the CLI only connects when it has something to say (e.g. a token reset).
 */
export class RedisBus implements SignalBus {
  private readonly origin = randomBytes(8).toString('hex');
  private readonly pub: Redis;
  private sub: Redis | undefined;
  /**
   * ioredis's `keyPrefix` (it may come in the URL's query) does not apply to pub/sub channels;
   * it is applied here by hand so deployments (and test runs) sharing a Redis stay apart.
   */
  private readonly channel: string;

  constructor(
    private readonly url: string,
    private readonly onError: (err: unknown) => void,
  ) {
    this.pub = this.client();
    this.channel = (this.pub.options.keyPrefix ?? '') + CHANNEL;
  }

  private client(): Redis {
    const r = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 2 });
    // ioredis reconnects on its own; the periodic database checks cover the gap meanwhile.
    r.on('error', () => {});
    return r;
  }

  publish(signal: Signal): void {
    this.pub
      .publish(this.channel, JSON.stringify({ o: this.origin, s: signal }))
      .catch(this.onError);
  }

  async subscribe(handler: (signal: Signal) => void): Promise<void> {
    const sub = this.client();
    this.sub = sub;
    sub.on('message', (_channel: string, text: string) => {
      let msg: unknown;
      try {
        msg = JSON.parse(text);
      } catch {
        return;
      }
      const m = msg as { o?: unknown; s?: unknown };
      if (m.o === this.origin || !isSignal(m.s)) return;
      handler(m.s);
    });
    await sub.subscribe(this.channel);
  }

  async close(): Promise<void> {
    for (const r of [this.pub, this.sub]) {
      if (!r) continue;
      if (r.status === 'ready') await r.quit().catch(() => r.disconnect());
      else r.disconnect();
    }
  }
}
