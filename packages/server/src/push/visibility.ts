import type { Redis } from 'ioredis';
import { loadIoredis } from '../lazy-modules.js';
import { FAIL_FAST_REDIS, type RedisHealth } from '../health/health.js';

const LIVENESS_TTL_S = 30;
const REFRESH_MS = 10_000;

/**
 * D66 (extends D51's presence): who has a VISIBLE tab. The web app says on its gateway connection
 * (op 3 `{visible}`, gateway/frames.ts) whether the person can see it; a connection that never
 * says counts as not visible. A person with a visible connection on any node gets no Web Push
 * (no double notification: the open tab shows the message).
 *
 * Like presence (gateway/presence.ts): each node counts its own visible connections per person
 * in memory; with several nodes (PARLEY_REDIS_URL) each node also keeps the set of its people
 * with a visible tab in Redis (`push:visible:<node>`) beside a liveness key that expires unless
 * the node refreshes it, so a crashed node's tabs stop counting within LIVENESS_TTL_S. While
 * Redis is down each node knows only its own tabs (a push may then reach someone looking at a
 * tab on another node: a notification too many, never one lost).
 */
export class VisibilityTracker {
  private readonly local = new Map<number, number>();
  private redis: Redis | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly o: {
      nodeId: number;
      redisUrl: string | undefined;
      log: (err: unknown, msg: string) => void;
      health?: RedisHealth;
    },
  ) {}

  private get nodeKey(): string {
    return `push:visible:${this.o.nodeId}`;
  }

  async start(): Promise<void> {
    if (this.o.redisUrl === undefined || this.redis) return;
    const { Redis } = await loadIoredis();
    // D72: as presence: commands fail at once while Redis is down; the refresh heals.
    const r = new Redis(this.o.redisUrl, FAIL_FAST_REDIS);
    r.on('error', () => {});
    this.o.health?.watch(r);
    this.redis = r;
    try {
      await r.connect();
      // A restart with the same node id: the tabs it had are gone.
      await r.del(this.nodeKey);
      await r.sadd('push:nodes', String(this.o.nodeId));
      await this.beat();
    } catch (err) {
      this.o.log(err, 'visibility: Redis unavailable at start');
    }
    this.timer = setInterval(() => {
      this.beat().catch((err: unknown) => this.o.log(err, 'visibility: refresh failed'));
    }, REFRESH_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    const r = this.redis;
    this.redis = undefined;
    if (r) {
      this.o.health?.unwatch(r);
      try {
        await r.del(this.nodeKey, `push:alive:${this.o.nodeId}`);
        await r.srem('push:nodes', String(this.o.nodeId));
      } catch (err) {
        this.o.log(err, 'visibility: could not leave cleanly');
      }
      r.disconnect();
    }
    this.local.clear();
  }

  /** A connection of `userId` on this node became visible. */
  show(userId: number): void {
    const n = this.local.get(userId) ?? 0;
    this.local.set(userId, n + 1);
    if (n === 0) this.redis?.sadd(this.nodeKey, String(userId)).catch(() => {});
  }

  /** A visible connection of `userId` on this node was hidden or closed. */
  hide(userId: number): void {
    const n = this.local.get(userId) ?? 0;
    if (n > 1) {
      this.local.set(userId, n - 1);
      return;
    }
    if (n === 0) return;
    this.local.delete(userId);
    this.redis?.srem(this.nodeKey, String(userId)).catch(() => {});
  }

  isVisibleHere(userId: number): boolean {
    return this.local.has(userId);
  }

  /** Those among `userIds` with a visible tab on this node or on another live node. */
  async visibleAnywhere(userIds: readonly number[]): Promise<Set<number>> {
    const out = new Set(userIds.filter((u) => this.local.has(u)));
    const rest = userIds.filter((u) => !out.has(u));
    const r = this.redis;
    if (!r || rest.length === 0) return out;
    try {
      const nodes = (await r.smembers('push:nodes')).filter((n) => n !== String(this.o.nodeId));
      for (const n of nodes) {
        if ((await r.exists(`push:alive:${n}`)) === 0) continue;
        const res = (await r.smismember(`push:visible:${n}`, ...rest.map(String))) ?? [];
        res.forEach((v, i) => {
          if (v === 1) out.add(rest[i] as number);
        });
      }
    } catch (err) {
      // D72: Redis down: this node's own tabs are all it knows (one notification too many).
      this.o.log(err, 'visibility: other nodes unknown');
    }
    return out;
  }

  private async beat(): Promise<void> {
    const r = this.redis;
    if (!r) return;
    await r.set(`push:alive:${this.o.nodeId}`, '1', 'EX', LIVENESS_TTL_S);
    await r.sadd('push:nodes', String(this.o.nodeId));
    // The set is rewritten whole: a hide whose SREM failed (Redis down) heals here too.
    const users = [...this.local.keys()];
    const m = r.multi().del(this.nodeKey);
    for (let i = 0; i < users.length; i += 1000)
      m.sadd(this.nodeKey, ...users.slice(i, i + 1000).map(String));
    await m.exec();
  }
}
