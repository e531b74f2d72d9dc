/**
 * @parley/sdk/testing: a real Parley for a bot's own tests (issue #27). `startTestServer()` runs
 * the server package (`@parley/server`, an optional peer dependency: `npm install -D
 * @parley/server`) as a child process on a free port of 127.0.0.1, with SQLite in a fresh
 * temporary directory, and returns helpers that set up a guild with people and the bot and act as
 * those people. Nothing is mocked: the bot under test talks to the same server it will meet in
 * production.
 *
 * ```ts
 * const server = await startTestServer();
 * const { bot, people: [alice] } = await server.createGuild({ people: ['alice'] });
 * const stop = await runMyBot({ token: bot.token, url: server.url });
 * expect((await alice.ask('!ping')).content).toBe('pong');
 * await stop();
 * await server.stop();
 * ```
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { BotEventEnvelope, Message } from '@parley/protocol';
import { ParleyError } from './errors.js';
import { GatewayClient } from './gateway.js';
import type { OptionValue } from './interactions.js';
import { RestClient } from './rest.js';

export interface TestServerOptions {
  /** more PARLEY_* settings for the server (docs/deploy.md lists them) */
  env?: Record<string, string>;
  /** give up when the server is not ready within this long (default 60,000 ms) */
  startTimeoutMs?: number;
}

/** The bot made for a test: its token for `new Bot({ token, url })`. */
export interface TestBot {
  id: number;
  /** the bot's user id: the author id of its messages */
  userId: number;
  name: string;
  token: string;
  webhookSecret: string;
  /** D37/D38: send the bot's events to this address as webhooks (null: stop) */
  setWebhook(url: string | null): Promise<void>;
}

export interface WaitOptions {
  /** give up after this long (default 10,000 ms) */
  timeoutMs?: number;
  /** only messages after this id (default: after the person's last message) */
  after?: number;
  /** the channel to watch (default: the guild's channel) */
  channelId?: number;
}

/** A person in the test guild, acting through the public API with their own session. */
export interface TestPerson {
  id: number;
  name: string;
  /** their session token (people use `/api/v1` too, D10) */
  token: string;
  /** the person's REST client */
  rest: RestClient;
  /** Send a message in the guild's channel (or another); the sent message. */
  send(content: string, channelId?: number): Promise<Message>;
  /** Send a message that mentions the bot (`<@id> content`, D62). */
  mention(bot: TestBot, content: string, channelId?: number): Promise<Message>;
  /** Send a direct message to a user (the bot, say); the sent message. */
  dm(userId: number, content: string): Promise<Message>;
  /** The next message by `author` (default: the guild's bot) after the person's last one. */
  waitForMessage(author?: { userId: number }, opts?: WaitOptions): Promise<Message>;
  /** Send and wait for the bot's answer: `(await alice.ask('!ping')).content`. */
  ask(content: string, opts?: WaitOptions): Promise<Message>;
  /** D63: react to a message with one Unicode emoji (in the guild's channel unless it says). */
  react(message: Pick<Message, 'id' | 'channelId'> | number, emoji: string): Promise<void>;
  /**
   * D64: run a slash command as this person — `alice.command('roll', { sides: 20 })`, or a
   * sub-command as `'config set'` — and wait for the bot's answer: the reply (ephemeral ones
   * included: they come over the person's gateway session), once it is no longer "thinking…".
   */
  command(
    name: string,
    options?: Record<string, OptionValue>,
    opts?: InteractionWaitOptions,
  ): Promise<InteractionReply>;
  /**
   * D65: press a button (or choose a select's `values`) on a bot's message, and wait for the
   * answer: the updated message (callback 7, or an edit after 6) or a new reply (4).
   */
  press(
    message: Message,
    customId: string,
    opts?: InteractionWaitOptions & { values?: string[] },
  ): Promise<InteractionReply>;
  /** D64: ask the bot for choices while typing `focused`'s value; the choices it gave. */
  autocomplete(
    name: string,
    options: Record<string, OptionValue>,
    focused: string,
    opts?: { channelId?: number },
  ): Promise<Array<{ name: string; value: string | number }>>;
  /** Run a command without waiting; the interaction's id (202). */
  invoke(
    name: string,
    options?: Record<string, OptionValue>,
    opts?: { channelId?: number },
  ): Promise<{ id: number }>;
  /** Messages this person's gateway session has received (opened by the first interaction). */
  received: Message[];
}

export interface InteractionWaitOptions {
  /** the channel to run the command in (default: the guild's channel) */
  channelId?: number;
  /** give up after this long (default 10,000 ms) */
  timeoutMs?: number;
  /** also resolve on the "thinking…" message of a defer (flags 128), instead of waiting on */
  thinking?: boolean;
}

/** The bot's answer to an interaction, as its invoker sees it. */
export interface InteractionReply {
  /** the interaction's id */
  id: number;
  /** the answer: a reply, a follow-up, or the component's message as updated */
  message: Message;
  /** D65: only the invoker sees it (flags 1), and it is not in history */
  ephemeral: boolean;
}

export interface TestGuild {
  guildId: number;
  /** the guild's text channel (`general`) */
  channelId: number;
  bot: TestBot;
  people: TestPerson[];
  /** the people by name */
  person(name: string): TestPerson;
}

export interface TestServer {
  /** the server's origin, for `new Bot({ url })` */
  url: string;
  /** the operator token of this server (D41) */
  adminToken: string;
  /** A guild with these people (the first owns it) and a new bot in it. */
  createGuild(opts?: { name?: string; people?: string[]; bot?: string }): Promise<TestGuild>;
  /** A call to the operator API (`/admin/v1…`); the parsed answer. */
  admin<T = unknown>(method: string, route: string, body?: unknown): Promise<T>;
  /** Stop the server (and the people's gateway sessions) and delete its data. */
  stop(): Promise<void>;
}

/** The `parley` command of the installed @parley/server. */
function serverBin(): string {
  const require = createRequire(import.meta.url);
  let pkgFile: string;
  try {
    pkgFile = require.resolve('@parley/server/package.json');
  } catch {
    throw new ParleyError(
      'SERVER_NOT_INSTALLED',
      '@parley/sdk/testing runs a real Parley server: install it beside your tests with ' +
        '`npm install --save-dev @parley/server`',
      0,
    );
  }
  const pkg = JSON.parse(readFileSync(pkgFile, 'utf8')) as { bin?: { parley?: string } };
  return path.join(path.dirname(pkgFile), pkg.bin?.parley ?? 'bin/parley.js');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() =>
        addr && typeof addr === 'object' ? resolve(addr.port) : reject(new Error('no free port')),
      );
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Start a real Parley for a test (a child process; SQLite in a temporary directory). */
export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const bin = serverBin();
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-test-'));
  const adminToken = randomBytes(24).toString('base64url');
  const url = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith('PARLEY_')) env[k] = v;
  const child: ChildProcess = spawn(process.execPath, [bin, 'serve'], {
    env: {
      ...env,
      PARLEY_HOST: '127.0.0.1',
      PARLEY_PORT: String(port),
      PARLEY_DATA_DIR: dataDir,
      PARLEY_ADMIN_TOKEN: adminToken,
      PARLEY_LOG_LEVEL: 'warn',
      PARLEY_DRAIN_MS: '50',
      // a test's webhook receiver listens on loopback over http (D37's development flags)
      PARLEY_WEBHOOK_ALLOW_INSECURE: 'true',
      PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true',
      ...opts.env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let gone = false;
  void exited.then(() => (gone = true));

  const sessions: GatewayClient[] = [];
  const cleanup = async (): Promise<void> => {
    await Promise.all(sessions.splice(0).map((g) => g.close().catch(() => undefined)));
    if (!gone) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + (opts.startTimeoutMs ?? 60_000);
  for (;;) {
    if (gone) {
      await cleanup();
      throw new ParleyError(
        'SERVER_FAILED',
        `the test server exited while starting:\n${stderr}`,
        0,
      );
    }
    const ok = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) break;
    if (Date.now() > deadline) {
      await cleanup();
      throw new ParleyError('TIMEOUT', `the test server was not ready in time:\n${stderr}`, 0);
    }
    await sleep(100);
  }

  const admin = async <T>(method: string, route: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${url}/admin/v1${route}`, {
      method,
      headers: {
        authorization: `Bearer ${adminToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok)
      throw new ParleyError(
        'ADMIN_FAILED',
        `${method} /admin/v1${route} → ${res.status} ${text}`,
        res.status,
      );
    return (text === '' ? undefined : JSON.parse(text)) as T;
  };

  let guilds = 0;
  const createGuild: TestServer['createGuild'] = async (o = {}) => {
    guilds++;
    const names = o.people ?? ['alice'];
    if (names.length === 0) throw new TypeError('createGuild: at least one person (the owner)');
    const made: { id: number; name: string }[] = [];
    for (const name of names) made.push(await admin('POST', '/users', { name }));
    const guild = await admin<{ id: number }>('POST', '/guilds', {
      name: o.name ?? `Test guild ${guilds}`,
      ownerId: made[0]!.id,
    });
    const channel = await admin<{ id: number }>('POST', `/guilds/${guild.id}/channels`, {
      name: 'general',
    });
    for (const p of made.slice(1)) await admin('PUT', `/guilds/${guild.id}/members/${p.id}`, {});
    // D41: at most 3 bots per owner; each guild's bot belongs to that guild's owner.
    const b = await admin<{
      bot: { id: number; name: string; botUser: { id: number } };
      token: string;
      webhookSecret: string;
    }>('POST', '/bots', { ownerId: made[0]!.id, name: o.bot ?? `bot${guilds}` });
    await admin('PUT', `/guilds/${guild.id}/members/${b.bot.botUser.id}`, {});
    const bot: TestBot = {
      id: b.bot.id,
      userId: b.bot.botUser.id,
      name: b.bot.name,
      token: b.token,
      webhookSecret: b.webhookSecret,
      setWebhook: async (to) => {
        if (to === null) await admin('DELETE', `/bots/${b.bot.id}/webhook`);
        else await admin('PUT', `/bots/${b.bot.id}/webhook`, { url: to });
      },
    };
    const people: TestPerson[] = [];
    for (const p of made) {
      const { token } = await admin<{ token: string }>('POST', `/users/${p.id}/sessions`);
      people.push(makePerson(p, token, url, channel.id, bot, sessions));
    }
    return {
      guildId: guild.id,
      channelId: channel.id,
      bot,
      people,
      person: (name) => {
        const p = people.find((x) => x.name === name);
        if (!p) throw new TypeError(`no person named ${name} in this guild`);
        return p;
      },
    };
  };

  return { url, adminToken, createGuild, admin, stop: cleanup };
}

function makePerson(
  p: { id: number; name: string },
  token: string,
  url: string,
  channelId: number,
  bot: TestBot,
  sessions: GatewayClient[],
): TestPerson {
  const rest = new RestClient({ token, url });
  // The person's gateway session, opened before their first interaction: ephemeral answers
  // (D65) reach only it, never history.
  const received: Message[] = [];
  const watchers = new Set<(m: Message) => void>();
  let session: Promise<void> | undefined;
  const connect = (): Promise<void> =>
    (session ??= (async () => {
      const g = new GatewayClient({ token, url });
      g.on('event', (e: BotEventEnvelope) => {
        if (e.type !== 'MESSAGE_CREATE' && e.type !== 'MESSAGE_UPDATE') return;
        received.push(e.data);
        for (const w of [...watchers]) w(e.data);
      });
      sessions.push(g);
      await g.connect();
    })());
  /** The first message (already received or to come) that `match` accepts. */
  const waitFor = (
    match: (m: Message) => boolean,
    what: string,
    timeoutMs = 10_000,
    from = 0,
  ): Promise<Message> =>
    new Promise((resolve, reject) => {
      const seen = received.slice(from).find(match);
      if (seen) return resolve(seen);
      const timer = setTimeout(() => {
        watchers.delete(w);
        reject(
          new ParleyError('TIMEOUT', `${p.name} saw no ${what} within ${timeoutMs / 1000} s`, 0),
        );
      }, timeoutMs);
      const w = (m: Message): void => {
        if (!match(m)) return;
        clearTimeout(timer);
        watchers.delete(w);
        resolve(m);
      };
      watchers.add(w);
    });
  const LOADING = 128;
  const answer = async (
    id: number,
    o: InteractionWaitOptions,
    from: number,
    componentMessage?: number,
  ): Promise<InteractionReply> => {
    const m = await waitFor(
      (m) =>
        (m.interaction?.id === id ||
          (componentMessage !== undefined && m.id === componentMessage)) &&
        (o.thinking === true || ((m.flags ?? 0) & LOADING) === 0),
      `answer to interaction ${id}`,
      o.timeoutMs,
      from,
    );
    return { id, message: m, ephemeral: ((m.flags ?? 0) & 1) === 1 };
  };
  const commandBody = async (
    name: string,
    options: Record<string, OptionValue>,
    channel: number,
    focused?: string,
  ) => {
    const [top, sub] = name.trim().split(/\s+/);
    const { commands } = await rest.commands.inChannel(channel);
    const cmd = commands.find((c) => c.name === top);
    if (!cmd)
      throw new ParleyError(
        'UNKNOWN_COMMAND',
        `${p.name} may run no command /${top} in channel ${channel} (D64: GET /channels/${channel}/commands has ${commands.map((c) => c.name).join(', ') || 'none'})`,
        0,
      );
    const leaves = Object.entries(options).map(([k, value]) =>
      k === focused ? { name: k, value, focused: true } : { name: k, value },
    );
    return {
      channelId: channel,
      commandId: cmd.id,
      options: sub === undefined ? leaves : [{ name: sub, options: leaves }],
    };
  };
  let last: { id: number; channelId: number; dm: boolean } | undefined;
  const remember = (m: Message, dm: boolean): Message => {
    last = { id: m.id, channelId: m.channelId, dm };
    return m;
  };
  const person: TestPerson = {
    id: p.id,
    name: p.name,
    token,
    rest,
    send: async (content, channel = channelId) =>
      remember((await rest.messages.send(channel, content))[0]!, false),
    mention: (b, content, channel) => person.send(`<@${b.userId}> ${content}`, channel),
    dm: async (userId, content) => {
      const { channelId: dmId } = await rest.dms.open(userId);
      return remember((await rest.dms.send(dmId, content))[0]!, true);
    },
    waitForMessage: async (author = bot, o = {}) => {
      const dm = o.channelId === undefined && last?.dm === true;
      const channel = o.channelId ?? last?.channelId ?? channelId;
      const after = o.after ?? last?.id ?? 0;
      const deadline = Date.now() + (o.timeoutMs ?? 10_000);
      for (;;) {
        const page = dm
          ? await rest.dms.list(channel, { after, limit: 100 })
          : await rest.messages.list(channel, { after, limit: 100 });
        // D16: an `after` page holds the messages right after the cursor, newest first.
        const found = [...page.messages].reverse().find((m) => m.author.id === author.userId);
        if (found) return found;
        if (Date.now() > deadline)
          throw new ParleyError(
            'TIMEOUT',
            `${p.name} saw no message from user ${author.userId} in channel ${channel} after ` +
              `message ${after} within ${(o.timeoutMs ?? 10_000) / 1000} s`,
            0,
          );
        await sleep(100);
      }
    },
    ask: async (content, o = {}) => {
      await person.send(content, o.channelId);
      return person.waitForMessage(bot, o);
    },
    react: async (m, emoji) => {
      const [id, channel] = typeof m === 'number' ? [m, channelId] : [m.id, m.channelId];
      await rest.messages.react(channel, id, emoji);
    },
    invoke: async (name, options = {}, o = {}) =>
      rest.interactions.invoke({
        type: 2,
        ...(await commandBody(name, options, o.channelId ?? channelId)),
      }),
    command: async (name, options = {}, o = {}) => {
      await connect();
      const from = received.length;
      const { id } = await person.invoke(name, options, o);
      return answer(id, o, from);
    },
    press: async (message, customId, o = {}) => {
      await connect();
      const from = received.length;
      const { id } = await rest.interactions.invoke({
        type: 3,
        messageId: message.id,
        customId,
        ...(o.values ? { values: o.values } : {}),
      });
      return answer(id, o, from, message.id);
    },
    autocomplete: async (name, options, focused, o = {}) => {
      const r = await rest.interactions.invoke({
        type: 4,
        ...(await commandBody(name, options, o.channelId ?? channelId, focused)),
      });
      return r.choices ?? [];
    },
    received,
  };
  return person;
}
