import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { isSignal, type Signal, type SignalBus } from './bus.js';

const CHANNEL = 'parley:signals';

/**
 * ioredis (45 modules) is imported on first use rather than at start: this file is part of every
 * server, but only a node with PARLEY_REDIS_URL ever constructs a RedisBus (issue #6: a
 * single-node server should not carry Redis client code in memory).
 */
let ioredis: Promise<{ Redis: typeof Redis }> | undefined;
const loadIoredis = (): Promise<{ Redis: typeof Redis }> => (ioredis ??= import('ioredis'));

/**
 * Several nodes: signals over Redis pub/sub. A bot connected to node B hears about an event
 * committed on node A within a Redis round trip. Each process tags its messages and ignores its
 * own (it already acted on them directly). The publishing connection opens on first use, so
 * the CLI only connects when it has something to say (e.g. a token reset).
 */
export class RedisBus implements SignalBus {
  private readonly origin = randomBytes(8).toString('hex');
  /** the publishing client with the channel name, created on first use (see loadIoredis) */
  private pub: Promise<{ client: Redis; channel: string }> | undefined;
  private sub: Redis | undefined;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly onError: (err: unknown) => void,
  ) {}

  private async client(): Promise<Redis> {
    const { Redis } = await loadIoredis();
    const r = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 2 });
    // ioredis reconnects on its own; the periodic database checks cover the gap meanwhile.
    r.on('error', () => {});
    return r;
  }

  /**
   * ioredis's `keyPrefix` (it may come in the URL's query) does not apply to pub/sub channels;
   * it is applied here by hand so deployments (and test runs) sharing a Redis stay apart.
   */
  private publisher(): Promise<{ client: Redis; channel: string }> {
    this.pub ??= this.client().then((client) => ({
      client,
      channel: (client.options.keyPrefix ?? '') + CHANNEL,
    }));
    return this.pub;
  }

  publish(signal: Signal): void {
    if (this.closed) return;
    // Signals keep their order: every publish chains on the same promise, and ioredis queues
    // commands in the order they are given.
    this.publisher()
      .then(({ client, channel }) =>
        client.publish(channel, JSON.stringify({ o: this.origin, s: signal })),
      )
      .catch(this.onError);
  }

  async subscribe(handler: (signal: Signal) => void): Promise<void> {
    const { channel } = await this.publisher();
    const sub = await this.client();
    // close() may have run while ioredis was loading: do not leave a connection behind it.
    if (this.closed) return;
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
    await sub.subscribe(channel);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const pub = this.pub ? (await this.pub).client : undefined;
    for (const r of [pub, this.sub]) {
      if (!r) continue;
      if (r.status === 'ready') await r.quit().catch(() => r.disconnect());
      else r.disconnect();
    }
  }
}
