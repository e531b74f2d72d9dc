import type { CreateAppRoleBody, MemberRoles, PatchRoleBody, Role } from '@parley/protocol';
import { conflict, invalid, notFound } from '../../errors/app-error.js';
import type { Db } from '../../storage/db.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { checkRoles, replaceMemberRoles } from '../members/members.service.js';
import { memberUserView } from '../views.js';
import { requireGuildAdmin, requireRoleAdmin } from './admin-access.js';
import { emitViewChanges, viewSnapshot, type ViewSnapshot } from './audience.js';

/**
 * D49 roles for guild administrators. `@everyone` (id = guild id, D11) is listed and its
 * permissions may be changed; it keeps its name and cannot be deleted (400: every member holds
 * it implicitly). Every change sends GUILD_ROLES_UPDATE {guildId, roles} (D51) and, because
 * permissions decide what members see, to each member its new guild-level permissions
 * (GUILD_UPDATE) and the channels it gained or lost (CHANNEL_CREATE / CHANNEL_DELETE, D70).
 * A guild holds at most MAX_ROLES roles, @everyone included (D70: 409).
 */
export const MAX_ROLES = 250;

async function rolesOf(trx: Db, guildId: number): Promise<Role[]> {
  const rows = await trx
    .selectFrom('roles')
    .select(['id', 'name', 'permissions'])
    .where('guild_id', '=', guildId)
    .orderBy('id', 'asc')
    .execute();
  return rows.map((r) => ({ id: Number(r.id), name: r.name, permissions: r.permissions }));
}

async function rolesChanged(
  trx: Db,
  d: Domain,
  guildId: number,
  before: ViewSnapshot,
): Promise<void> {
  d.people.people(trx, {
    type: 'GUILD_ROLES_UPDATE',
    data: { guildId, roles: await rolesOf(trx, guildId) },
    audience: { kind: 'guild', guildId },
  });
  await emitViewChanges(trx, d, guildId, before, { permissions: true });
}

export async function createAppRole(
  d: Domain,
  p: Principal,
  guildId: number,
  body: CreateAppRoleBody,
): Promise<Role> {
  await requireGuildAdmin(d, p, guildId);
  return insertRole(d, guildId, body);
}

/**
 * The one role creation (D49 people's route, D52 operator's; the caller checks the guild and
 * the right): the row, then GUILD_ROLES_UPDATE to the guild's people (D51).
 */
export async function insertRole(
  d: Domain,
  guildId: number,
  body: { name: string; permissions: number },
): Promise<Role> {
  const id = d.ids.next();
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
      .insertInto('roles')
      .values({
        id,
        guild_id: guildId,
        name: body.name,
        permissions: body.permissions,
        created_at: d.clock.now(),
      })
      .execute();
    // A role nobody holds yet changes no one's view: only the role list is sent.
    d.people.people(trx, {
      type: 'GUILD_ROLES_UPDATE',
      data: { guildId, roles: await rolesOf(trx, guildId) },
      audience: { kind: 'guild', guildId },
    });
  });
  return { id, name: body.name, permissions: body.permissions };
}

export async function patchRole(
  d: Domain,
  p: Principal,
  roleId: number,
  body: PatchRoleBody,
): Promise<Role> {
  const role = await requireRoleAdmin(d, p, roleId);
  if (role.id === role.guildId && body.name !== undefined && body.name !== role.name)
    throw invalid('name', 'of @everyone cannot be changed');
  const next = {
    name: body.name ?? role.name,
    permissions: body.permissions ?? role.permissions,
  };
  await d.db.transaction().execute(async (trx) => {
    const before = await viewSnapshot(trx, role.guildId);
    const res = await trx
      .updateTable('roles')
      .set(next)
      .where('id', '=', role.id)
      .executeTakeFirst();
    if (res.numUpdatedRows === 0n) throw notFound('role');
    await rolesChanged(trx, d, role.guildId, before);
  });
  return { id: role.id, ...next };
}

/** D49: the role leaves its members and every channel overwrite with it. */
export async function deleteRole(d: Domain, p: Principal, roleId: number): Promise<void> {
  const role = await requireRoleAdmin(d, p, roleId);
  if (role.id === role.guildId)
    throw invalid('roleId', 'is @everyone, which every member holds: it cannot be deleted');
  await d.db.transaction().execute(async (trx) => {
    const before = await viewSnapshot(trx, role.guildId);
    await trx.deleteFrom('member_roles').where('role_id', '=', role.id).execute();
    await trx.deleteFrom('channel_overwrites').where('role_id', '=', role.id).execute();
    const res = await trx.deleteFrom('roles').where('id', '=', role.id).executeTakeFirst();
    if (res.numDeletedRows === 0n) throw notFound('role');
    await rolesChanged(trx, d, role.guildId, before);
  });
}

/**
 * D49 `PUT /guilds/:guildId/members/:userId/roles {roles}`: the member's roles become exactly
 * these (`@everyone` implicit, listing it is ignored; a role of another guild → 400).
 * GUILD_MEMBER_UPDATE to the guild (D51) and the member's new view to the member.
 */
export async function setMemberRoles(
  d: Domain,
  p: Principal,
  guildId: number,
  userId: number,
  roles: readonly number[],
): Promise<MemberRoles> {
  await requireGuildAdmin(d, p, guildId);
  const wanted = (await checkRoles(d.db, guildId, [...roles])).sort((a, b) => a - b);
  return d.db.transaction().execute(async (trx) => {
    // Concurrent role changes of one member run one after the other (PostgreSQL: the member's
    // row is locked; SQLite writes are serial anyway), so the last one wins whole.
    let member = trx
      .selectFrom('members')
      .select('user_id')
      .where('guild_id', '=', guildId)
      .where('user_id', '=', userId);
    if (d.dialect === 'postgres') member = member.forUpdate();
    if (!(await member.executeTakeFirst())) throw notFound('member');
    const user = await trx
      .selectFrom('users')
      .select(['id', 'name', 'avatar'])
      .where('id', '=', userId)
      .executeTakeFirstOrThrow();
    const before = await viewSnapshot(trx, guildId, [userId]);
    await replaceMemberRoles(trx, guildId, userId, wanted);
    const data: MemberRoles = { guildId, user: memberUserView(d.urls, user), roles: wanted };
    d.people.people(trx, {
      type: 'GUILD_MEMBER_UPDATE',
      data,
      audience: { kind: 'guild', guildId },
    });
    await emitViewChanges(trx, d, guildId, before, { only: [userId], permissions: true });
    return data;
  });
}
