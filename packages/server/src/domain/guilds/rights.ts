import { AppError, forbidden, notFound } from '../../errors/app-error.js';
import type { Db } from '../../storage/db.js';
import type { Domain } from '../context.js';
import { memberAccess, requireGuild } from '../permissions/access.service.js';
import { bitNames, guildPermissions, has } from '../permissions/permissions.js';
import type { Actor } from './actor.js';

/**
 * D57–D59: the one check of guild administration. An action needs its bit at guild level
 * (ADMINISTRATOR grants every bit, the owner holds all); D58 adds rank: a member's rank is
 * their highest role's position, the owner (and the operator) outrank everyone, and one may act
 * only on roles and members below one's own rank. Order of answers as D12: unknown guild 404,
 * not a member 403, missing bit 403 naming it, rank 403 naming the reason.
 */
export interface Standing {
  readonly actor: Actor;
  readonly guildId: number;
  readonly ownerId: number;
  /** guild-level bits (every bit for the owner, ADMINISTRATOR and the operator) */
  readonly bits: number;
  /** D58: the highest role's position; Infinity for the owner and the operator */
  readonly rank: number;
}

/** D58: a member's rank (roles' highest position; 0 with @everyone alone). */
export async function memberRank(db: Db, guildId: number, userId: number): Promise<number> {
  const r = await db
    .selectFrom('member_roles as mr')
    .innerJoin('roles as r', 'r.id', 'mr.role_id')
    .select((eb) => eb.fn.max<number | string | null>('r.position').as('top'))
    .where('mr.guild_id', '=', guildId)
    .where('mr.user_id', '=', userId)
    .executeTakeFirst();
  return r?.top === null || r?.top === undefined ? 0 : Number(r.top);
}

/** The actor's standing in the guild, needing `bits` (0: membership only). */
export async function requireRight(
  d: Domain,
  actor: Actor,
  guildId: number,
  bits: number,
): Promise<Standing> {
  const guild = await requireGuild(d.db, guildId);
  const ownerId = Number(guild.owner_id);
  if (actor.kind === 'operator')
    return { actor, guildId, ownerId, bits: ~0 >>> 0, rank: Number.POSITIVE_INFINITY };
  const userId = actor.principal.userId;
  const access = await memberAccess(d, guildId, ownerId, userId);
  if (!access) throw forbidden('Not a member of this guild');
  const mine = guildPermissions(access);
  if (!has(mine, bits)) throw forbidden(`Missing permission: ${bitNames(bits & ~mine).join(', ')}`);
  const rank =
    ownerId === userId ? Number.POSITIVE_INFINITY : await memberRank(d.db, guildId, userId);
  return { actor, guildId, ownerId, bits: mine, rank };
}

/** A guild channel (404 unknown or a DM) and the actor's standing in its guild. */
export async function requireChannelRight(
  d: Domain,
  actor: Actor,
  channelId: number,
  bits: number,
): Promise<{
  channel: { id: number; guildId: number; type: number; name: string; topic: string };
  standing: Standing;
}> {
  const ch = await d.db
    .selectFrom('channels')
    .select(['id', 'guild_id', 'type', 'name', 'topic'])
    .where('id', '=', channelId)
    .executeTakeFirst();
  if (!ch || ch.guild_id === null) throw notFound('channel');
  const standing = await requireRight(d, actor, Number(ch.guild_id), bits);
  return {
    channel: {
      id: Number(ch.id),
      guildId: Number(ch.guild_id),
      type: ch.type,
      name: ch.name,
      topic: ch.topic,
    },
    standing,
  };
}

export interface RoleRow {
  id: number;
  guildId: number;
  name: string;
  permissions: number;
  position: number;
  color: number | null;
  mentionable: boolean;
}

export async function loadRole(db: Db, roleId: number): Promise<RoleRow | undefined> {
  const r = await db
    .selectFrom('roles')
    .select(['id', 'guild_id', 'name', 'permissions', 'position', 'color', 'mentionable'])
    .where('id', '=', roleId)
    .executeTakeFirst();
  if (!r) return undefined;
  return {
    id: Number(r.id),
    guildId: Number(r.guild_id),
    name: r.name,
    permissions: r.permissions,
    position: Number(r.position),
    color: r.color === null ? null : Number(r.color),
    mentionable: Number(r.mentionable) === 1,
  };
}

/** A role (404 unknown) and the actor's standing in its guild, needing `bits`. */
export async function requireRoleRight(
  d: Domain,
  actor: Actor,
  roleId: number,
  bits: number,
): Promise<{ role: RoleRow; standing: Standing }> {
  const role = await loadRole(d.db, roleId);
  if (!role) throw notFound('role');
  return { role, standing: await requireRight(d, actor, role.guildId, bits) };
}

/** D58: 403 unless the role is below the actor's rank. */
export function requireRoleBelow(s: Standing, role: { name: string; position: number }): void {
  if (!(role.position < s.rank))
    throw forbidden(
      `Role "${role.name}" is not below your highest role: you may act only on roles ranked below your own (D58)`,
    );
}

/** D58: 403 unless a position (where a role would go) is below the actor's rank. */
export function requirePositionBelow(s: Standing, position: number): void {
  if (!(position < s.rank))
    throw forbidden(
      `Position ${position} is not below your highest role: roles may be placed only below your own (D58)`,
    );
}

/**
 * D58: 403 unless the member is below the actor's rank. The owner is above everyone: with
 * `ownerConflict` (kick, ban, time out) acting on the owner is 409, as the owner leaving is
 * (the guild would have no owner); otherwise only the owner (and the operator) act on the owner.
 */
export async function requireMemberBelow(
  d: Domain,
  s: Standing,
  userId: number,
  ownerConflict?: string,
): Promise<void> {
  if (userId === s.ownerId) {
    if (ownerConflict !== undefined)
      throw new AppError('CONFLICT', `The owner cannot be ${ownerConflict}`);
    if (s.rank === Number.POSITIVE_INFINITY) return;
  }
  if (s.rank === Number.POSITIVE_INFINITY) return;
  const theirs = userId === s.ownerId ? s.rank : await memberRank(d.db, s.guildId, userId);
  if (!(theirs < s.rank))
    throw forbidden(
      'This member is not ranked below you: you may act only on members whose highest role is below yours (D58)',
    );
}

/** D58: a role's bits the actor does not hold themselves cannot be granted by them. */
export function requireBitsHeld(s: Standing, bits: number): void {
  const missing = bits & ~s.bits;
  if (missing !== 0)
    throw forbidden(
      `You cannot grant permissions you do not have: ${bitNames(missing).join(', ')}`,
    );
}
