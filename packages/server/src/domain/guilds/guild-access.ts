import { Permission } from '@parley/protocol';
import type { Db } from '../../storage/db.js';
import { channelPermissions, has, type OverwriteRow } from '../permissions/permissions.js';

/**
 * D51/D34: which channels of a guild each of `userIds` can VIEW, for the people's gateway
 * fan-out. One read of the guild (owner, roles, channels, overwrites) and one of the given
 * members' roles, however many people: a change in a guild of 10,000 connected people costs a
 * node a handful of queries, never one per person. Users that are not members are absent from
 * the answer (also when the guild no longer exists).
 */
export async function guildAccess(
  db: Db,
  guildId: number,
  userIds: readonly number[],
): Promise<Map<number, Set<number>>> {
  const out = new Map<number, Set<number>>();
  if (userIds.length === 0) return out;
  const guild = await db
    .selectFrom('guilds')
    .select(['id', 'owner_id'])
    .where('id', '=', guildId)
    .executeTakeFirst();
  if (!guild) return out;
  const [roles, channels, overwrites] = await Promise.all([
    db.selectFrom('roles').select(['id', 'permissions']).where('guild_id', '=', guildId).execute(),
    db.selectFrom('channels').select('id').where('guild_id', '=', guildId).execute(),
    db
      .selectFrom('channel_overwrites as o')
      .innerJoin('channels as c', 'c.id', 'o.channel_id')
      .select(['o.channel_id', 'o.role_id as roleId', 'o.allow', 'o.deny'])
      .where('c.guild_id', '=', guildId)
      .execute(),
  ]);
  const perms = new Map(roles.map((r) => [Number(r.id), r.permissions]));
  const byChannel = new Map<number, OverwriteRow[]>();
  for (const o of overwrites) {
    const list = byChannel.get(Number(o.channel_id)) ?? [];
    list.push({ roleId: Number(o.roleId), allow: o.allow, deny: o.deny });
    byChannel.set(Number(o.channel_id), list);
  }
  const unique = [...new Set(userIds)];
  for (let i = 0; i < unique.length; i += 500) {
    const chunk = unique.slice(i, i + 500);
    const [members, memberRoles] = await Promise.all([
      db
        .selectFrom('members')
        .select('user_id')
        .where('guild_id', '=', guildId)
        .where('user_id', 'in', chunk)
        .execute(),
      db
        .selectFrom('member_roles')
        .select(['user_id', 'role_id'])
        .where('guild_id', '=', guildId)
        .where('user_id', 'in', chunk)
        .execute(),
    ]);
    const rolesOf = new Map<number, number[]>();
    for (const r of memberRoles) {
      const list = rolesOf.get(Number(r.user_id)) ?? [];
      list.push(Number(r.role_id));
      rolesOf.set(Number(r.user_id), list);
    }
    // People with the same standing see the same channels: computed once per standing.
    const byStanding = new Map<string, Set<number>>();
    for (const m of members) {
      const userId = Number(m.user_id);
      const isOwner = userId === Number(guild.owner_id);
      const mine = (rolesOf.get(userId) ?? []).sort((a, b) => a - b);
      const key = isOwner ? 'owner' : mine.join(',');
      let visible = byStanding.get(key);
      if (!visible) {
        const access = {
          isOwner,
          everyone: perms.get(guildId) ?? 0,
          roles: mine.map((id) => ({ id, permissions: perms.get(id) ?? 0 })),
        };
        visible = new Set<number>();
        for (const c of channels)
          if (
            has(
              channelPermissions(access, guildId, byChannel.get(Number(c.id)) ?? []),
              Permission.VIEW_CHANNEL,
            )
          )
            visible.add(Number(c.id));
        byStanding.set(key, visible);
      }
      out.set(userId, visible);
    }
  }
  return out;
}
