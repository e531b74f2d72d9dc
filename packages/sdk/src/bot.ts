import type {
  SubscribableEventType,
  Bot as BotRecord,
  BotEventDataMap,
  BotEventEnvelope,
  BotEventType,
  Command,
  Interaction,
  Message,
  ReadyData,
} from '@parley/protocol';
import { Emitter } from './emitter.js';
import { GatewayClient, type GatewayOptions } from './gateway.js';
import {
  declaration,
  InteractionContext,
  type CommandOptions,
  type CommandSpec,
  type OptionValue,
} from './interactions.js';
import { RestClient, type RestOptions, type SendOptions } from './rest.js';
import {
  RESPOND_IN_BODY,
  webhookHandler,
  type RespondInBody,
  type WebhookHandler,
  type WebhookHandlerOptions,
} from './webhook.js';

/** A command handler's interaction: options typed from the command's declaration (D64). */
export type CommandInteraction<C extends CommandSpec | string = string> = InteractionContext<
  C extends CommandSpec ? CommandOptions<C> : Record<string, OptionValue>
>;
/** A component handler's interaction: `customId`, `values`, `message` (D65). */
export type ComponentInteraction = InteractionContext;
/** An autocomplete handler's interaction: `focused`, and `autocomplete(choices)` (D64). */
export type AutocompleteInteraction<C extends CommandSpec | string = string> =
  CommandInteraction<C>;

type InteractionHandler = (i: InteractionContext<never>, bot: Bot) => unknown;

export interface BotOptions
  extends Omit<RestOptions, 'url'>, Omit<GatewayOptions, 'url' | 'token'> {
  /** the server's public origin (D1); default `http://127.0.0.1:8080` */
  url?: string | undefined;
  /** skip the bot's own messages (D34 delivers them too); default true */
  ignoreSelf?: boolean;
  /**
   * D63: event types beyond D34's eight to receive (gateway and webhook alike), set with
   * PATCH /bot/me when `start()` runs. Unset: the subscription is left as it is.
   */
  events?: readonly SubscribableEventType[];
}

/** What a message handed to a handler can do (methods, not data: JSON and equality unchanged). */
export interface MessageActions {
  /** D61: a real reply to this message (its author is notified unless allowedMentions says no) */
  reply(content: string | SendOptions): Promise<Message[]>;
  /** D63: react with one Unicode emoji */
  react(emoji: string): Promise<void>;
  unreact(emoji: string): Promise<void>;
  /** D63: pin (MANAGE_MESSAGES in a guild) */
  pin(): Promise<void>;
  unpin(): Promise<void>;
}
export type BotMessage = Message & MessageActions;

type HandlerData<K extends BotEventType> = BotEventDataMap[K] extends Message
  ? BotMessage
  : BotEventDataMap[K];

type BotEvents = {
  [K in BotEventType]: (data: HandlerData<K>, bot: Bot) => unknown;
};

class BotEmitter extends Emitter<BotEvents> {
  fire(event: BotEventEnvelope, bot: Bot): Promise<boolean>[] {
    // The envelope pairs type and data; TypeScript cannot follow that through the spread.
    const args = [event.data, bot] as unknown as Parameters<BotEvents[BotEventType]>;
    return this.emitAll(event.type, ...args);
  }
}

const MESSAGE_EVENTS = new Set<BotEventType>([
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
  private readonly commandHandlers = new Map<string, InteractionHandler>();
  private readonly componentHandlers = new Map<string, InteractionHandler>();
  private readonly autocompleteHandlers = new Map<string, InteractionHandler>();

  /**
   * D64: the bot's commands. `set` replaces the whole list — global, or one guild's with
   * `{ guildId }` (a guild's list applies at once; use it while developing) — and answers it
   * with ids; a command that keeps its name keeps its id.
   */
  readonly commands = {
    set: (commands: readonly CommandSpec[], opts: { guildId?: number } = {}): Promise<Command[]> =>
      this.rest.commands.set(commands.map(declaration), opts),
    list: (opts: { guildId?: number } = {}): Promise<Command[]> => this.rest.commands.list(opts),
    delete: (commandId: number, opts: { guildId?: number } = {}): Promise<void> =>
      this.rest.commands.delete(commandId, opts),
  };
  private readonly ignoreSelf: boolean;
  private readonly events: readonly SubscribableEventType[] | undefined;

  constructor(opts: BotOptions) {
    this.rest = new RestClient(opts);
    this.events = opts.events;
    this.gateway = new GatewayClient(opts);
    this.ignoreSelf = opts.ignoreSelf ?? true;
    this.gateway.on('ready', (r: ReadyData) => {
      this.me = r.bot;
    });
    this.gateway.on('event', (e) => this.dispatch(e));
  }

  on<K extends BotEventType>(type: K, handler: BotEvents[K]): this {
    this.handlers.on(type, handler);
    return this;
  }

  /**
   * Handle a slash command (D64) by name, or by its declaration (from `defineCommand`), which
   * types `i.options`. The handler answers with `i.reply`, `i.defer` then `i.editReply` /
   * `i.followUp`, within 15 minutes (D65). Gateway and webhook bots alike.
   */
  command<const C extends CommandSpec>(
    command: C,
    handler: (i: CommandInteraction<C>, bot: Bot) => unknown,
  ): this;
  command(
    name: string,
    handler: (i: InteractionContext<Record<string, OptionValue>>, bot: Bot) => unknown,
  ): this;
  command(command: string | CommandSpec, handler: InteractionHandler): this {
    this.commandHandlers.set(typeof command === 'string' ? command : command.name, handler);
    return this;
  }

  /**
   * Handle buttons and selects (D65) whose customId starts with `prefix` (the longest matching
   * prefix wins): `bot.component('roll:', (i) => i.update(...))` serves `roll:6`, `roll:20`.
   */
  component(prefix: string, handler: (i: ComponentInteraction, bot: Bot) => unknown): this {
    this.componentHandlers.set(prefix, handler);
    return this;
  }

  /**
   * Suggest values for a command's option declared with `autocomplete` (D64): the handler reads
   * `i.focused` and answers `i.autocomplete([{ name, value }])` (the server waits 3 s).
   */
  autocomplete<const C extends CommandSpec>(
    command: C | string,
    handler: (i: AutocompleteInteraction<C>, bot: Bot) => unknown,
  ): this {
    this.autocompleteHandlers.set(typeof command === 'string' ? command : command.name, handler);
    return this;
  }

  /** Connect to the gateway; resolves once the session is READY. */
  async start(): Promise<this> {
    if (this.events !== undefined) this.me = await this.rest.bot.subscribe(this.events);
    await this.gateway.connect();
    return this;
  }

  /** End the gateway session (close 1000). */
  stop(): Promise<void> {
    return this.gateway.close();
  }

  /**
   * Answer a message: a real reply (D61) when given the message, in its channel (guild or DM);
   * long content is split (D14), the first part being the reply.
   */
  reply(
    to: Pick<Message, 'channelId' | 'guildId'> & { id?: number },
    content: string | SendOptions,
  ): Promise<Message[]> {
    return this.rest.reply(to, content);
  }

  /** The message with its actions (reply, react, pin), as handlers receive it. */
  withActions(m: Message): BotMessage {
    const ops = m.guildId === undefined ? this.rest.dms : this.rest.messages;
    const actions: MessageActions = {
      reply: (content) => this.rest.reply(m, content),
      react: (emoji) => ops.react(m.channelId, m.id, emoji),
      unreact: (emoji) => ops.unreact(m.channelId, m.id, emoji),
      pin: () => ops.pin(m.channelId, m.id),
      unpin: () => ops.unpin(m.channelId, m.id),
    };
    for (const [name, fn] of Object.entries(actions))
      Object.defineProperty(m, name, { value: fn, enumerable: false, configurable: true });
    return m as BotMessage;
  }

  /** Receive events by webhook instead (D38): a handler for node:http, Express or Fastify. */
  webhookHandler(opts: WebhookHandlerOptions): WebhookHandler {
    const handler = webhookHandler(opts);
    handler.on('event', async (e) => {
      this.me ??= await this.rest.bot.me();
      const ok = await Promise.all(this.dispatch(e));
      // D39: a handler that failed makes the delivery fail (500), as webhookHandler's own
      // listeners do, so the server delivers the event again and a passing failure loses
      // nothing; a handler must therefore be safe to run twice (webhooks are at least once).
      // D65: an interaction whose handler failed before answering comes again too, and the
      // one-callback rule (409) keeps a second run from answering twice.
      if (ok.includes(false))
        throw new Error(
          e.type === 'INTERACTION_CREATE'
            ? `the handler of interaction ${e.data.id} failed`
            : `a handler of ${e.type} failed`,
        );
    });
    return handler;
  }

  private dispatch(e: BotEventEnvelope): Promise<boolean>[] {
    if (
      this.ignoreSelf &&
      MESSAGE_EVENTS.has(e.type) &&
      this.me !== undefined &&
      (e.data as Message).author.id === this.me.botUser.id
    )
      return [];
    if (MESSAGE_EVENTS.has(e.type)) this.withActions(e.data as Message);
    const fired = this.handlers.fire(e, this);
    if (e.type === 'INTERACTION_CREATE') fired.push(this.interact(e));
    return fired;
  }

  /** The handler an interaction goes to: by command name, or the longest customId prefix. */
  private handlerFor(i: Interaction): InteractionHandler | undefined {
    const d = i.data;
    if ('customId' in d) {
      let best: string | undefined;
      for (const prefix of this.componentHandlers.keys())
        if (d.customId.startsWith(prefix) && (best === undefined || prefix.length > best.length))
          best = prefix;
      return best === undefined ? undefined : this.componentHandlers.get(best);
    }
    return (i.type === 4 ? this.autocompleteHandlers : this.commandHandlers).get(d.name);
  }

  private async interact(e: BotEventEnvelope): Promise<boolean> {
    const i = e.data as Interaction;
    const handler = this.handlerFor(i);
    if (!handler) return true;
    this.me ??= await this.rest.bot.me();
    const ctx = new InteractionContext(i, { url: this.rest.origin, botId: this.me.id });
    // D65: a webhook delivery may carry the answer back in its response (bot.webhookHandler).
    ctx.respond = (e as unknown as { [RESPOND_IN_BODY]?: RespondInBody })[RESPOND_IN_BODY];
    try {
      await handler(ctx as InteractionContext<never>, this);
      return true;
    } catch (err) {
      console.error(`[parley] the handler of interaction ${i.id} failed:`, err);
      return false;
    }
  }
}
