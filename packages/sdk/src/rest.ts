import type {
  AllowedMentions,
  Bot,
  Channel,
  ChannelCommands,
  Command,
  CommandDeclaration,
  EmbedInput,
  InvokeBody,
  MemberUser,
  SubscribableEventType,
  ChannelList,
  DmChannelRef,
  EditedMessage,
  Member,
  MemberList,
  MemberSummary,
  Message,
  MessageList,
  UploadedFile,
  UploadQuota,
} from '@parley/protocol';
import { Bucket } from './bucket.js';
import { originOf, tell, type DebugListener } from './debug.js';
import { errorFromBody, ParleyError } from './errors.js';
import { embedsJSON, type EmbedBuilder } from './embed.js';
import { splitContent } from './split.js';
import { toUploadBlob, msgTypeOf, type UploadSource, type UploadOptions } from './upload.js';

/** D15: 0 text; 1 image, 2 audio, 3 video (content is then an uploaded file's URL). */
export type MsgType = 0 | 1 | 2 | 3;

export interface RestOptions {
  /** the bot token (D8) */
  token: string;
  /** the server's public origin, e.g. `https://chat.example.org` (D1); default `http://127.0.0.1:8080` */
  url?: string | undefined;
  /** retries of idempotent calls after a network error or a 5xx (default 3) */
  maxRetries?: number;
  /** retries after a 429 RATE_LIMIT_EXCEEDED (default 10): a refused request changed nothing (D26) */
  maxRateLimitRetries?: number;
  /** a `fetch` to use instead of the global one */
  fetch?: typeof fetch;
  /** called when the server answered 429 despite the queues (another program shares the token) */
  onRateLimited?: (info: { bucket: string; retryAfter: number; route: string }) => void;
  /** give up on an answer after this long (default 15,000 ms); a call safe to repeat is retried */
  timeoutMs?: number;
  /** hears each request, each wait for a rate limit (see {@link DebugEvent}) */
  debug?: DebugListener | undefined;
  /**
   * D61: the default `allowedMentions` of every send. Unset (as discord.js's default), the
   * server's own default applies: every mention written notifies, the replied-to author too.
   */
  allowedMentions?: AllowedMentions;
}

export interface PageOptions {
  /** D16: messages with id < before (a position: need not name a message) */
  before?: number;
  /** D16: messages with id > after (`0`: from the very first message) */
  after?: number;
  /** 1–100 (default 50) */
  limit?: number;
}

export interface SendOptions {
  /** may be empty (or left out) when the message has attachments or embeds (D61) */
  content?: string;
  msgType?: MsgType;
  /** D61: answer this message (same channel) — a real reply, shown with the original */
  reply?: number | { id: number };
  /** D61: which mentions notify; default RestOptions.allowedMentions, else the server's */
  allowedMentions?: AllowedMentions;
  /** D61: 1–10 URLs of uploads to this platform (needs ATTACH_FILES) */
  attachments?: string[];
  /** D61: a bot's embeds (≤ 10, ≤ 6,000 characters of text together) */
  embeds?: Array<EmbedBuilder | EmbedInput>;
  /** D71: no link previews for this message */
  suppressEmbeds?: boolean;
}

/** D63: who reacted with one emoji, by ascending id. */
export interface ReactionUsers {
  users: MemberUser[];
  hasMore: boolean;
}

export interface HistoryOptions {
  /** newest first, older and older (the default when neither is given) */
  before?: number;
  /** oldest first, newer and newer, from the message after `after` (0: from the first) */
  after?: number;
  /** page size, 1–100 (default 100) */
  pageSize?: number;
}

export interface MemberPageOptions {
  after?: number;
  limit?: number;
}

type Query = Record<string, number | string | undefined>;

interface Call {
  /** a route template, `/channels/:channelId/messages`, used as the rate-limit key */
  route: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  params?: Record<string, number | string>;
  query?: Query;
  body?: unknown;
  form?: () => Promise<FormData>;
  /** may be sent again after a network error or 5xx (the call has the same effect once or twice) */
  idempotent: boolean;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** D25: message sends draw from `messages`, everything else from `global` (until the server says). */
const guessBucket = (method: string, route: string): string =>
  method === 'POST' && /\/messages$/.test(route) ? 'messages' : 'global';

/**
 * Every `/api/v1` route as a method. Requests wait in one queue per rate-limit bucket
 * (D25, D26) instead of running into 429; a 429 that happens anyway (another program using the
 * same token) is waited out and retried. Network errors and 5xx answers are retried only for
 * calls that are safe to repeat (GET, PUT, DELETE, and opening a DM, D21); a send or an upload is
 * never sent twice. Failures throw {@link ParleyError}.
 */
export class RestClient {
  readonly baseUrl: string;
  private readonly token: string;
  private readonly fetch: typeof fetch;
  private readonly maxRetries: number;
  private readonly maxRateLimitRetries: number;
  private readonly onRateLimited: RestOptions['onRateLimited'];
  private readonly timeoutMs: number;
  private readonly debug: DebugListener | undefined;
  /** the server's origin (`http://host:port`), as given without `/api/v1` */
  readonly origin: string;
  private readonly allowedMentions: AllowedMentions | undefined;
  private readonly buckets = new Map<string, Bucket>();
  private readonly routeBucket = new Map<string, string>();

  constructor(opts: RestOptions) {
    if (!opts.token) throw new TypeError('RestClient: a bot token is required');
    this.token = opts.token;
    // A URL ending in /api/v1 (or not a URL) is refused here, saying what to pass instead.
    this.origin = originOf(opts.url, 'RestClient');
    this.baseUrl = `${this.origin}/api/v1`;
    this.timeoutMs = opts.timeoutMs ?? 15_000;
    this.debug = opts.debug;
    this.fetch = opts.fetch ?? globalThis.fetch.bind(globalThis);
    this.maxRetries = opts.maxRetries ?? 3;
    this.maxRateLimitRetries = opts.maxRateLimitRetries ?? 10;
    this.onRateLimited = opts.onRateLimited;
    this.allowedMentions = opts.allowedMentions;
  }

  readonly bot = {
    /** GET /bot/me: the bot (and a cheap token check, docs/interface.md#authentication) */
    me: (): Promise<Bot> => this.request({ route: '/bot/me', method: 'GET', idempotent: true }),
    /**
     * PATCH /bot/me (D63): receive these types beyond D34's eight — reactions, pins, link
     * previews, people's events — on the gateway and the webhook alike (`[]`: the eight only).
     */
    subscribe: (events: readonly SubscribableEventType[]): Promise<Bot> =>
      this.request({
        route: '/bot/me',
        method: 'PATCH',
        body: { events },
        idempotent: true,
      }),
  };

  readonly messages = {
    /**
     * POST /channels/:channelId/messages. Content over 2,000 code points is split at line or
     * word boundaries (D14) and sent as several messages, in order; every part is returned.
     */
    send: (channelId: number, message: string | SendOptions): Promise<Message[]> =>
      this.sendAll('/channels/:channelId/messages', channelId, message),
    /** Upload a file (path, Buffer, Blob or stream) and send it with the matching msgType (D15). */
    sendFile: (
      channelId: number,
      source: UploadSource,
      opts: UploadOptions = {},
    ): Promise<{ file: UploadedFile; message: Message }> =>
      this.sendFile('/channels/:channelId/messages', channelId, source, opts),
    /** GET /channels/:channelId/messages: one page, newest first (D16) */
    list: (channelId: number, page: PageOptions = {}): Promise<MessageList> =>
      this.listPage('/channels/:channelId/messages', channelId, page),
    /** Every message, page by page (D16): newest first with `before`, oldest first with `after`. */
    history: (channelId: number, opts: HistoryOptions = {}): AsyncIterableIterator<Message> =>
      this.history('/channels/:channelId/messages', channelId, opts),
    /** PUT /channels/:channelId/messages/:messageId (only the bot's own, D13; embeds D61) */
    edit: (
      channelId: number,
      messageId: number,
      content: string,
      opts: { embeds?: Array<EmbedBuilder | EmbedInput> } = {},
    ): Promise<EditedMessage> =>
      this.request({
        route: '/channels/:channelId/messages/:messageId',
        method: 'PUT',
        params: { channelId, messageId },
        body: opts.embeds ? { content, embeds: embedsJSON(opts.embeds) } : { content },
        idempotent: true,
      }),
    ...this.rich('/channels/:channelId'),
    /** DELETE /channels/:channelId/messages/:messageId (only the bot's own, D13) */
    delete: (channelId: number, messageId: number): Promise<void> =>
      this.request({
        route: '/channels/:channelId/messages/:messageId',
        method: 'DELETE',
        params: { channelId, messageId },
        idempotent: true,
      }),
  };

  readonly channels = {
    /** GET /guilds/:guildId/channels (D19: only those the bot can view) */
    list: async (guildId: number): Promise<ChannelList['channels']> =>
      (
        await this.request<ChannelList>({
          route: '/guilds/:guildId/channels',
          method: 'GET',
          params: { guildId },
          idempotent: true,
        })
      ).channels,
    /** GET /channels/:channelId (with topic, D19) */
    get: (channelId: number): Promise<Channel> =>
      this.request({
        route: '/channels/:channelId',
        method: 'GET',
        params: { channelId },
        idempotent: true,
      }),
  };

  readonly members = {
    /** GET /guilds/:guildId/members: one page, by user id ascending (D20) */
    list: (guildId: number, page: MemberPageOptions = {}): Promise<MemberList> =>
      this.request({
        route: '/guilds/:guildId/members',
        method: 'GET',
        params: { guildId },
        query: { after: page.after, limit: page.limit },
        idempotent: true,
      }),
    /** Every member, page by page (D20). */
    all: (guildId: number, pageSize = 1000): AsyncIterableIterator<MemberSummary> =>
      this.allMembers(guildId, pageSize),
    /** GET /guilds/:guildId/members/:userId (with roles, D20) */
    get: (guildId: number, userId: number): Promise<Member> =>
      this.request({
        route: '/guilds/:guildId/members/:userId',
        method: 'GET',
        params: { guildId, userId },
        idempotent: true,
      }),
  };

  readonly dms = {
    /** POST /users/:userId/dm: the DM channel with a user, created once (idempotent, D21) */
    open: (userId: number): Promise<DmChannelRef> =>
      this.request({
        route: '/users/:userId/dm',
        method: 'POST',
        params: { userId },
        idempotent: true,
      }),
    send: (channelId: number, message: string | SendOptions): Promise<Message[]> =>
      this.sendAll('/dm/channels/:channelId/messages', channelId, message),
    sendFile: (
      channelId: number,
      source: UploadSource,
      opts: UploadOptions = {},
    ): Promise<{ file: UploadedFile; message: Message }> =>
      this.sendFile('/dm/channels/:channelId/messages', channelId, source, opts),
    list: (channelId: number, page: PageOptions = {}): Promise<MessageList> =>
      this.listPage('/dm/channels/:channelId/messages', channelId, page),
    history: (channelId: number, opts: HistoryOptions = {}): AsyncIterableIterator<Message> =>
      this.history('/dm/channels/:channelId/messages', channelId, opts),
    edit: (
      channelId: number,
      messageId: number,
      content: string,
      opts: { embeds?: Array<EmbedBuilder | EmbedInput> } = {},
    ): Promise<EditedMessage> =>
      this.request({
        route: '/dm/channels/:channelId/messages/:messageId',
        method: 'PUT',
        params: { channelId, messageId },
        body: opts.embeds ? { content, embeds: embedsJSON(opts.embeds) } : { content },
        idempotent: true,
      }),
    ...this.rich('/dm/channels/:channelId'),
    delete: (channelId: number, messageId: number): Promise<void> =>
      this.request({
        route: '/dm/channels/:channelId/messages/:messageId',
        method: 'DELETE',
        params: { channelId, messageId },
        idempotent: true,
      }),
  };

  /**
   * D64: the bot's application commands. `set` replaces the whole list (global, or one guild's
   * with `guildId`): a command that keeps its name keeps its id.
   */
  readonly commands = {
    /** PUT /applications/@me/commands or /guilds/:guildId/commands: the whole list, with ids */
    set: (
      commands: readonly CommandDeclaration[],
      opts: { guildId?: number } = {},
    ): Promise<Command[]> =>
      opts.guildId === undefined
        ? this.request({
            route: '/applications/@me/commands',
            method: 'PUT',
            body: commands,
            idempotent: true,
          })
        : this.request({
            route: '/guilds/:guildId/commands',
            method: 'PUT',
            params: { guildId: opts.guildId },
            body: commands,
            idempotent: true,
          }),
    /** GET the global list, or one guild's */
    list: (opts: { guildId?: number } = {}): Promise<Command[]> =>
      opts.guildId === undefined
        ? this.request({ route: '/applications/@me/commands', method: 'GET', idempotent: true })
        : this.request({
            route: '/guilds/:guildId/commands',
            method: 'GET',
            params: { guildId: opts.guildId },
            idempotent: true,
          }),
    /** DELETE one command (global, or of the guild given) */
    delete: (commandId: number, opts: { guildId?: number } = {}): Promise<void> =>
      opts.guildId === undefined
        ? this.request({
            route: '/applications/@me/commands/:commandId',
            method: 'DELETE',
            params: { commandId },
            idempotent: true,
          })
        : this.request({
            route: '/guilds/:guildId/commands/:commandId',
            method: 'DELETE',
            params: { guildId: opts.guildId, commandId },
            idempotent: true,
          }),
    /** GET /channels/:channelId/commands (a person's token): what the caller may run there */
    inChannel: (channelId: number): Promise<ChannelCommands> =>
      this.request({
        route: '/channels/:channelId/commands',
        method: 'GET',
        params: { channelId },
        idempotent: true,
      }),
  };

  /**
   * D64–D65, as a person (a session token): run a command, use a component, or ask for
   * autocomplete choices. → `{id}` (202), or `{id, choices}` for autocomplete (type 4).
   */
  readonly interactions = {
    invoke: (
      body: InvokeBody,
    ): Promise<{ id: number; choices?: Array<{ name: string; value: string | number }> }> =>
      this.request({ route: '/interactions', method: 'POST', body, idempotent: false }),
  };

  readonly files = {
    /** POST /files/upload (multipart field `file`, D22): from a path, a Buffer, a Blob or a stream */
    upload: (source: UploadSource, opts: UploadOptions = {}): Promise<UploadedFile> =>
      this.upload(source, opts),
    /** GET /files/quota (D24) */
    quota: (): Promise<UploadQuota> =>
      this.request({ route: '/files/quota', method: 'GET', idempotent: true }),
  };

  /**
   * Reply to a message in the channel it came from (guild or DM: D17, DM messages carry no
   * guildId). Given the message itself (with its `id`), it is a real reply (D61:
   * `messageReference`, shown with the original; its author is notified unless
   * `allowedMentions.repliedUser` is false); given only a channel, a plain message.
   */
  reply(
    to: Pick<Message, 'channelId' | 'guildId'> & { id?: number },
    message: string | SendOptions,
  ): Promise<Message[]> {
    const opts = typeof message === 'string' ? { content: message } : message;
    const withRef =
      to.id === undefined || opts.reply !== undefined ? opts : { ...opts, reply: to.id };
    return to.guildId === undefined
      ? this.dms.send(to.channelId, withRef)
      : this.messages.send(to.channelId, withRef);
  }

  /** D63: reactions and pins of one kind of channel (guild or DM). */
  private rich(prefix: string) {
    const at = (channelId: number, messageId: number, emoji: string) => ({
      params: { channelId, messageId, emoji },
      idempotent: true,
    });
    return {
      /** PUT …/reactions/:emoji/@me: react with one Unicode emoji (D63) */
      react: (channelId: number, messageId: number, emoji: string): Promise<void> =>
        this.request({
          route: `${prefix}/messages/:messageId/reactions/:emoji/@me`,
          method: 'PUT',
          ...at(channelId, messageId, emoji),
        }),
      /** DELETE …/reactions/:emoji/@me: take the bot's own reaction back */
      unreact: (channelId: number, messageId: number, emoji: string): Promise<void> =>
        this.request({
          route: `${prefix}/messages/:messageId/reactions/:emoji/@me`,
          method: 'DELETE',
          ...at(channelId, messageId, emoji),
        }),
      /** DELETE …/reactions/:emoji/:userId: someone's reaction (MANAGE_MESSAGES) */
      removeReaction: (
        channelId: number,
        messageId: number,
        emoji: string,
        userId: number,
      ): Promise<void> =>
        this.request({
          route: `${prefix}/messages/:messageId/reactions/:emoji/:userId`,
          method: 'DELETE',
          params: { channelId, messageId, emoji, userId },
          idempotent: true,
        }),
      /** GET …/reactions/:emoji: who reacted, by ascending id */
      reactions: (
        channelId: number,
        messageId: number,
        emoji: string,
        page: { after?: number; limit?: number } = {},
      ): Promise<ReactionUsers> =>
        this.request({
          route: `${prefix}/messages/:messageId/reactions/:emoji`,
          method: 'GET',
          query: { after: page.after, limit: page.limit },
          ...at(channelId, messageId, emoji),
        }),
      /** PUT …/pins/:messageId (MANAGE_MESSAGES in a guild; ≤ 50 a channel) */
      pin: (channelId: number, messageId: number): Promise<void> =>
        this.request({
          route: `${prefix}/pins/:messageId`,
          method: 'PUT',
          params: { channelId, messageId },
          idempotent: true,
        }),
      unpin: (channelId: number, messageId: number): Promise<void> =>
        this.request({
          route: `${prefix}/pins/:messageId`,
          method: 'DELETE',
          params: { channelId, messageId },
          idempotent: true,
        }),
      /** GET …/pins: the pinned messages, newest pin first */
      pins: async (channelId: number): Promise<Message[]> =>
        (
          await this.request<{ messages: Message[] }>({
            route: `${prefix}/pins`,
            method: 'GET',
            params: { channelId },
            idempotent: true,
          })
        ).messages,
    };
  }

  private async sendAll(
    route: string,
    channelId: number,
    message: string | SendOptions,
  ): Promise<Message[]> {
    const o: SendOptions = typeof message === 'string' ? { content: message } : message;
    const content = o.content ?? '';
    const msgType = o.msgType;
    const parts =
      msgType === undefined || msgType === 0
        ? content === ''
          ? ['']
          : splitContent(content)
        : [content];
    const allowedMentions = o.allowedMentions ?? this.allowedMentions;
    const extra: Record<string, unknown> = {};
    if (o.reply !== undefined)
      extra['messageReference'] = { messageId: typeof o.reply === 'number' ? o.reply : o.reply.id };
    if (allowedMentions !== undefined) extra['allowedMentions'] = allowedMentions;
    if (o.suppressEmbeds) extra['suppressEmbeds'] = true;
    const sent: Message[] = [];
    // One after the other: each part is answered before the next goes, so they arrive in order.
    // A split message: the first part is the reply, the last carries the attachments and embeds.
    for (const [i, part] of parts.entries()) {
      const body: Record<string, unknown> = { content: part };
      if (msgType !== undefined) body['msgType'] = msgType;
      if (i === 0) Object.assign(body, extra);
      else if (allowedMentions !== undefined) body['allowedMentions'] = allowedMentions;
      if (i === parts.length - 1) {
        if (o.attachments?.length) body['attachments'] = o.attachments;
        if (o.embeds?.length) body['embeds'] = embedsJSON(o.embeds);
      }
      sent.push(
        await this.request<Message>({
          route,
          method: 'POST',
          params: { channelId },
          body,
          idempotent: false,
        }),
      );
    }
    return sent;
  }

  private async sendFile(
    route: string,
    channelId: number,
    source: UploadSource,
    opts: UploadOptions,
  ): Promise<{ file: UploadedFile; message: Message }> {
    const file = await this.upload(source, opts);
    const [message] = await this.sendAll(route, channelId, {
      content: file.url,
      msgType: msgTypeOf(file.filename),
    });
    return { file, message: message! };
  }

  private listPage(route: string, channelId: number, page: PageOptions): Promise<MessageList> {
    return this.request({
      route,
      method: 'GET',
      params: { channelId },
      query: { before: page.before, after: page.after, limit: page.limit },
      idempotent: true,
    });
  }

  private async *history(
    route: string,
    channelId: number,
    opts: HistoryOptions,
  ): AsyncIterableIterator<Message> {
    const limit = opts.pageSize ?? 100;
    if (opts.after !== undefined && opts.before === undefined) {
      // D16: `after` pages hold the messages right after the cursor, listed newest first.
      let after = opts.after;
      for (;;) {
        const page = await this.listPage(route, channelId, { after, limit });
        const ascending = [...page.messages].reverse();
        yield* ascending;
        const last = ascending[ascending.length - 1];
        if (!page.hasMore || last === undefined) return;
        after = last.id;
      }
    }
    let before = opts.before;
    for (;;) {
      const page = await this.listPage(route, channelId, {
        ...(before === undefined ? {} : { before }),
        ...(opts.after === undefined ? {} : { after: opts.after }),
        limit,
      });
      yield* page.messages;
      const last = page.messages[page.messages.length - 1];
      if (!page.hasMore || last === undefined) return;
      before = last.id;
    }
  }

  private async *allMembers(guildId: number, limit: number): AsyncIterableIterator<MemberSummary> {
    let after: number | undefined;
    for (;;) {
      const page = await this.members.list(guildId, {
        ...(after === undefined ? {} : { after }),
        limit,
      });
      yield* page.members;
      const last = page.members[page.members.length - 1];
      if (!page.hasMore || last === undefined) return;
      after = last.user.id;
    }
  }

  private async upload(source: UploadSource, opts: UploadOptions): Promise<UploadedFile> {
    const { blob, filename } = await toUploadBlob(source, opts);
    return this.request({
      route: '/files/upload',
      method: 'POST',
      form: async () => {
        const form = new FormData();
        form.append('file', blob, filename);
        return form;
      },
      idempotent: false,
    });
  }

  private describeFailure(key: string, err: unknown): ParleyError {
    return failureOf(key, this.origin, this.timeoutMs, err);
  }

  private bucketFor(key: string, name: string): Bucket {
    let b = this.buckets.get(name);
    if (!b) this.buckets.set(name, (b = new Bucket(name)));
    this.routeBucket.set(key, name);
    return b;
  }

  /** One call, with its queue, retries and error mapping. */
  async request<T>(call: Call): Promise<T> {
    const key = `${call.method} ${call.route}`;
    let path = call.route.replace(/:(\w+)/g, (_, name: string) => {
      const v = call.params?.[name];
      if (v === undefined) throw new TypeError(`${key}: missing ${name}`);
      return encodeURIComponent(String(v));
    });
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(call.query ?? {})) if (v !== undefined) q.set(k, String(v));
    if (q.size > 0) path += `?${q.toString()}`;
    const url = this.baseUrl + path;

    let failures = 0;
    let limited = 0;
    for (;;) {
      const bucket = this.bucketFor(
        key,
        this.routeBucket.get(key) ?? guessBucket(call.method, call.route),
      );
      await bucket.acquire((waitMs) =>
        tell(this.debug, {
          type: 'rateLimitWait',
          bucket: bucket.name,
          route: key,
          waitMs,
          reason: 'queue',
        }),
      );
      const attempt = failures + limited + 1;
      const started = Date.now();
      let res: Response;
      try {
        const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
        let body: string | FormData | undefined;
        if (call.form) body = await call.form();
        else if (call.body !== undefined) {
          headers['content-type'] = 'application/json';
          body = JSON.stringify(call.body);
        }
        res = await this.fetch(url, {
          method: call.method,
          headers,
          ...(body === undefined ? {} : { body }),
          signal: AbortSignal.timeout(this.timeoutMs),
        });
      } catch (err) {
        bucket.release();
        const failure = this.describeFailure(key, err);
        tell(this.debug, {
          type: 'request',
          method: call.method,
          route: call.route,
          url,
          status: 0,
          ms: Date.now() - started,
          attempt,
          error: failure.message,
        });
        if (call.idempotent && failures < this.maxRetries) {
          await sleep(backoff(failures++));
          continue;
        }
        throw failure;
      }
      tell(this.debug, {
        type: 'request',
        method: call.method,
        route: call.route,
        url,
        status: res.status,
        ms: Date.now() - started,
        attempt,
      });
      const named = res.headers.get('x-ratelimit-bucket');
      const target = named && named !== bucket.name ? this.bucketFor(key, named) : bucket;
      target.update(res.headers);
      bucket.release();

      if (res.status === 204) return undefined as T;
      const text = await res.text().catch(() => '');
      let body: unknown;
      let json = text !== '';
      try {
        body = json ? JSON.parse(text) : undefined;
      } catch {
        json = false;
      }
      // Parley answers JSON on every /api/v1 route; a page of HTML (or nothing) with a 2xx or
      // 4xx means the url is not a Parley server. 5xx are left to the retries below: a proxy's
      // error page while the server restarts is not a wrong address.
      if (res.status < 500 && !json)
        throw new ParleyError(
          'NOT_PARLEY',
          `${key}: ${this.origin} answered HTTP ${res.status} ` +
            `(${res.headers.get('content-type') ?? 'no content type'}), not a Parley API answer — ` +
            `is url the Parley server's origin?`,
          res.status,
        );
      if (res.ok) return body as T;
      const err = errorFromBody(res.status, body, res.headers);
      if (
        res.status === 429 &&
        err.code === 'RATE_LIMIT_EXCEEDED' &&
        limited < this.maxRateLimitRetries
      ) {
        // D26: a refused request consumed nothing and changed nothing: wait and send it again.
        const wait = err.retryAfter ?? 1;
        limited++;
        target.exhausted(wait);
        tell(this.debug, {
          type: 'rateLimitWait',
          bucket: target.name,
          route: key,
          waitMs: Math.round(wait * 1000),
          reason: '429',
        });
        this.onRateLimited?.({ bucket: target.name, retryAfter: wait, route: key });
        continue;
      }
      if (res.status >= 500 && call.idempotent && failures < this.maxRetries) {
        await sleep(backoff(failures++));
        continue;
      }
      throw err;
    }
  }
}

/** What went wrong when no answer came, in words a bot author can act on. */
function failureOf(key: string, origin: string, timeoutMs: number, err: unknown): ParleyError {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError')
    return new ParleyError(
      'TIMEOUT',
      `${key}: no answer from ${origin} within ${timeoutMs / 1000} s (timeoutMs)`,
      0,
      { cause: err },
    );
  const code = e?.cause?.code;
  const why =
    code === 'ECONNREFUSED'
      ? `connection refused by ${origin} — is Parley running there?`
      : code === 'ENOTFOUND' || code === 'EAI_AGAIN'
        ? `${new URL(origin).hostname} was not found (DNS) — is the url right?`
        : code === 'ECONNRESET'
          ? `${origin} closed the connection`
          : `${origin}: ${e?.cause?.message ?? e?.message ?? String(err)}`;
  return new ParleyError('NETWORK_ERROR', `${key}: ${why}`, 0, { cause: err });
}

/** 0.5 s, 1 s, 2 s, … (capped at 8 s), with jitter. */
const backoff = (n: number): number => Math.min(8000, 500 * 2 ** n) * (0.75 + Math.random() / 2);
