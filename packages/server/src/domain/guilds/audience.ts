import type { AppGuild } from '@parley/protocol';
import type { Db } from '../../storage/db.js';
import type { Domain } from '../context.js';
import { guildView } from './guild-view.js';

/**
 * D51: what a member sees of a guild (its channels, `myPermissions`) depends only on whether it
 * is the owner and on its set of roles. People with the same standing form one group: one view
 * is built per group and sent once to all of them (a `users` audience), so a GUILD_UPDATE never
 * shows a member channels it cannot VIEW, nor someone else's permissions. Bots are left out:
 * they get none of the people's event types (D51).
 */
export interface ViewGroup {
  userIds: number[];
  view: AppGuild;
}

export async function viewGroups(
  trx: Db,
  guildId: number,
  only?: readonly number[],
): Promise<ViewGroup[]> {
  const guild = await trx
    .selectFrom('guilds')
    .select('owner_id')
    .where('id', '=', guildId)
    .executeTakeFirst();
  if (!guild) return [];
  let people = trx
    .selectFrom('members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select('m.user_id')
    .where('m.guild_id', '=', guildId)
    .where('u.is_bot', '=', 0);
  if (only !== undefined) {
    if (only.length === 0) return [];
    people = people.where('m.user_id', 'in', [...only]);
  }
  const [members, memberRoles] = await Promise.all([
    people.orderBy('m.user_id', 'asc').execute(),
    trx
      .selectFrom('member_roles')
      .select(['user_id', 'role_id'])
      .where('guild_id', '=', guildId)
      .execute(),
  ]);
  const rolesOf = new Map<number, number[]>();
  for (const r of memberRoles) {
    const list = rolesOf.get(Number(r.user_id)) ?? [];
    list.push(Number(r.role_id));
    rolesOf.set(Number(r.user_id), list);
  }
  const byKey = new Map<string, number[]>();
  for (const m of members) {
    const id = Number(m.user_id);
    const key =
      id === Number(guild.owner_id)
        ? 'owner'
        : (rolesOf.get(id) ?? []).sort((a, b) => a - b).join(',');
    const list = byKey.get(key) ?? [];
    list.push(id);
    byKey.set(key, list);
  }
  const groups: ViewGroup[] = [];
  for (const userIds of byKey.values()) {
    const view = await guildView(trx, guildId, userIds[0] as number);
    if (view) groups.push({ userIds, view });
  }
  return groups;
}

/**
 * D51 GUILD_UPDATE: each member (or each of `only`) receives the guild as it sees it now, after
 * a change of its name, roles, permissions or overwrites. Sent after `trx` commits.
 */
export async function emitGuildUpdate(
  trx: Db,
  d: Domain,
  guildId: number,
  only?: readonly number[],
): Promise<void> {
  for (const g of await viewGroups(trx, guildId, only))
    d.people.people(trx, {
      type: 'GUILD_UPDATE',
      data: g.view,
      audience: { kind: 'users', userIds: g.userIds },
    });
}

/** The people among the guild's members who can VIEW the channel (as of `trx`). */
export async function channelViewers(
  trx: Db,
  guildId: number,
  channelId: number,
): Promise<number[]> {
  const ids: number[] = [];
  for (const g of await viewGroups(trx, guildId))
    if (g.view.channels.some((c) => c.id === channelId)) ids.push(...g.userIds);
  return ids.sort((a, b) => a - b);
}
