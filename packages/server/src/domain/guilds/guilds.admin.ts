import type { AdminGuild, AdminGuildDetail, AdminRole, Page } from '@parley/protocol';
import { notFound } from '../../errors/app-error.js';
import { iso } from '../../ids/clock.js';
import { nameContains, toPage, type PageQuery } from '../admin/paging.js';
import type { Domain } from '../context.js';
import { channelView } from '../views.js';
import { loadRole } from './rights.js';
import { roleView, rolesOf } from './roles.service.js';

/** D52: the operator's view of guilds and roles. */
interface GuildRow {
  id: number;
  name: string;
  owner_id: number;
  created_at: number;
  member_count: number | string;
}

const view = (r: GuildRow): AdminGuild => ({
  id: r.id,
  name: r.name,
  ownerId: r.owner_id,
  memberCount: Number(r.member_count),
  createdAt: iso(r.created_at),
});

const guilds = (d: Domain) =>
  d.db.selectFrom('guilds as g').select((eb) => [
    'g.id',
    'g.name',
    'g.owner_id',
    'g.created_at',
    eb
      .selectFrom('members as m')
      .select((e) => e.fn.countAll<number>().as('n'))
      .whereRef('m.guild_id', '=', 'g.id')
      .as('member_count'),
  ]);

export async function listGuilds(d: Domain, q: PageQuery): Promise<Page<AdminGuild>> {
  let query = guilds(d);
  if (q.after !== undefined) query = query.where('g.id', '>', q.after);
  if (q.q !== undefined && q.q !== '') query = query.where(nameContains('g.name', q.q));
  const rows = await query
    .orderBy('g.id', 'asc')
    .limit(q.limit + 1)
    .execute();
  return toPage(rows as GuildRow[], q.limit, view);
}

export async function getGuild(d: Domain, guildId: number): Promise<AdminGuildDetail> {
  const row = (await guilds(d).where('g.id', '=', guildId).executeTakeFirst()) as
    GuildRow | undefined;
  if (!row) throw notFound('guild');
  const [channels, roles, bots] = await Promise.all([
    d.db
      .selectFrom('channels')
      .select(['id', 'guild_id', 'type', 'name', 'topic'])
      .where('guild_id', '=', guildId)
      .orderBy('id')
      .execute(),
    rolesOf(d.db, guildId),
    d.db
      .selectFrom('members as m')
      .innerJoin('bots as b', 'b.user_id', 'm.user_id')
      .select('b.id')
      .where('m.guild_id', '=', guildId)
      .orderBy('b.id')
      .execute(),
  ]);
  return {
    ...view(row),
    channels: channels.map((c) => channelView({ ...c, guild_id: guildId })),
    roles,
    bots: bots.map((b) => b.id),
  };
}

/** D52: one role as the operator sees it (with its guild). */
export async function getRole(d: Domain, roleId: number): Promise<AdminRole> {
  const r = await loadRole(d.db, roleId);
  if (!r) throw notFound('role');
  return { ...roleView(r), guildId: r.guildId };
}
