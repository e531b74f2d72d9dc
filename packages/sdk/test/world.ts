import {
  callOk,
  freePort,
  startParley,
  stopParley,
  tempDir,
  type Running,
} from '../../server/test/helpers/process.js';

/**
 * A real Parley server process for the SDK's end-to-end tests, on a fixed port so it can be
 * restarted at the same address (the gateway client must find it again), with people, a guild,
 * a channel and bots made through the operator API (D41).
 */
export const ADMIN = 'sdk-e2e-admin-token-0123456789abcdef';

export interface TestServer {
  origin: string;
  port: number;
  running: Running;
  env: Record<string, string>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startServer(extra: Record<string, string> = {}): Promise<TestServer> {
  const data = tempDir('parley-sdk-');
  const port = await freePort();
  const env = {
    PARLEY_HOST: '127.0.0.1',
    PARLEY_PORT: String(port),
    PARLEY_DATA_DIR: data.path,
    PARLEY_ADMIN_TOKEN: ADMIN,
    PARLEY_LOG_LEVEL: 'warn',
    ...extra,
  };
  const s: TestServer = {
    origin: `http://127.0.0.1:${port}`,
    port,
    env,
    running: await startParley(env),
    async restart() {
      await stopParley(s.running);
      s.running = await startParley(env);
    },
    async stop() {
      await stopParley(s.running);
      data.remove();
    },
  };
  return s;
}

export interface TestBot {
  id: number;
  userId: number;
  token: string;
  webhookSecret: string;
}

export interface World {
  guildId: number;
  channelId: number;
  human: { id: number; token: string };
  /** a new bot in the guild (a new owner every 3 bots: at most 3 per owner, D41) */
  addBot(name?: string): Promise<TestBot>;
  admin(method: string, url: string, body?: unknown): Promise<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export async function makeWorld(origin: string): Promise<World> {
  const admin = (method: string, url: string, body?: unknown) =>
    callOk(origin, method, `/admin/v1${url}`, ADMIN, body);
  const owner = await admin('POST', '/users', { name: 'owner' });
  const human = await admin('POST', '/users', { name: 'human' });
  const session = await admin('POST', `/users/${human.id}/sessions`);
  const guild = await admin('POST', '/guilds', { name: 'Guild', ownerId: owner.id });
  const channel = await admin('POST', `/guilds/${guild.id}/channels`, { name: 'general' });
  await admin('PUT', `/guilds/${guild.id}/members/${human.id}`, {});
  let ownerId = owner.id as number;
  let bots = 0;
  return {
    guildId: guild.id,
    channelId: channel.id,
    human: { id: human.id, token: session.token },
    admin,
    async addBot(name = `bot${bots}`) {
      if (bots > 0 && bots % 3 === 0)
        ownerId = (await admin('POST', '/users', { name: `owner${bots}` })).id;
      bots++;
      const b = await admin('POST', '/bots', { ownerId, name });
      await admin('PUT', `/guilds/${guild.id}/members/${b.bot.botUser.id}`, {});
      return {
        id: b.bot.id,
        userId: b.bot.botUser.id,
        token: b.token,
        webhookSecret: b.webhookSecret,
      };
    },
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Poll `check` until it returns something (or time runs out). */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 15_000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(100);
  }
}
