import type { Member, MemberSummary, PutMemberBody } from '@parley/protocol';
import { notFound, AppError } from '../../errors/app-error.js';
import { iso } from '../../ids/clock.js';
import type { Db } from '../../storage/db.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { guildView } from '../guilds/guild-view.js';
import { requireGuildMember, requireGuild } from '../permissions/access.service.js';
import { memberUserView, memberView } from '../views.js';

/**
 * D20: members sorted by user id ascending; `after` is a user id. D56/D58: with `withRoles`, each
 * entry gains its role ids (ascending) and, while it runs, `timeoutUntil` (one more query for
 * the page, not one per member).
 */
export async function listMembers(
  d: Domain,
  p: Principal,
  guildId: number,
  q: { after?: number | undefined; limit: number; withRoles?: boolean },
): Promise<{ members: MemberSummary[]; hasMore: boolean }> {
  await requireGuildMember(d, p, guildId);
  let query = d.db
    .selectFrom('members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id', 'u.name', 'u.avatar', 'u.is_bot', 'm.joined_at', 'm.timeout_until'])
    .where('m.guild_id', '=', guildId);
  if (q.after !== undefined) query = query.where('m.user_id', '>', q.after);
  const found = await query
    .orderBy('m.user_id', 'asc')
    .limit(q.limit + 1)
    .execute();
  const rows = found.slice(0, q.limit);
  const roles = new Map<number, number[]>();
  if (q.withRoles === true && rows.length > 0) {
    const ids = rows.map((r) => Number(r.id));
    const held = await d.db
      .selectFrom('member_roles')
      .select(['user_id', 'role_id'])
      .where('guild_id', '=', guildId)
      .where('user_id', '>=', ids[0] as number)
      .where('user_id', '<=', ids[ids.length - 1] as number)
      .orderBy('role_id', 'asc')
      .execute();
    for (const h of held) {
      const list = roles.get(Number(h.user_id)) ?? [];
      list.push(Number(h.role_id));
      roles.set(Number(h.user_id), list);
    }
  }
  return {
    members: rows.map((r) => ({
      user: memberUserView(d.urls, r),
      joinedAt: iso(r.joined_at),
      ...(q.withRoles === true
        ? { roles: roles.get(Number(r.id)) ?? [], ...memberTimeout(d, r.timeout_until) }
        : {}),
    })),
    hasMore: found.length > q.limit,
  };
}

async function loadMember(
  db: Db,
  d: Domain,
  guildId: number,
  userId: number,
): Promise<Member | undefined> {
  const row = await db
    .selectFrom('members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id', 'u.name', 'u.avatar', 'u.is_bot', 'm.joined_at', 'm.timeout_until'])
    .where('m.guild_id', '=', guildId)
    .where('m.user_id', '=', userId)
    .executeTakeFirst();
  if (!row) return undefined;
  const roles = await db
    .selectFrom('member_roles')
    .select('role_id')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .orderBy('role_id', 'asc')
    .execute();
  // D20: @everyone is never listed (it is never stored in member_roles).
  return {
    ...memberView(
      d.urls,
      row,
      roles.map((r) => r.role_id),
      row.joined_at,
    ),
    ...memberTimeout(d, row.timeout_until),
  };
}

/** D58/D56: `timeoutUntil` only while a time-out is in effect. */
export function memberTimeout(
  d: Pick<Domain, 'clock'>,
  until: number | string | null | undefined,
): { timeoutUntil?: string } {
  if (until === null || until === undefined) return {};
  const ms = Number(until);
  return ms > d.clock.now() ? { timeoutUntil: iso(ms) } : {};
}

export async function getMember(
  d: Domain,
  p: Principal,
  guildId: number,
  userId: number,
): Promise<Member> {
  await requireGuildMember(d, p, guildId);
  const m = await loadMember(d.db, d, guildId, userId);
  if (!m) throw notFound('member');
  return m;
}

// Operator side (D41), and the people's joins and leaves (D46, D48–D50).

/** Roles given for a member: @everyone is implicit (listing it is allowed and ignored). */
export async function checkRoles(
  db: Db,
  guildId: number,
  roles: number[] | undefined,
): Promise<number[]> {
  const wanted = (roles ?? []).filter((r) => r !== guildId);
  if (wanted.length === 0) return wanted;
  const found = await db
    .selectFrom('roles')
    .select('id')
    .where('guild_id', '=', guildId)
    .where('id', 'in', wanted)
    .execute();
  const ok = new Set(found.map((r) => r.id));
  const bad = wanted.filter((r) => !ok.has(r));
  if (bad.length > 0)
    throw new AppError('VALIDATION_ERROR', `Unknown role id(s) in this guild: ${bad.join(', ')}`, {
      details: bad.map((r) => ({
        field: 'roles',
        problem: `role ${r} is not a role of this guild`,
      })),
    });
  return wanted;
}

/** Add a member (GUILD_MEMBER_ADD) or replace its roles. `created` tells which happened. */
export async function putMember(
  d: Domain,
  guildId: number,
  userId: number,
  body: PutMemberBody,
): Promise<{ member: Member; created: boolean }> {
  await requireGuild(d.db, guildId);
  const user = await d.db
    .selectFrom('users')
    .select('id')
    .where('id', '=', userId)
    .executeTakeFirst();
  if (!user) throw notFound('user');
  const wanted = await checkRoles(d.db, guildId, body.roles);
  return d.db
    .transaction()
    .execute((trx) => putMemberIn(trx, d, guildId, userId, body.roles, wanted));
}

/**
 * Inside the caller's transaction: `userId` (an existing user) joins `guildId` (an existing
 * guild) with no roles, unless already a member. GUILD_MEMBER_ADD for bots (D34) and people, and
 * GUILD_CREATE to a person who joined (D51). Register with an invite and accepting one use it.
 */
export async function joinGuild(
  trx: Db,
  d: Domain,
  guildId: number,
  userId: number,
): Promise<{ member: Member; created: boolean }> {
  return putMemberIn(trx, d, guildId, userId, undefined, []);
}

async function putMemberIn(
  trx: Db,
  d: Domain,
  guildId: number,
  userId: number,
  given: number[] | undefined,
  wanted: number[],
): Promise<{ member: Member; created: boolean }> {
  const existing = await trx
    .selectFrom('members')
    .select('joined_at')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  let created = !existing;
  if (created) {
    const inserted = await trx
      .insertInto('members')
      .values({ guild_id: guildId, user_id: userId, joined_at: d.clock.now() })
      .onConflict((oc) => oc.columns(['guild_id', 'user_id']).doNothing())
      .executeTakeFirst();
    // A concurrent PUT joined first: this one only sets roles.
    if (inserted.numInsertedOrUpdatedRows === 0n) created = false;
  }
  return putMemberRoles(trx, d, guildId, userId, given, wanted, created);
}

async function putMemberRoles(
  trx: Db,
  d: Domain,
  guildId: number,
  userId: number,
  given: number[] | undefined,
  wanted: number[],
  created: boolean,
): Promise<{ member: Member; created: boolean }> {
  if (given !== undefined || created) await replaceMemberRoles(trx, guildId, userId, wanted);
  const member = await loadMember(trx, d, guildId, userId);
  if (!member) throw notFound('member');
  if (created) {
    await d.events.record(trx, {
      envelope: { type: 'GUILD_MEMBER_ADD', data: { guildId, ...member } },
      scope: { kind: 'guild', guildId },
    });
    // D51: a person who joins gets the whole guild (bots never get GUILD_CREATE).
    const view = await guildView(trx, guildId, userId);
    const isBot = await trx
      .selectFrom('users')
      .select('is_bot')
      .where('id', '=', userId)
      .executeTakeFirst();
    if (view && isBot?.is_bot === 0)
      d.people.people(trx, {
        type: 'GUILD_CREATE',
        data: view,
        audience: { kind: 'users', userIds: [userId] },
      });
  }
  return { member, created };
}

/** Inside the caller's transaction: the member's roles become exactly `wanted` (checked). */
export async function replaceMemberRoles(
  trx: Db,
  guildId: number,
  userId: number,
  wanted: readonly number[],
): Promise<void> {
  await trx
    .deleteFrom('member_roles')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .execute();
  if (wanted.length > 0)
    await trx
      .insertInto('member_roles')
      .values(wanted.map((role_id) => ({ guild_id: guildId, user_id: userId, role_id })))
      .execute();
}

/** Remove a member (GUILD_MEMBER_REMOVE, which also reaches the removed bot: D34). */
export async function removeMember(d: Domain, guildId: number, userId: number): Promise<void> {
  await requireGuild(d.db, guildId);
  await d.db.transaction().execute((trx) => removeMemberIn(trx, d, guildId, userId));
}

/**
 * Inside the caller's transaction: `userId` leaves `guildId` (404 when not a member).
 * GUILD_MEMBER_REMOVE to the guild, the removed member included (D34, D51), and GUILD_DELETE
 * {id} to a removed person (D51: their live view of the guild ends).
 */
export async function removeMemberIn(
  trx: Db,
  d: Domain,
  guildId: number,
  userId: number,
): Promise<void> {
  const user = await trx
    .selectFrom('members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id', 'u.name', 'u.avatar', 'u.is_bot'])
    .where('m.guild_id', '=', guildId)
    .where('m.user_id', '=', userId)
    .executeTakeFirst();
  if (!user) throw notFound('member');
  // Recipients are decided while the member is still in the guild, so it gets its own removal.
  await d.events.record(trx, {
    envelope: {
      type: 'GUILD_MEMBER_REMOVE',
      data: { guildId, user: memberUserView(d.urls, user) },
    },
    scope: { kind: 'guild', guildId, alsoUserId: userId },
  });
  if (!user.is_bot)
    d.people.people(trx, {
      type: 'GUILD_DELETE',
      data: { id: guildId },
      audience: { kind: 'users', userIds: [userId] },
    });
  await trx
    .deleteFrom('member_roles')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .execute();
  await trx
    .deleteFrom('members')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .execute();
  // D66: their unread mentions there go with them (a rejoin starts with no badge), and so do
  // their notification settings of the guild and its channels.
  const channels = trx.selectFrom('channels').select('id').where('guild_id', '=', guildId);
  await trx
    .deleteFrom('unread_mentions')
    .where('user_id', '=', userId)
    .where('channel_id', 'in', channels)
    .execute();
  await trx
    .deleteFrom('notification_settings')
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('target_id', '=', guildId), eb('target_id', 'in', channels)]))
    .execute();
}
