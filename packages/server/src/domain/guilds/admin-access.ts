import { Permission } from '@parley/protocol';
import { forbidden, notFound } from '../../errors/app-error.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { requireGuildMember } from '../permissions/access.service.js';
import { guildPermissions, has, type MemberAccess } from '../permissions/permissions.js';

/**
 * D49: guild administration needs ADMINISTRATOR at guild level (the owner always has it).
 * Order of answers as D12: unknown guild 404, not a member 403, not an administrator 403.
 */
export async function requireGuildAdmin(
  d: Domain,
  p: Principal,
  guildId: number,
): Promise<{ guildId: number; ownerId: number; access: MemberAccess }> {
  const g = await requireGuildMember(d, p, guildId);
  if (!has(guildPermissions(g.access), Permission.ADMINISTRATOR))
    throw forbidden('Missing permission: ADMINISTRATOR');
  return g;
}

export interface AdminChannel {
  id: number;
  guildId: number;
  ownerId: number;
  type: number;
  name: string;
  topic: string;
}

/** D49: a guild channel whose guild the caller administers (404 unknown or a DM channel). */
export async function requireChannelAdmin(
  d: Domain,
  p: Principal,
  channelId: number,
): Promise<AdminChannel> {
  const ch = await d.db
    .selectFrom('channels')
    .select(['id', 'guild_id', 'type', 'name', 'topic'])
    .where('id', '=', channelId)
    .executeTakeFirst();
  if (!ch || ch.guild_id === null) throw notFound('channel');
  const g = await requireGuildAdmin(d, p, ch.guild_id);
  return {
    id: ch.id,
    guildId: g.guildId,
    ownerId: g.ownerId,
    type: ch.type,
    name: ch.name,
    topic: ch.topic,
  };
}

/** D49: a role whose guild the caller administers (404 unknown). */
export async function requireRoleAdmin(
  d: Domain,
  p: Principal,
  roleId: number,
): Promise<{ id: number; guildId: number; name: string; permissions: number }> {
  const role = await d.db
    .selectFrom('roles')
    .select(['id', 'guild_id', 'name', 'permissions'])
    .where('id', '=', roleId)
    .executeTakeFirst();
  if (!role) throw notFound('role');
  await requireGuildAdmin(d, p, role.guild_id);
  return { id: role.id, guildId: role.guild_id, name: role.name, permissions: role.permissions };
}
