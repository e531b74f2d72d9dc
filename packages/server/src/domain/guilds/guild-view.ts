import { Permission, type AppGuild } from '@parley/protocol';
import type { Db } from '../../storage/db.js';
import {
  channelPermissions,
  guildPermissions,
  has,
  type MemberAccess,
} from '../permissions/permissions.js';
import { channelView } from '../views.js';

/**
 * D49/D51: a guild as one of its members sees it — `GET /app/v1/guilds/:guildId`, GUILD_CREATE,
 * GUILD_UPDATE and each entry of a person's READY. Channels the member cannot VIEW are left out
 * (as D12 does for bots); `@everyone` is listed among the roles (id = guild id) so an
 * administrator can edit it. Returns undefined when the guild does not exist or `userId` is not
 * a member. Reads through `db` (a transaction's handle inside a write, so the view is the one
 * that commits).
 */
export async function guildView(
  db: Db,
  guildId: number,
  userId: number,
): Promise<AppGuild | undefined> {
  const guild = await db
    .selectFrom('guilds')
    .select(['id', 'name', 'owner_id'])
    .where('id', '=', guildId)
    .executeTakeFirst();
  if (!guild) return undefined;
  const [member, roles, mine, channels, overwrites, bots] = await Promise.all([
    db
      .selectFrom('members')
      .select('user_id')
      .where('guild_id', '=', guildId)
      .where('user_id', '=', userId)
      .executeTakeFirst(),
    // D58: in rank order, @everyone (position 0) first
    db
      .selectFrom('roles')
      .select(['id', 'name', 'permissions', 'position', 'color', 'mentionable'])
      .where('guild_id', '=', guildId)
      .orderBy('position', 'asc')
      .orderBy('id', 'asc')
      .execute(),
    db
      .selectFrom('member_roles')
      .select('role_id')
      .where('guild_id', '=', guildId)
      .where('user_id', '=', userId)
      .execute(),
    db
      .selectFrom('channels')
      .select(['id', 'guild_id', 'type', 'name', 'topic'])
      .where('guild_id', '=', guildId)
      .orderBy('id', 'asc')
      .execute(),
    db
      .selectFrom('channel_overwrites as o')
      .innerJoin('channels as c', 'c.id', 'o.channel_id')
      .select(['o.channel_id', 'o.role_id as roleId', 'o.allow', 'o.deny'])
      .where('c.guild_id', '=', guildId)
      .execute(),
    // From the bots (few) to their membership here, not through every member: a READY or a
    // GUILD_CREATE in a guild of 10,000 people must not walk 10,000 rows (people-fanout bench).
    db
      .selectFrom('bots as b')
      .innerJoin('members as m', (j) =>
        j.onRef('m.user_id', '=', 'b.user_id').on('m.guild_id', '=', guildId),
      )
      .select('b.user_id')
      .orderBy('b.user_id', 'asc')
      .execute(),
  ]);
  if (!member) return undefined;
  const myRoleIds = new Set(mine.map((r) => Number(r.role_id)));
  const access: MemberAccess = {
    isOwner: Number(guild.owner_id) === userId,
    everyone: roles.find((r) => Number(r.id) === guildId)?.permissions ?? 0,
    roles: roles
      .filter((r) => myRoleIds.has(Number(r.id)))
      .map((r) => ({ id: Number(r.id), permissions: r.permissions })),
  };
  const byChannel = new Map<number, Array<{ roleId: number; allow: number; deny: number }>>();
  for (const o of overwrites) {
    const list = byChannel.get(Number(o.channel_id)) ?? [];
    list.push({ roleId: Number(o.roleId), allow: o.allow, deny: o.deny });
    byChannel.set(Number(o.channel_id), list);
  }
  return {
    id: Number(guild.id),
    name: guild.name,
    ownerId: Number(guild.owner_id),
    roles: roles.map((r) => ({
      id: Number(r.id),
      name: r.name,
      permissions: r.permissions,
      position: Number(r.position),
      color: r.color === null ? null : Number(r.color),
      mentionable: Number(r.mentionable) === 1,
    })),
    channels: channels
      .filter((c) =>
        has(
          channelPermissions(access, guildId, byChannel.get(Number(c.id)) ?? []),
          Permission.VIEW_CHANNEL,
        ),
      )
      .map((c) =>
        channelView({
          id: Number(c.id),
          guild_id: guildId,
          type: c.type,
          name: c.name,
          topic: c.topic,
        }),
      ),
    bots: bots.map((b) => Number(b.user_id)),
    myPermissions: guildPermissions(access),
  };
}
