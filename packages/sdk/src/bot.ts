import type {
  Bot as BotRecord,
  EventDataMap,
  EventEnvelope,
  EventType,
  Message,
  ReadyData,
} from '@parley/protocol';
import { Emitter } from './emitter.js';
import { GatewayClient, type GatewayOptions } from './gateway.js';
import { RestClient, type RestOptions, type SendOptions } from './rest.js';
import { webhookHandler, type WebhookHandler, type WebhookHandlerOptions } from './webhook.js';

export interface BotOptions
  extends Omit<RestOptions, 'url'>, Omit<GatewayOptions, 'url' | 'token'> {
  /** the server's public origin (D1); default `http://127.0.0.1:8080` */
  url?: string | undefined;
  /** skip the bot's own messages (D34 delivers them too); default true */
  ignoreSelf?: boolean;
}

type BotEvents = {
  [K in EventType]: (data: EventDataMap[K], bot: Bot) => unknown;
};

class BotEmitter extends Emitter<BotEvents> {
  fire(event: EventEnvelope, bot: Bot): Promise<boolean>[] {
    // The envelope pairs type and data; TypeScript cannot follow that through the spread.
    const args = [event.data, bot] as unknown as Parameters<BotEvents[EventType]>;
    return this.emitAll(event.type, ...args);
  }
}

const MESSAGE_EVENTS = new Set<EventType>([
  'MESSAGE_CREATE',
  'MESSAGE_UPDATE',
  'DM_MESSAGE_CREATE',
  'DM_MESSAGE_UPDATE',
]);

/**
 * A bot in a few lines:
 *
 * ```ts
 * new Bot({ token }).on('MESSAGE_CREATE', (m, bot) => bot.reply(m, 'hi')).start();
 * ```
 *
 * Events come from the gateway after `start()`, or from webhooks through `webhookHandler()`
 * (the same handlers either way). `rest` is the full {@link RestClient}.
 */
export class Bot {
  readonly rest: RestClient;
  readonly gateway: GatewayClient;
  /** the bot record, once known (after `start()`, or the first webhook) */
  me: BotRecord | undefined;
  private readonly handlers = new BotEmitter();
  private readonly ignoreSelf: boolean;

  constructor(opts: BotOptions) {
    this.rest = new RestClient(opts);
    this.gateway = new GatewayClient(opts);
    this.ignoreSelf = opts.ignoreSelf ?? true;
    this.gateway.on('ready', (r: ReadyData) => {
      this.me = r.bot;
    });
    this.gateway.on('event', (e) => this.dispatch(e));
  }

  on<K extends EventType>(type: K, handler: BotEvents[K]): this {
    this.handlers.on(type, handler);
    return this;
  }

  /** Connect to the gateway; resolves once the session is READY. */
  async start(): Promise<this> {
    await this.gateway.connect();
    return this;
  }

  /** End the gateway session (close 1000). */
  stop(): Promise<void> {
    return this.gateway.close();
  }

  /** Answer in the channel (guild or DM) the message came from; long content is split (D14). */
  reply(
    to: Pick<Message, 'channelId' | 'guildId'>,
    content: string | SendOptions,
  ): Promise<Message[]> {
    return this.rest.reply(to, content);
  }

  /** Receive events by webhook instead (D38): a handler for node:http, Express or Fastify. */
  webhookHandler(opts: WebhookHandlerOptions): WebhookHandler {
    const handler = webhookHandler(opts);
    handler.on('event', async (e) => {
      this.me ??= await this.rest.bot.me();
      await Promise.all(this.dispatch(e));
    });
    return handler;
  }

  private dispatch(e: EventEnvelope): Promise<boolean>[] {
    if (
      this.ignoreSelf &&
      MESSAGE_EVENTS.has(e.type) &&
      this.me !== undefined &&
      (e.data as Message).author.id === this.me.botUser.id
    )
      return [];
    return this.handlers.fire(e, this);
  }
}
