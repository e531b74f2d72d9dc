import type { AppGuild, Channel } from '@parley/protocol';
import type { Db } from '../../storage/db.js';
import { builtOnce } from '../../storage/raw-sql.js';
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
  /** D63: bot members too (for a people's event that subscribed bots may also receive) */
  withBots = false,
): Promise<ViewGroup[]> {
  if (only !== undefined && only.length === 0) return [];
  // Compiled once per shape (storage/raw-sql.ts): a send that mentions someone runs this.
  const n = only?.length ?? 0;
  const peopleQuery = (guild: number, ids: readonly number[]) => {
    let q = trx
      .selectFrom('members as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .select('m.user_id')
      .where('m.guild_id', '=', guild);
    if (!withBots) q = q.where('u.is_bot', '=', 0);
    if (ids.length > 0) q = q.where('m.user_id', 'in', [...ids]);
    return q.orderBy('m.user_id', 'asc');
  };
  let rolesQuery = trx
    .selectFrom('member_roles')
    .select(['user_id', 'role_id'])
    .where('guild_id', '=', guildId);
  if (only !== undefined) rolesQuery = rolesQuery.where('user_id', 'in', [...only]);
  // A message that mentions only bots (or people no longer members) names nobody: one read.
  const members = await builtOnce(
    trx,
    `view-members:${withBots ? 'all' : 'people'}:${n}`,
    () => peopleQuery(0, new Array<number>(n).fill(0)),
    withBots ? [guildId, ...(only ?? [])] : [guildId, 0, ...(only ?? [])],
  );
  if (members.length === 0) return [];
  const [guild, memberRoles] = await Promise.all([
    trx.selectFrom('guilds').select('owner_id').where('id', '=', guildId).executeTakeFirst(),
    rolesQuery.execute(),
  ]);
  if (!guild) return [];
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
 * D70 GUILD_UPDATE: the guild's own fields `{id, name, ownerId}` — never its channels (channel
 * changes are their own events) — to every member, after a rename or a change of owner. Sent
 * after `trx` commits.
 */
export async function emitGuildUpdate(trx: Db, d: Domain, guildId: number): Promise<void> {
  const g = await trx
    .selectFrom('guilds')
    .select(['id', 'name', 'owner_id'])
    .where('id', '=', guildId)
    .executeTakeFirst();
  if (!g) return;
  d.people.people(trx, {
    type: 'GUILD_UPDATE',
    data: { id: Number(g.id), name: g.name, ownerId: Number(g.owner_id) },
    audience: { kind: 'guild', guildId },
  });
}

/** D70: what each member sees of a guild — its channels and guild-level permissions — by user. */
export interface MemberView {
  channels: ReadonlyMap<number, Channel>;
  perms: number;
}
export type ViewSnapshot = Map<number, MemberView>;

/** The members' (or `only` these members') views now, to compare with after a change. */
export async function viewSnapshot(
  trx: Db,
  guildId: number,
  only?: readonly number[],
): Promise<ViewSnapshot> {
  const out: ViewSnapshot = new Map();
  for (const g of await viewGroups(trx, guildId, only)) {
    const entry = {
      channels: new Map(g.view.channels.map((c) => [c.id, c])),
      perms: g.view.myPermissions,
    };
    for (const u of g.userIds) out.set(u, entry);
  }
  return out;
}

/**
 * D70: after a change of roles, permissions or overwrites, what changed for each member (or each
 * of `only`) since `before`: CHANNEL_CREATE (Channel with topic) for each channel it can see now
 * and could not, CHANNEL_DELETE {id, guildId} for each it no longer can — so a channel's name and
 * topic reach only those who can see it, and nobody is sent the whole guild again. With
 * `permissions` (role changes), GUILD_UPDATE {id, name, ownerId, myPermissions} with the member's
 * own guild-level bits. Members with the same change share one event (a `users` audience).
 */
export async function emitViewChanges(
  trx: Db,
  d: Domain,
  guildId: number,
  before: ViewSnapshot,
  o: { only?: readonly number[]; permissions?: boolean } = {},
): Promise<void> {
  for (const g of await viewGroups(trx, guildId, o.only)) {
    if (o.permissions)
      d.people.people(trx, {
        type: 'GUILD_UPDATE',
        data: {
          id: g.view.id,
          name: g.view.name,
          ownerId: g.view.ownerId,
          myPermissions: g.view.myPermissions,
        },
        audience: { kind: 'users', userIds: g.userIds },
      });
    // Members of one group see the same now; they may have seen different things before.
    const byBefore = new Map<MemberView, number[]>();
    for (const u of g.userIds) {
      const was = before.get(u);
      if (!was) continue;
      const list = byBefore.get(was) ?? [];
      list.push(u);
      byBefore.set(was, list);
    }
    const now = new Map(g.view.channels.map((c) => [c.id, c]));
    for (const [was, userIds] of byBefore) {
      const audience = { kind: 'users', userIds } as const;
      for (const [id, c] of now)
        if (!was.channels.has(id))
          d.people.people(trx, { type: 'CHANNEL_CREATE', data: c, audience });
      for (const id of was.channels.keys())
        if (!now.has(id))
          d.people.people(trx, { type: 'CHANNEL_DELETE', data: { id, guildId }, audience });
    }
  }
}

/**
 * The guild's members who can VIEW the channel (as of `trx`): people, and with `withBots` bot
 * members too — a channel event's audience, so that bots subscribed to CHANNEL_* (D63) get it by
 * the same rule (people's sessions never hold a bot's id, so the people hub skips them).
 */
export async function channelViewers(
  trx: Db,
  guildId: number,
  channelId: number,
  withBots = false,
): Promise<number[]> {
  const ids: number[] = [];
  for (const g of await viewGroups(trx, guildId, undefined, withBots))
    if (g.view.channels.some((c) => c.id === channelId)) ids.push(...g.userIds);
  return ids.sort((a, b) => a - b);
}
