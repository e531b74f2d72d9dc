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
// guild, channel, role or member) is called by each of six callers, on a fresh guild each time,
// and must answer what the contract gives: the bit a route needs and whether rank governs it
// are read from the document's own summary of the route (a route added without saying so fails
// here).
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
  let routes: Route[] = [];

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
  });
  afterAll(async () => {
    await h.close();
  });

  /** A fresh guild with its cast: roles (bit-low 1 < target 2 < bit-high 3), members, a ban, an invite. */
  async function world(n: number, bits: number) {
    const owner = await makeUser(h, `o${n}`);
    const g = await expectStatus(
      await h.people(owner.token).post('/guilds', { name: `G${n}` }),
      201,
    );
    const guildId = g.body.id as number;
    const channelId = g.body.channels[0].id as number;
    // "Without the bit" means without it: @everyone's default (D57) may hold it (CREATE_INVITE).
    await expectStatus(
      await h.as(owner.token).patch(`/roles/${guildId}`, {
        permissions: DEFAULT_EVERYONE_PERMISSIONS & ~bits,
      }),
      200,
    );
    const mk = async (name: string, permissions: number) =>
      (
        await expectStatus(
          await h.as(owner.token).post(`/guilds/${guildId}/roles`, { name, permissions }),
          201,
        )
      ).body.id as number;
    const high = await mk('high', bits);
    const targetRole = await mk('target', 0);
    const low = await mk('low', bits);
    const target = await makeUser(h, `t${n}`);
    const plain = await makeUser(h, `p${n}`);
    const lowM = await makeUser(h, `l${n}`);
    const highM = await makeUser(h, `h${n}`);
    const banned = await makeUser(h, `b${n}`);
    const bot = await makeBot(h, owner.id, `bot${n}`);
    await join(h, guildId, target.id, [targetRole]);
    await join(h, guildId, plain.id);
    await join(h, guildId, lowM.id, [low]);
    await join(h, guildId, highM.id, [high]);
    await join(h, guildId, banned.id);
    await join(h, guildId, bot.userId);
    await expectStatus(await h.as(owner.token).put(`/guilds/${guildId}/bans/${banned.id}`), 204);
    const invite = await expectStatus(
      await h.as(owner.token).post(`/guilds/${guildId}/invites`, {}),
      201,
    );
    const tokens: Record<Caller, string | undefined> = {
      'no token': undefined,
      'bot without the bit': bot.token,
      'member without the bit': plain.token,
      'bit, lower rank': lowM.token,
      'bit, higher rank': highM.token,
      owner: owner.token,
    };
    return {
      guildId,
      channelId,
      targetRole,
      target: target.id,
      banned: banned.id,
      code: invite.body.code as string,
      tokens,
    };
  }

  /** The request of a route for a world: path parameters filled, a valid body for its schema. */
  function request(
    r: Route,
    w: Awaited<ReturnType<typeof world>>,
  ): { url: string; body?: unknown } {
    const userId = r.path.includes('/bans/') && r.method === 'DELETE' ? w.banned : w.target;
    const url = r.path
      .replace('{guildId}', String(w.guildId))
      .replace('{channelId}', String(w.channelId))
      .replace('{roleId}', String(w.targetRole))
      .replace('{userId}', String(userId))
      .replace('{code}', w.code);
    const key = `${r.method} ${r.path.replace('/api/v1', '')}`;
    const bodies: Record<string, unknown> = {
      'PATCH /guilds/{guildId}': { name: 'Renamed' },
      'POST /guilds/{guildId}/channels': { name: 'new' },
      'PATCH /channels/{channelId}': { topic: 'new topic' },
      'PUT /channels/{channelId}/overwrites/{roleId}': { allow: 0, deny: Permission.SEND_MESSAGES },
      'POST /guilds/{guildId}/roles': { name: 'made', permissions: 0 },
      'PATCH /guilds/{guildId}/roles': [{ id: w.targetRole, position: 1 }],
      'PATCH /roles/{roleId}': { name: 'renamed' },
      'PUT /guilds/{guildId}/members/{userId}/roles': { roles: [] },
      'PATCH /guilds/{guildId}/members/{userId}': {
        timeoutUntil: new Date(Date.now() + 60_000).toISOString(),
      },
      'PUT /guilds/{guildId}/bans/{userId}': {},
      'POST /guilds/{guildId}/invites': {},
    };
    if (r.method === 'GET' || r.method === 'DELETE') return { url };
    if (!(key in bodies))
      throw new Error(`no sample body for ${key}: add one (the matrix must cover every route)`);
    return { url, body: bodies[key] };
  }

  it('covers every guild administration route of the document', () => {
    expect(routes.length).toBeGreaterThanOrEqual(20);
    for (const r of routes) expect(r.path).toMatch(/\{(guildId|channelId|roleId|userId|code)\}/);
  });

  it('each of the six callers gets the answer the contract gives, on every route', async () => {
    const failures: string[] = [];
    let n = 0;
    for (const r of routes) {
      const bit = r.summary.match(new RegExp(`\\b(${BITS.join('|')})\\b`, 'g'))?.at(-1) as
        PermissionName | undefined;
      for (const caller of CALLERS) {
        const w = await world(n++, bit === undefined ? 0 : Permission[bit]);
        const { url, body } = request(r, w);
        const token = w.tokens[caller];
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
    }
    expect(failures).toEqual([]);
    expect(n).toBe(routes.length * CALLERS.length);
  }, 600_000);
});
