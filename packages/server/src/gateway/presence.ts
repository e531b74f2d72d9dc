import type { Redis } from 'ioredis';
import { loadIoredis } from '../lazy-modules.js';
import type { Domain } from '../domain/context.js';
import { FAIL_FAST_REDIS, type RedisHealth } from '../health/health.js';

/**
 * D51 PRESENCE_UPDATE {userId, status}: a user (person or bot) is online while it holds at least
 * one gateway connection on any node. Each node counts its own connections per user in memory;
 * with several nodes (PARLEY_REDIS_URL) each node also keeps the set of users online on it in
 * Redis (`presence:node:<id>`) beside a liveness key that expires unless the node refreshes it,
 * so a crashed node's users go offline (another node notices the missing liveness key and
 * reaps the set).
 *
 * Transitions: the first connection of a user on a node adds it to the node's set, then looks
 * at the other nodes: if none has it, `online` is sent. After the last connection on a node
 * closes, a grace of OFFLINE_GRACE_MS absorbs reconnects (a page reload, a resume); then the
 * user leaves the node's set FIRST and the other nodes are looked at: if none has it, `offline`.
 * (Leaving before looking means two nodes losing a user at once cannot both miss the offline.)
 *
 * Audience: a `guild` audience for each guild the user is in, so exactly the people sharing a
 * guild hear it (someone in two shared guilds hears it twice — idempotent). Bots never receive
 * it (people's types only reach people, D51). Guilds of more than PRESENCE_MAX_MEMBERS members
 * are left out: every connect there would cost a frame to every member (10,000² frames when a
 * large guild reconnects after a restart) — large guilds on peers' platforms do the same.
 */
export const OFFLINE_GRACE_MS = 3000;
export const PRESENCE_MAX_MEMBERS = 1000;
const LIVENESS_TTL_S = 30;
const REFRESH_MS = 10_000;
const MEMBER_COUNT_TTL_MS = 30_000;

export class PresenceTracker {
  private readonly local = new Map<number, number>();
  private readonly leaving = new Map<number, NodeJS.Timeout>();
  private redis: Redis | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly memberCounts = new Map<number, { n: number; at: number }>();
  /** transitions of one user run one after the other (a connect racing its own offline) */
  private readonly chains = new Map<number, Promise<void>>();

  constructor(
    private readonly d: Domain,
    private readonly o: {
      nodeId: number;
      redisUrl: string | undefined;
      log: (err: unknown, msg: string) => void;
      graceMs?: number;
      /** D72: told when the connection is lost and back */
      health?: RedisHealth;
    },
  ) {}

  private get nodeKey(): string {
    return `presence:node:${this.o.nodeId}`;
  }

  async start(): Promise<void> {
    if (this.o.redisUrl === undefined || this.redis) return;
    const { Redis } = await loadIoredis();
    // D72: while Redis is down a command fails at once (no offline queue, no retries; a timeout
    // for one sent as the connection died): presence changes meanwhile are not announced
    // (presence is a hint too), ioredis reconnects by itself and the next refresh re-adds this
    // node's users.
    const r = new Redis(this.o.redisUrl, FAIL_FAST_REDIS);
    r.on('error', () => {});
    this.o.health?.watch(r);
    this.redis = r;
    try {
      await r.connect();
      // A restart with the same node id: whoever was online here before is not any more.
      const stale = await r.smembers(this.nodeKey);
      await r.del(this.nodeKey);
      await r.sadd('presence:nodes', String(this.o.nodeId));
      await this.beat();
      for (const u of stale) this.transition(Number(u), 'offline');
    } catch (err) {
      this.o.log(err, 'presence: Redis unavailable at start');
    }
    this.timer = setInterval(() => {
      this.beat()
        .then(() => this.reap())
        .catch((err: unknown) => this.o.log(err, 'presence: refresh failed'));
    }, REFRESH_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    for (const t of this.leaving.values()) clearTimeout(t);
    this.leaving.clear();
    const r = this.redis;
    this.redis = undefined;
    if (r) {
      this.o.health?.unwatch(r);
      // Leaving cleanly: this node's users go offline at once where no other node has them.
      const users = [...this.local.keys()];
      try {
        await r.del(this.nodeKey, `presence:alive:${this.o.nodeId}`);
        await r.srem('presence:nodes', String(this.o.nodeId));
        const elsewhere = await this.onlineElsewhere(r, users);
        for (const u of users) if (!elsewhere.has(u)) await this.announce(u, 'offline');
      } catch (err) {
        this.o.log(err, 'presence: could not leave cleanly');
      }
      r.disconnect();
    }
    this.local.clear();
  }

  isOnlineHere(userId: number): boolean {
    return this.local.has(userId) || this.leaving.has(userId);
  }

  /**
   * D66: which of `users` are online now — held here, or (several nodes) in a live node's set in
   * Redis. READY's `presences`. While Redis cannot answer, this node's own view (presence is a
   * hint, D72).
   */
  async onlineAmong(users: readonly number[]): Promise<Set<number>> {
    const out = new Set<number>();
    const rest: number[] = [];
    for (const u of users) {
      if (this.isOnlineHere(u)) out.add(u);
      else rest.push(u);
    }
    const r = this.redis;
    if (r && rest.length > 0) {
      try {
        for (let i = 0; i < rest.length; i += 1000)
          for (const u of await this.onlineElsewhere(r, rest.slice(i, i + 1000))) out.add(u);
      } catch (err) {
        this.o.log(err, 'presence: Redis could not say who is online');
      }
    }
    return out;
  }

  /** A gateway connection of `userId` opened on this node. */
  up(userId: number): void {
    const n = this.local.get(userId) ?? 0;
    this.local.set(userId, n + 1);
    if (n > 0) return;
    const t = this.leaving.get(userId);
    if (t) {
      // Back within the grace: nobody was told it left.
      clearTimeout(t);
      this.leaving.delete(userId);
      return;
    }
    this.transition(userId, 'online');
  }

  /** A gateway connection of `userId` closed on this node. */
  down(userId: number): void {
    const n = this.local.get(userId) ?? 0;
    if (n > 1) {
      this.local.set(userId, n - 1);
      return;
    }
    this.local.delete(userId);
    if (n === 0) return;
    const t = setTimeout(() => {
      this.leaving.delete(userId);
      if (!this.local.has(userId)) this.transition(userId, 'offline');
    }, this.o.graceMs ?? OFFLINE_GRACE_MS);
    t.unref();
    this.leaving.set(userId, t);
  }

  private transition(userId: number, status: 'online' | 'offline'): void {
    const prev = this.chains.get(userId) ?? Promise.resolve();
    const next = prev
      .then(() => this.apply(userId, status))
      .catch((err: unknown) => this.o.log(err, 'presence update failed'))
      .finally(() => {
        if (this.chains.get(userId) === next) this.chains.delete(userId);
      });
    this.chains.set(userId, next);
  }

  private async apply(userId: number, status: 'online' | 'offline'): Promise<void> {
    // The state may have moved on while earlier transitions ran.
    if (status === 'offline' && this.isOnlineHere(userId)) return;
    if (status === 'online' && !this.local.has(userId)) return;
    const r = this.redis;
    if (r) {
      if (status === 'online') await r.sadd(this.nodeKey, String(userId));
      else await r.srem(this.nodeKey, String(userId));
      if ((await this.onlineElsewhere(r, [userId])).has(userId)) return;
    }
    await this.announce(userId, status);
  }

  /** Users among `users` that another live node holds a connection of. */
  private async onlineElsewhere(r: Redis, users: readonly number[]): Promise<Set<number>> {
    const out = new Set<number>();
    if (users.length === 0) return out;
    const nodes = (await r.smembers('presence:nodes')).filter((n) => n !== String(this.o.nodeId));
    for (const n of nodes) {
      if ((await r.exists(`presence:alive:${n}`)) === 0) continue;
      const p = r.pipeline();
      for (const u of users) p.sismember(`presence:node:${n}`, String(u));
      const res = (await p.exec()) ?? [];
      res.forEach(([, v], i) => {
        if (v === 1) out.add(users[i] as number);
      });
    }
    return out;
  }

  private async beat(): Promise<void> {
    const r = this.redis;
    if (!r) return;
    await r.set(`presence:alive:${this.o.nodeId}`, '1', 'EX', LIVENESS_TTL_S);
    // Re-add what this node holds (a Redis restart or a reap by mistake heals here).
    const users = [...this.local.keys()];
    for (let i = 0; i < users.length; i += 1000)
      await r.sadd(this.nodeKey, ...users.slice(i, i + 1000).map(String));
  }

  /** Another node stopped refreshing its liveness: its users are offline unless held elsewhere. */
  private async reap(): Promise<void> {
    const r = this.redis;
    if (!r) return;
    for (const n of await r.smembers('presence:nodes')) {
      if (n === String(this.o.nodeId)) continue;
      if ((await r.exists(`presence:alive:${n}`)) === 1) continue;
      // One node reaps (the lock expires by itself).
      if ((await r.set(`presence:reap:${n}`, String(this.o.nodeId), 'EX', 30, 'NX')) !== 'OK')
        continue;
      const users = (await r.smembers(`presence:node:${n}`)).map(Number);
      await r.del(`presence:node:${n}`);
      await r.srem('presence:nodes', n);
      const elsewhere = await this.onlineElsewhere(r, users);
      for (const u of users)
        if (!elsewhere.has(u) && !this.isOnlineHere(u)) await this.announce(u, 'offline');
    }
  }

  /** PRESENCE_UPDATE to the people of each (not too large) guild the user is in. */
  private async announce(userId: number, status: 'online' | 'offline'): Promise<void> {
    const rows = await this.d.db
      .selectFrom('members')
      .select('guild_id')
      .where('user_id', '=', userId)
      .execute();
    const guilds = rows.map((g) => Number(g.guild_id));
    const counts = await this.memberCountsOf(guilds);
    for (const guildId of guilds) {
      if ((counts.get(guildId) ?? 0) > PRESENCE_MAX_MEMBERS) continue;
      this.d.people.ephemeral({
        type: 'PRESENCE_UPDATE',
        data: { userId, status },
        audience: { kind: 'guild', guildId },
      });
    }
    // D66: the people it has a DM with hear it too (READY lists them).
    const partners = await dmPartners(this.d, userId);
    if (partners.length > 0)
      this.d.people.ephemeral({
        type: 'PRESENCE_UPDATE',
        data: { userId, status },
        audience: { kind: 'users', userIds: partners },
      });
  }

  /**
   * D66: the people whose presence READY shows `userId`: the members of its guilds of at most
   * PRESENCE_MAX_MEMBERS members (the larger ones announce no presence, see above) and its DM
   * partners — not itself.
   */
  async watchedBy(userId: number): Promise<number[]> {
    const rows = await this.d.db
      .selectFrom('members')
      .select('guild_id')
      .where('user_id', '=', userId)
      .execute();
    const counts = await this.memberCountsOf(rows.map((g) => Number(g.guild_id)));
    const small = [...counts].filter(([, n]) => n <= PRESENCE_MAX_MEMBERS).map(([g]) => g);
    const ids = new Set<number>(await dmPartners(this.d, userId));
    if (small.length > 0) {
      const mates = await this.d.db
        .selectFrom('members')
        .select('user_id')
        .distinct()
        .where('guild_id', 'in', small)
        .execute();
      for (const m of mates) ids.add(Number(m.user_id));
    }
    ids.delete(userId);
    return [...ids].sort((a, b) => a - b);
  }

  private async memberCountsOf(guilds: readonly number[]): Promise<Map<number, number>> {
    const now = Date.now();
    const out = new Map<number, number>();
    const missing: number[] = [];
    for (const g of guilds) {
      const c = this.memberCounts.get(g);
      if (c && now - c.at < MEMBER_COUNT_TTL_MS) out.set(g, c.n);
      else missing.push(g);
    }
    if (missing.length > 0) {
      const rows = await this.d.db
        .selectFrom('members')
        .select(['guild_id', (eb) => eb.fn.countAll<number>().as('n')])
        .where('guild_id', 'in', missing)
        .groupBy('guild_id')
        .execute();
      if (this.memberCounts.size > 10_000) this.memberCounts.clear();
      for (const r of rows) {
        out.set(Number(r.guild_id), Number(r.n));
        this.memberCounts.set(Number(r.guild_id), { n: Number(r.n), at: now });
      }
    }
    return out;
  }
}

/** The other parties of `userId`'s DMs. */
async function dmPartners(d: Domain, userId: number): Promise<number[]> {
  const rows = await d.db
    .selectFrom('channels')
    .select(['dm_user_low', 'dm_user_high'])
    .where('guild_id', 'is', null)
    .where((eb) => eb.or([eb('dm_user_low', '=', userId), eb('dm_user_high', '=', userId)]))
    .execute();
  const out = new Set<number>();
  for (const r of rows)
    for (const u of [r.dm_user_low, r.dm_user_high])
      if (u !== null && Number(u) !== userId) out.add(Number(u));
  return [...out];
}
