import {
  Permission,
  type CreateAppRoleBody,
  type MemberRoles,
  type PatchRoleBody,
  type ReorderRolesBody,
  type Role,
} from '@parley/protocol';
import { conflict, forbidden, invalid, notFound } from '../../errors/app-error.js';
import type { Db } from '../../storage/db.js';
import { diff, writeAudit } from '../audit/audit.service.js';
import type { Domain } from '../context.js';
import { checkRoles, memberTimeout, replaceMemberRoles } from '../members/members.service.js';
import { memberUserView } from '../views.js';
import type { Actor } from './actor.js';
import { emitViewChanges, viewSnapshot, type ViewSnapshot } from './audience.js';
import {
  loadRole,
  requireBitsHeld,
  requireMemberBelow,
  requirePositionBelow,
  requireRight,
  requireRoleBelow,
  requireRoleRight,
  type RoleRow,
} from './rights.js';

/**
 * D49/D57–D59 roles: one function per action for people, bots and the operator alike, each
 * checking MANAGE_ROLES and rank (D58) itself. `@everyone` (id = guild id, D11, position 0) is
 * listed and its permissions may be changed; it keeps its name and place and cannot be deleted.
 * Every change sends GUILD_ROLES_UPDATE {guildId, roles} (D51) and, because permissions decide
 * what members see, to each member its new guild-level permissions (GUILD_UPDATE) and the
 * channels it gained or lost (CHANNEL_CREATE / CHANNEL_DELETE, D70); and writes its audit entry
 * (D60) in the same transaction. A guild holds at most MAX_ROLES roles (D70: 409).
 */
export const MAX_ROLES = 250;

export const roleView = (r: RoleRow): Role => ({
  id: r.id,
  name: r.name,
  permissions: r.permissions,
  position: r.position,
  color: r.color,
  mentionable: r.mentionable,
});

/** A guild's roles in rank order (@everyone first), as D58 lists them. */
export async function rolesOf(trx: Db, guildId: number): Promise<Role[]> {
  const rows = await trx
    .selectFrom('roles')
    .select(['id', 'name', 'permissions', 'position', 'color', 'mentionable'])
    .where('guild_id', '=', guildId)
    .orderBy('position', 'asc')
    .orderBy('id', 'asc')
    .execute();
  return rows.map((r) => ({
    id: Number(r.id),
    name: r.name,
    permissions: r.permissions,
    position: Number(r.position),
    color: r.color === null ? null : Number(r.color),
    mentionable: Number(r.mentionable) === 1,
  }));
}

async function rolesChanged(
  trx: Db,
  d: Domain,
  guildId: number,
  before: ViewSnapshot | undefined,
): Promise<Role[]> {
  const roles = await rolesOf(trx, guildId);
  d.people.people(trx, {
    type: 'GUILD_ROLES_UPDATE',
    data: { guildId, roles },
    audience: { kind: 'guild', guildId },
  });
  if (before) await emitViewChanges(trx, d, guildId, before, { permissions: true });
  return roles;
}

/** D59 `GET /guilds/:guildId/roles` (members, bots included). */
export async function listRoles(d: Domain, actor: Actor, guildId: number): Promise<Role[]> {
  await requireRight(d, actor, guildId, 0);
  return rolesOf(d.db, guildId);
}

/**
 * Create a role (MANAGE_ROLES): it goes in at position 1, just above @everyone (the others move
 * up one), which must be below the creator's rank; its bits must be the creator's own (D58).
 */
export async function createRole(
  d: Domain,
  actor: Actor,
  guildId: number,
  body: CreateAppRoleBody,
): Promise<Role> {
  const s = await requireRight(d, actor, guildId, Permission.MANAGE_ROLES);
  // The new role lands just above @everyone and the creator's roles move up with the others: it
  // is below the creator exactly when the creator holds a role at all.
  if (!(s.rank > 0))
    throw forbidden(
      'A new role would not be below your highest role: you need a role of your own to create roles (D58)',
    );
  requireBitsHeld(s, body.permissions);
  const id = d.ids.next();
  const role: RoleRow = {
    id,
    guildId,
    name: body.name,
    permissions: body.permissions,
    position: 1,
    color: body.color ?? null,
    mentionable: body.mentionable ?? false,
  };
  await d.db.transaction().execute(async (trx) => {
    // D70: counted with the guild's row held (PostgreSQL), so two creates cannot both pass.
    if (d.dialect === 'postgres')
      await trx.selectFrom('guilds').select('id').where('id', '=', guildId).forUpdate().execute();
    const { n } = await trx
      .selectFrom('roles')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('guild_id', '=', guildId)
      .executeTakeFirstOrThrow();
    if (Number(n) >= MAX_ROLES) throw conflict(`A guild holds at most ${MAX_ROLES} roles`);
    await trx
      .updateTable('roles')
      .set((eb) => ({ position: eb('position', '+', 1) }))
      .where('guild_id', '=', guildId)
      .where('position', '>=', 1)
      .execute();
    await trx
      .insertInto('roles')
      .values({
        id,
        guild_id: guildId,
        name: role.name,
        permissions: role.permissions,
        position: 1,
        color: role.color,
        mentionable: role.mentionable ? 1 : 0,
        created_at: d.clock.now(),
      })
      .execute();
    await writeAudit(trx, d, actor, {
      guildId,
      action: 'ROLE_CREATE',
      targetId: id,
      changes: diff(
        {},
        {
          name: role.name,
          permissions: role.permissions,
          color: role.color,
          mentionable: role.mentionable,
        },
      ),
    });
    // A role nobody holds yet changes no one's view: only the role list is sent.
    await rolesChanged(trx, d, guildId, undefined);
  });
  return roleView(role);
}

/** Change a role (MANAGE_ROLES, below the actor's rank; @everyone: not its name). */
export async function patchRole(
  d: Domain,
  actor: Actor,
  roleId: number,
  body: PatchRoleBody,
): Promise<Role> {
  const { role, standing: s } = await requireRoleRight(d, actor, roleId, Permission.MANAGE_ROLES);
  requireRoleBelow(s, role);
  if (role.id === role.guildId && body.name !== undefined && body.name !== role.name)
    throw invalid('name', 'of @everyone cannot be changed');
  if (body.permissions !== undefined) requireBitsHeld(s, body.permissions & ~role.permissions);
  const next: RoleRow = {
    ...role,
    name: body.name ?? role.name,
    permissions: body.permissions ?? role.permissions,
    color: body.color === undefined ? role.color : body.color,
    mentionable: body.mentionable ?? role.mentionable,
  };
  await d.db.transaction().execute(async (trx) => {
    const before = await viewSnapshot(trx, role.guildId);
    const res = await trx
      .updateTable('roles')
      .set({
        name: next.name,
        permissions: next.permissions,
        color: next.color,
        mentionable: next.mentionable ? 1 : 0,
      })
      .where('id', '=', role.id)
      .executeTakeFirst();
    if (res.numUpdatedRows === 0n) throw notFound('role');
    await writeAudit(trx, d, actor, {
      guildId: role.guildId,
      action: 'ROLE_UPDATE',
      targetId: role.id,
      changes: diff(
        {
          name: role.name,
          permissions: role.permissions,
          color: role.color,
          mentionable: role.mentionable,
        },
        {
          name: next.name,
          permissions: next.permissions,
          color: next.color,
          mentionable: next.mentionable,
        },
      ),
    });
    await rolesChanged(trx, d, role.guildId, before);
  });
  return roleView(next);
}

/** The role leaves its members and every channel overwrite with it (below the actor's rank). */
export async function deleteRole(d: Domain, actor: Actor, roleId: number): Promise<void> {
  const { role, standing: s } = await requireRoleRight(d, actor, roleId, Permission.MANAGE_ROLES);
  if (role.id === role.guildId)
    throw invalid('roleId', 'is @everyone, which every member holds: it cannot be deleted');
  requireRoleBelow(s, role);
  await d.db.transaction().execute(async (trx) => {
    const before = await viewSnapshot(trx, role.guildId);
    await trx.deleteFrom('member_roles').where('role_id', '=', role.id).execute();
    await trx.deleteFrom('channel_overwrites').where('role_id', '=', role.id).execute();
    const res = await trx.deleteFrom('roles').where('id', '=', role.id).executeTakeFirst();
    if (res.numDeletedRows === 0n) throw notFound('role');
    await writeAudit(trx, d, actor, {
      guildId: role.guildId,
      action: 'ROLE_DELETE',
      targetId: role.id,
      changes: [{ key: 'name', old: role.name }],
    });
    await rolesChanged(trx, d, role.guildId, before);
  });
}

/**
 * D58 `PATCH /guilds/:guildId/roles [{id, position}]` → the roles in order. Each listed role
 * must be below the actor's rank and go to a position below it; @everyone keeps 0 (400). The
 * others keep their order; positions are then renumbered 1…n (ties: the listed role first).
 */
export async function reorderRoles(
  d: Domain,
  actor: Actor,
  guildId: number,
  body: ReorderRolesBody,
): Promise<Role[]> {
  const s = await requireRight(d, actor, guildId, Permission.MANAGE_ROLES);
  const ids = body.map((e) => e.id);
  if (new Set(ids).size !== ids.length) throw invalid('roles', 'lists a role more than once');
  if (ids.includes(guildId)) throw invalid('roles', 'include @everyone, which stays at 0');
  return d.db.transaction().execute(async (trx) => {
    if (d.dialect === 'postgres')
      await trx.selectFrom('guilds').select('id').where('id', '=', guildId).forUpdate().execute();
    const current = (await rolesOf(trx, guildId)).filter((r) => r.id !== guildId);
    const byId = new Map(current.map((r) => [r.id, r]));
    const wanted = new Map<number, number>();
    for (const e of body) {
      const r = byId.get(e.id);
      if (!r) throw notFound('role');
      requireRoleBelow(s, r);
      requirePositionBelow(s, e.position);
      wanted.set(r.id, e.position);
    }
    const order = current
      .map((r, i) => ({ r, key: wanted.get(r.id) ?? r.position, moved: wanted.has(r.id), i }))
      .sort((a, b) => a.key - b.key || Number(b.moved) - Number(a.moved) || a.i - b.i);
    const before = await viewSnapshot(trx, guildId);
    const changes = [];
    for (const [i, { r }] of order.entries()) {
      const position = i + 1;
      if (position === r.position) continue;
      await trx.updateTable('roles').set({ position }).where('id', '=', r.id).execute();
      changes.push({ key: `position:${r.id}`, old: r.position, new: position });
    }
    // The renumbering must not lift a role to (or above) the actor's rank.
    for (const [i, { r }] of order.entries()) if (wanted.has(r.id)) requirePositionBelow(s, i + 1);
    if (changes.length > 0)
      await writeAudit(trx, d, actor, {
        guildId,
        action: 'ROLE_UPDATE',
        targetId: guildId,
        changes,
      });
    return rolesChanged(trx, d, guildId, before);
  });
}

/**
 * D49 `PUT /guilds/:guildId/members/:userId/roles {roles}`: the member's roles become exactly
 * these (`@everyone` implicit, listing it is ignored; a role of another guild → 400). D58: the
 * member must be below the actor, and every role given or taken below the actor's rank.
 * GUILD_MEMBER_UPDATE to the guild (D51) and the member's new view to the member.
 */
export async function setMemberRoles(
  d: Domain,
  actor: Actor,
  guildId: number,
  userId: number,
  roles: readonly number[],
): Promise<MemberRoles> {
  const s = await requireRight(d, actor, guildId, Permission.MANAGE_ROLES);
  const wanted = (await checkRoles(d.db, guildId, [...roles])).sort((a, b) => a - b);
  return d.db.transaction().execute(async (trx) => {
    // Concurrent role changes of one member run one after the other (PostgreSQL: the member's
    // row is locked; SQLite writes are serial anyway), so the last one wins whole.
    let member = trx
      .selectFrom('members')
      .select(['user_id', 'timeout_until'])
      .where('guild_id', '=', guildId)
      .where('user_id', '=', userId);
    if (d.dialect === 'postgres') member = member.forUpdate();
    const row = await member.executeTakeFirst();
    if (!row) throw notFound('member');
    await requireMemberBelow(d, s, userId);
    const had = (
      await trx
        .selectFrom('member_roles')
        .select('role_id')
        .where('guild_id', '=', guildId)
        .where('user_id', '=', userId)
        .execute()
    ).map((r) => Number(r.role_id));
    const touched = [
      ...wanted.filter((r) => !had.includes(r)),
      ...had.filter((r) => !wanted.includes(r)),
    ];
    for (const id of touched) {
      const r = await loadRole(trx, id);
      if (r) requireRoleBelow(s, r);
    }
    const user = await trx
      .selectFrom('users')
      .select(['id', 'name', 'avatar', 'is_bot'])
      .where('id', '=', userId)
      .executeTakeFirstOrThrow();
    const before = await viewSnapshot(trx, guildId, [userId]);
    await replaceMemberRoles(trx, guildId, userId, wanted);
    const data: MemberRoles = {
      guildId,
      user: memberUserView(d.urls, user),
      roles: wanted,
      ...memberTimeout(d, row.timeout_until),
    };
    if (touched.length > 0)
      await writeAudit(trx, d, actor, {
        guildId,
        action: 'MEMBER_ROLE_UPDATE',
        targetId: userId,
        changes: [{ key: 'roles', old: had.sort((a, b) => a - b), new: wanted }],
      });
    d.people.people(trx, {
      type: 'GUILD_MEMBER_UPDATE',
      data,
      audience: { kind: 'guild', guildId },
    });
    await emitViewChanges(trx, d, guildId, before, { only: [userId], permissions: true });
    return data;
  });
}
