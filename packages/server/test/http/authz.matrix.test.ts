import { DEFAULT_EVERYONE_PERMISSIONS, Permission, type PermissionName } from '@parley/protocol';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  expectStatus,
  join,
  makeBot,
  makeUser,
  type Harness,
} from '../helpers/harness.js';

// D57–D59 acceptance: the authorization matrix, generated from the OpenAPI document the server
// builds — not a list kept by hand. Every /api/v1 route of guild administration (each takes a
// guild, channel, role or member) is called by each of six callers and must answer what the
// contract gives: the bit a route needs and whether rank governs it are read from the document's
// own summary of the route (a route added without saying so fails here).
//
// Cheap on both dialects: the cast (owner, members, bot) is made once; each route gets its own
// guild, all built once in beforeAll; and each caller meets the state of a fresh world — where a
// success consumes or moves the object a route acts on (deleting a channel, kicking a member,
// reordering a role…), each caller acts on its own copy of that object, made in bulk with the
// route's guild (a route that changes state must say which object it consumes, or fail here).
type Caller =
  | 'no token'
  | 'bot without the bit'
  | 'member without the bit'
  | 'bit, lower rank'
  | 'bit, higher rank'
  | 'owner';
const CALLERS: Caller[] = [
  'no token',
  'bot without the bit',
  'member without the bit',
  'bit, lower rank',
  'bit, higher rank',
  'owner',
];
const BITS = Object.keys(Permission) as PermissionName[];

interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  summary: string;
  ok: number;
}

/** What the contract gives a caller on a route (D12 order: 401, then 403 by bits, by rank). */
function expected(route: Route, caller: Caller): number {
  const bit = route.summary.match(new RegExp(`\\b(${BITS.join('|')})\\b`, 'g'))?.at(-1);
  const ownerOnly = /the owner only/.test(route.summary);
  const ranked = /\bD58 rank\b|below your (own )?rank/.test(route.summary);
  if (caller === 'no token') return 401;
  if (caller === 'owner') return route.ok;
  if (ownerOnly) return 403;
  if (bit === undefined) return route.ok; // membership is enough (D59: bots read the guild)
  if (caller === 'bot without the bit' || caller === 'member without the bit') return 403;
  if (caller === 'bit, lower rank' && ranked) return 403;
  return route.ok;
}

dbDescribe('authorization matrix from the OpenAPI document (D57–D59)', () => {
  let h: Harness;
  const routes: Route[] = [];
  const worlds = new Map<Route, World>();
  /** the cast, shared by every route's guild (a person may be in many guilds, a bot too) */
  let cast: Record<'owner' | 'plain' | 'low' | 'high', { id: number; token: string }> & {
    bot: { userId: number; token: string };
    target: number;
    banned: number;
  };

  /** What a route's success consumes or moves, so each caller gets its own copy (see above). */
  type Fresh = 'guild' | 'channel' | 'role' | 'member' | 'banned' | 'invite';
  /** Every route that is not a GET says what it sends and what it consumes (if anything). */
  const MUTATIONS: Record<string, { body?: (w: World, i: number) => unknown; fresh?: Fresh }> = {
    'PATCH /guilds/{guildId}': { body: () => ({ name: 'Renamed' }) },
    'DELETE /guilds/{guildId}': { fresh: 'guild' },
    'POST /guilds/{guildId}/channels': { body: () => ({ name: 'new' }) },
    'PATCH /channels/{channelId}': { body: () => ({ topic: 'new topic' }) },
    'DELETE /channels/{channelId}': { fresh: 'channel' },
    'PUT /channels/{channelId}/overwrites/{roleId}': {
      body: () => ({ allow: 0, deny: Permission.SEND_MESSAGES }),
    },
    'POST /guilds/{guildId}/roles': { body: () => ({ name: 'made', permissions: 0 }) },
    // Moving a role to the bottom moves it below the lower-ranked caller: each its own role.
    'PATCH /guilds/{guildId}/roles': {
      body: (w, i) => [{ id: w.roles[i], position: 1 }],
      fresh: 'role',
    },
    'PATCH /roles/{roleId}': { body: () => ({ name: 'renamed' }) },
    'DELETE /roles/{roleId}': { fresh: 'role' },
    // Taking the member's roles lowers their rank: each caller its own member.
    'PUT /guilds/{guildId}/members/{userId}/roles': {
      body: () => ({ roles: [] }),
      fresh: 'member',
    },
    'PATCH /guilds/{guildId}/members/{userId}': {
      body: () => ({ timeoutUntil: new Date(Date.now() + 60_000).toISOString() }),
    },
    'DELETE /guilds/{guildId}/members/{userId}': { fresh: 'member' },
    'PUT /guilds/{guildId}/bans/{userId}': { body: () => ({}), fresh: 'member' },
    'DELETE /guilds/{guildId}/bans/{userId}': { fresh: 'banned' },
    'POST /guilds/{guildId}/invites': { body: () => ({}) },
    'DELETE /invites/{code}': { fresh: 'invite' },
  };
  const keyOf = (r: Route) => `${r.method} ${r.path.replace('/api/v1', '')}`;
  const bitOf = (r: Route) =>
    r.summary.match(new RegExp(`\\b(${BITS.join('|')})\\b`, 'g'))?.at(-1) as
      PermissionName | undefined;

  /** The objects of a route's guild, one per caller (the same one unless the route consumes it). */
  interface World {
    guildIds: number[];
    channelIds: number[];
    roles: number[];
    members: number[];
    banned: number[];
    codes: string[];
  }

  const person = async (name: string): Promise<number> =>
    (await expectStatus(await h.admin.post('/users', { name }), 201)).body.id as number;
  let serial = 0;

  /**
   * A guild for one route: @everyone without the route's bit (D57's default may hold it,
   * CREATE_INVITE); roles created high, then the target role(s), then low — each lands just above
   * @everyone, so low (1) < targets < high (D58) — and the cast joined with them; a ban, an invite.
   * `fresh` makes one copy per caller of what the route consumes.
   */
  async function guildFor(bits: number, fresh: Fresh | undefined): Promise<World> {
    const n = serial++;
    const O = cast.owner.token;
    const per = (kind: Fresh) => (fresh === kind ? CALLERS.length : 1);
    const g = await expectStatus(await h.people(O).post('/guilds', { name: `G${n}` }), 201);
    const guildId = g.body.id as number;
    await expectStatus(
      await h.as(O).patch(`/roles/${guildId}`, {
        permissions: DEFAULT_EVERYONE_PERMISSIONS & ~bits,
      }),
      200,
    );
    const mk = async (name: string, permissions: number) =>
      (
        await expectStatus(
          await h.as(O).post(`/guilds/${guildId}/roles`, { name, permissions }),
          201,
        )
      ).body.id as number;
    const high = await mk('high', bits);
    const roles: number[] = [];
    for (let i = 0; i < per('role'); i++) roles.push(await mk(`target${i}`, 0));
    const low = await mk('low', bits);
    await join(h, guildId, cast.plain.id);
    await join(h, guildId, cast.low.id, [low]);
    await join(h, guildId, cast.high.id, [high]);
    await join(h, guildId, cast.bot.userId);
    const members = [cast.target];
    const banned = [cast.banned];
    if (fresh === 'member') {
      members.length = 0;
      for (let i = 0; i < CALLERS.length; i++) members.push(await person(`m${n}-${i}`));
    }
    if (fresh === 'banned') {
      banned.length = 0;
      for (let i = 0; i < CALLERS.length; i++) banned.push(await person(`b${n}-${i}`));
    }
    for (const m of new Set(members)) await join(h, guildId, m, [roles[0] as number]);
    for (const b of banned) {
      await join(h, guildId, b);
      await expectStatus(await h.as(O).put(`/guilds/${guildId}/bans/${b}`), 204);
    }
    const channelIds = [g.body.channels[0].id as number];
    if (fresh === 'channel') {
      channelIds.length = 0;
      for (let i = 0; i < CALLERS.length; i++)
        channelIds.push(
          (
            await expectStatus(
              await h.as(O).post(`/guilds/${guildId}/channels`, { name: `c${i}` }),
              201,
            )
          ).body.id as number,
        );
    }
    const codes: string[] = [];
    for (let i = 0; i < per('invite'); i++)
      codes.push(
        (await expectStatus(await h.as(O).post(`/guilds/${guildId}/invites`, {}), 201)).body
          .code as string,
      );
    return { guildIds: [guildId], channelIds, roles, members, banned, codes };
  }

  async function worldFor(r: Route): Promise<World> {
    const bit = bitOf(r);
    const bits = bit === undefined ? 0 : Permission[bit];
    const fresh = MUTATIONS[keyOf(r)]?.fresh;
    if (fresh !== 'guild') return guildFor(bits, fresh);
    // Deleting the guild: a guild per caller.
    const each = [];
    for (let i = 0; i < CALLERS.length; i++) each.push(await guildFor(bits, undefined));
    const one = each[0] as World;
    return { ...one, guildIds: each.map((w) => w.guildIds[0] as number) };
  }

  /** Run `fn` over `items`, `width` at a time (the database does the waiting, not the CPU). */
  async function pool<T>(items: T[], width: number, fn: (t: T) => Promise<void>): Promise<void> {
    const queue = [...items];
    await Promise.all(
      Array.from({ length: width }, async () => {
        for (let t = queue.shift(); t !== undefined; t = queue.shift()) await fn(t);
      }),
    );
  }

  beforeAll(async () => {
    h = await createHarness();
    const doc = (await h.app.openApiDocument()) as {
      paths: Record<
        string,
        Record<string, { tags?: string[]; summary?: string; responses: Record<string, unknown> }>
      >;
    };
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.startsWith('/api/v1/')) continue;
      for (const [method, op] of Object.entries(ops)) {
        if (!op.tags?.includes('guild administration')) continue;
        const ok = Object.keys(op.responses)
          .map(Number)
          .find((s) => s >= 200 && s < 300);
        routes.push({
          method: method.toUpperCase() as Route['method'],
          path,
          summary: op.summary ?? '',
          ok: ok ?? 200,
        });
      }
    }
    for (const r of routes)
      if (r.method !== 'GET' && !(keyOf(r) in MUTATIONS))
        throw new Error(
          `${keyOf(r)} changes state: add it to MUTATIONS (its body, what it consumes)`,
        );
    const owner = await makeUser(h, 'owner');
    cast = {
      owner,
      plain: await makeUser(h, 'plain'),
      low: await makeUser(h, 'low'),
      high: await makeUser(h, 'high'),
      bot: await makeBot(h, owner.id, 'bot'),
      target: await person('target'),
      banned: await person('banned'),
    };
    await pool(routes, 4, async (r) => {
      worlds.set(r, await worldFor(r));
    });
  }, 300_000);
  afterAll(async () => {
    await h.close();
  });

  /** Caller `i`'s request of a route: path parameters filled with its objects, a valid body. */
  function request(r: Route, w: World, i: number): { url: string; body?: unknown } {
    const at = <T>(xs: T[]): T => (xs.length === 1 ? xs[0] : xs[i]) as T;
    const userId =
      r.path.includes('/bans/') && r.method === 'DELETE' ? at(w.banned) : at(w.members);
    const url = r.path
      .replace('{guildId}', String(at(w.guildIds)))
      .replace('{channelId}', String(at(w.channelIds)))
      .replace('{roleId}', String(at(w.roles)))
      .replace('{userId}', String(userId))
      .replace('{code}', at(w.codes));
    if (r.method === 'GET' || r.method === 'DELETE') return { url };
    const m = MUTATIONS[keyOf(r)];
    if (m?.body === undefined)
      throw new Error(
        `no sample body for ${keyOf(r)}: add one (the matrix must cover every route)`,
      );
    return { url, body: m.body(w, i) };
  }

  it('covers every guild administration route of the document', () => {
    expect(routes.length).toBeGreaterThanOrEqual(20);
    for (const r of routes) expect(r.path).toMatch(/\{(guildId|channelId|roleId|userId|code)\}/);
  });

  it('each of the six callers gets the answer the contract gives, on every route', async () => {
    const failures: string[] = [];
    let n = 0;
    const tokens: Record<Caller, string | undefined> = {
      'no token': undefined,
      'bot without the bit': cast.bot.token,
      'member without the bit': cast.plain.token,
      'bit, lower rank': cast.low.token,
      'bit, higher rank': cast.high.token,
      owner: cast.owner.token,
    };
    // Routes side by side (each has its own guild); a route's callers one after the other.
    await pool(routes, 4, async (r) => {
      const w = worlds.get(r) as World;
      for (const [i, caller] of CALLERS.entries()) {
        n++;
        const { url, body } = request(r, w, i);
        const token = tokens[caller];
        const res = await h.request({
          method: r.method,
          url,
          headers: {
            ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
        });
        const want = expected(r, caller);
        if (res.status !== want)
          failures.push(
            `${r.method} ${r.path} as ${caller}: ${res.status} (want ${want}) ${res.raw.slice(0, 160)}`,
          );
      }
    });
    expect(failures.sort()).toEqual([]);
    expect(n).toBe(routes.length * CALLERS.length);
  }, 300_000);
});
