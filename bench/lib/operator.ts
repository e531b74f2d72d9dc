import { HttpClient, mapLimit, type JsonReply } from './http-client.js';
import type { ParleyServer } from './parley-server.js';

/** The data a benchmark needs, set up through the operator API (D41), as an operator would. */
export interface BotHandle {
  readonly id: number;
  readonly userId: number;
  readonly token: string;
  readonly name: string;
}

/** docs/interface.md#limits: at most 3 bots per account, so many bots need many owners. */
const BOTS_PER_OWNER = 3;

export class Operator {
  readonly http: HttpClient;
  private readonly token: string;
  private seq = 0;

  constructor(server: ParleyServer, maxSockets = 16) {
    this.http = new HttpClient(server.origin, maxSockets);
    this.token = server.adminToken;
  }

  private post(path: string, body?: unknown, ok: number | number[] = 201): Promise<JsonReply> {
    return this.http.expect('POST', `/admin/v1${path}`, ok, { token: this.token, body });
  }

  async user(name: string): Promise<number> {
    return (await this.post('/users', { name })).body.id as number;
  }

  /** A session token: the user calls /api/v1 with it like a bot with its token. */
  async session(userId: number): Promise<string> {
    return (await this.post(`/users/${userId}/sessions`)).body.token as string;
  }

  async guild(name: string, ownerId: number): Promise<number> {
    return (await this.post('/guilds', { name, ownerId })).body.id as number;
  }

  async channel(guildId: number, name: string): Promise<number> {
    return (await this.post(`/guilds/${guildId}/channels`, { name })).body.id as number;
  }

  async join(guildId: number, userId: number): Promise<void> {
    await this.http.expect('PUT', `/admin/v1/guilds/${guildId}/members/${userId}`, [200, 201], {
      token: this.token,
      body: {},
    });
  }

  async joinAll(guildId: number, userIds: readonly number[], concurrency = 8): Promise<void> {
    await mapLimit(userIds, concurrency, (id) => this.join(guildId, id));
  }

  /** `count` bots, three to an owner (owners are created on the way). */
  async bots(count: number, concurrency = 8): Promise<BotHandle[]> {
    const owners = await mapLimit(
      Array.from({ length: Math.ceil(count / BOTS_PER_OWNER) }, (_, i) => i),
      concurrency,
      () => this.user(`owner-${++this.seq}`),
    );
    return mapLimit(
      Array.from({ length: count }, (_, i) => i),
      concurrency,
      async (i) => {
        const name = `bot-${++this.seq}`;
        const ownerId = owners[Math.floor(i / BOTS_PER_OWNER)] as number;
        const r = await this.post('/bots', { ownerId, name });
        return {
          id: r.body.bot.id as number,
          userId: r.body.bot.botUser.id as number,
          token: r.body.token as string,
          name,
        };
      },
    );
  }

  /** PUT the bot's webhook; the raw reply (the caller decides what a refusal means). */
  setWebhook(botId: number, url: string): Promise<JsonReply> {
    return this.http.request('PUT', `/admin/v1/bots/${botId}/webhook`, {
      token: this.token,
      body: { url },
    });
  }

  close(): void {
    this.http.close();
  }
}

/** One guild with one channel and `bots` bots in it: the shape most benchmarks start from. */
export interface World {
  readonly ownerId: number;
  readonly guildId: number;
  readonly channelId: number;
  readonly bots: BotHandle[];
}

export async function buildWorld(op: Operator, bots: number): Promise<World> {
  const ownerId = await op.user('guild-owner');
  const guildId = await op.guild('bench', ownerId);
  const channelId = await op.channel(guildId, 'general');
  const made = await op.bots(bots);
  await op.joinAll(
    guildId,
    made.map((b) => b.userId),
  );
  return { ownerId, guildId, channelId, bots: made };
}

/**
 * `count` guilds, each with one channel and one bot: every message has a single recipient, so
 * a send costs no fan-out (the layout of many small communities with a bot each).
 */
export interface SoloChannel {
  readonly channelId: number;
  readonly bot: BotHandle;
}

export async function buildSoloChannels(op: Operator, count: number): Promise<SoloChannel[]> {
  const ownerId = await op.user('solo-owner');
  const bots = await op.bots(count);
  return mapLimit(bots, 8, async (bot, i) => {
    const guildId = await op.guild(`solo-${i}`, ownerId);
    const channelId = await op.channel(guildId, 'general');
    await op.join(guildId, bot.userId);
    return { channelId, bot };
  });
}
