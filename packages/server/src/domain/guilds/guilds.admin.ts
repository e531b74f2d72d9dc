import type {
  AdminGuild,
  AdminGuildDetail,
  AdminGuildPatch,
  AdminRole,
  AdminRolePatch,
  Page,
} from '@parley/protocol';
import { conflict, notFound } from '../../errors/app-error.js';
import { iso } from '../../ids/clock.js';
import type { Db } from '../../storage/db.js';
import { nameContains, toPage, type PageQuery } from '../admin/paging.js';
import { purgeGuild } from '../admin/purge.js';
import { requireGuild } from '../permissions/access.service.js';
import type { Domain } from '../context.js';
import { channelView } from '../views.js';
import { emitGuildUpdate, emitViewChanges, viewSnapshot } from './audience.js';

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
    d.db
      .selectFrom('roles')
      .select(['id', 'name', 'permissions'])
      .where('guild_id', '=', guildId)
      .orderBy('id')
      .execute(),
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

/** Rename, or hand the guild to another member (the new owner must already be a member). */
export async function updateGuild(
  d: Domain,
  guildId: number,
  body: AdminGuildPatch,
): Promise<AdminGuildDetail> {
  await d.db.transaction().execute(async (trx) => {
    await requireGuild(trx, guildId);
    if (body.ownerId !== undefined) {
      const member = await trx
        .selectFrom('members')
        .select('user_id')
        .where('guild_id', '=', guildId)
        .where('user_id', '=', body.ownerId)
        .executeTakeFirst();
      if (!member) throw notFound('member (the new owner must be a member of the guild)');
    }
    // D70: the members hear the guild's own fields; a new owner (who sees every channel) and the
    // old one hear the channels they gained or lost.
    const owners = await trx
      .selectFrom('guilds')
      .select('owner_id')
      .where('id', '=', guildId)
      .executeTakeFirstOrThrow();
    const concerned = body.ownerId === undefined ? [] : [Number(owners.owner_id), body.ownerId];
    const before = await viewSnapshot(trx, guildId, concerned);
    await trx
      .updateTable('guilds')
      .set({
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.ownerId !== undefined ? { owner_id: body.ownerId } : {}),
      })
      .where('id', '=', guildId)
      .execute();
    await emitGuildUpdate(trx, d, guildId);
    if (concerned.length > 0)
      await emitViewChanges(trx, d, guildId, before, { only: concerned, permissions: true });
  });
  return getGuild(d, guildId);
}

/** D52: the guild and everything in it, in one transaction; each bot in it gets its removal. */
export async function deleteGuild(d: Domain, guildId: number): Promise<void> {
  await d.db.transaction().execute(async (trx) => {
    await requireGuild(trx, guildId);
    await purgeGuild(d, trx, guildId);
  });
}

async function loadRole(d: Domain, roleId: number): Promise<AdminRole> {
  const r = await d.db
    .selectFrom('roles')
    .select(['id', 'guild_id', 'name', 'permissions'])
    .where('id', '=', roleId)
    .executeTakeFirst();
  if (!r) throw notFound('role');
  return { id: r.id, guildId: r.guild_id, name: r.name, permissions: r.permissions };
}

export const getRole = loadRole;

/** D11: @everyone (id = guild id) keeps its name; its permissions may change. */
export async function updateRole(
  d: Domain,
  roleId: number,
  body: AdminRolePatch,
): Promise<AdminRole> {
  const role = await loadRole(d, roleId);
  if (body.name !== undefined && role.id === role.guildId && body.name !== '@everyone')
    throw conflict('The @everyone role cannot be renamed');
  await d.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('roles')
      .set({
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.permissions !== undefined ? { permissions: body.permissions } : {}),
      })
      .where('id', '=', roleId)
      .execute();
    await rolesChanged(d, trx, role.guildId);
  });
  return loadRole(d, roleId);
}

/** The role leaves every member and every channel overwrite with it; not @everyone (409). */
export async function deleteRole(d: Domain, roleId: number): Promise<void> {
  const role = await loadRole(d, roleId);
  if (role.id === role.guildId) throw conflict('The @everyone role cannot be deleted');
  await d.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('member_roles').where('role_id', '=', roleId).execute();
    await trx.deleteFrom('channel_overwrites').where('role_id', '=', roleId).execute();
    await trx.deleteFrom('roles').where('id', '=', roleId).execute();
    await rolesChanged(d, trx, role.guildId);
  });
}

/** D51: GUILD_ROLES_UPDATE with the guild's roles as they commit. */
async function rolesChanged(d: Domain, trx: Db, guildId: number): Promise<void> {
  const roles = await trx
    .selectFrom('roles')
    .select(['id', 'name', 'permissions'])
    .where('guild_id', '=', guildId)
    .orderBy('id')
    .execute();
  d.people.people(trx, {
    type: 'GUILD_ROLES_UPDATE',
    data: { guildId, roles },
    audience: { kind: 'guild', guildId },
  });
}
