import { Permission, type Ban, type MemberRoles } from '@parley/protocol';
import { AppError, forbidden, invalid, notFound } from '../../errors/app-error.js';
import { has } from '../permissions/permissions.js';
import { iso } from '../../ids/clock.js';
import { deleteMessage } from '../admin/purge.js';
import { writeAudit } from '../audit/audit.service.js';
import type { Domain } from '../context.js';
import type { Actor } from '../guilds/actor.js';
import { requireMemberBelow, requireRight } from '../guilds/rights.js';
import { memberTimeout, removeMemberIn } from '../members/members.service.js';
import { requireGuildChannel } from '../permissions/access.service.js';
import { memberUserView } from '../views.js';

/**
 * D49/D57–D59 moderation, one function per action for people, bots and the operator: kicks
 * (KICK_MEMBERS), bans (BAN_MEMBERS), time-outs (MODERATE_MEMBERS) and deleting others'
 * messages (MANAGE_MESSAGES), each only on members ranked below the actor (D58). The owner
 * cannot be kicked, banned or timed out: 409 CONFLICT, as the owner leaving is (D48). Removals
 * emit GUILD_MEMBER_REMOVE to the guild's bots, the removed one included (D34), and GUILD_DELETE
 * {id} to the removed person (D51). Each writes its audit entry in its transaction (D60).
 */
export async function kickMember(
  d: Domain,
  actor: Actor,
  guildId: number,
  userId: number,
): Promise<void> {
  const s = await requireRight(d, actor, guildId, Permission.KICK_MEMBERS);
  await requireMemberBelow(d, s, userId, 'removed from the guild');
  await d.db.transaction().execute(async (trx) => {
    await removeMemberIn(trx, d, guildId, userId);
    await writeAudit(trx, d, actor, { guildId, action: 'MEMBER_KICK', targetId: userId });
  });
}

/**
 * D49 `PUT /guilds/:guildId/bans/:userId` → 204: removes the member (when it is one) and refuses
 * its rejoining. Idempotent. Banning someone who is not a member (pre-emptively) is allowed for
 * people the caller knows — who share a guild or a DM with them; anyone else is 404 exactly like
 * an unknown id (D70: a ban, and the ban list's name and avatar, must not reveal a stranger).
 */
export async function banUser(
  d: Domain,
  actor: Actor,
  guildId: number,
  userId: number,
): Promise<void> {
  const s = await requireRight(d, actor, guildId, Permission.BAN_MEMBERS);
  if (userId === s.ownerId)
    throw new AppError('CONFLICT', 'The owner cannot be banned from the guild');
  const known =
    actor.kind === 'operator'
      ? (await d.db
          .selectFrom('users')
          .select('id')
          .where('id', '=', userId)
          .executeTakeFirst()) !== undefined
      : await knownTo(d, actor.principal.userId, guildId, userId);
  if (!known) throw notFound('user');
  await requireMemberBelow(d, s, userId, 'banned from the guild');
  await d.db.transaction().execute(async (trx) => {
    // PostgreSQL: hold the guild row, so a join under way (its member row shares the guild's
    // key) finishes first and is removed below, or starts after and sees the ban (invites).
    if (d.dialect === 'postgres')
      await trx.selectFrom('guilds').select('id').where('id', '=', guildId).forUpdate().execute();
    const added = await trx
      .insertInto('bans')
      .values({ guild_id: guildId, user_id: userId, created_at: d.clock.now() })
      .onConflict((oc) => oc.columns(['guild_id', 'user_id']).doNothing())
      .executeTakeFirst();
    const member = await trx
      .selectFrom('members')
      .select('user_id')
      .where('guild_id', '=', guildId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    if (member) await removeMemberIn(trx, d, guildId, userId);
    if (Number(added.numInsertedOrUpdatedRows ?? 0n) > 0 || member)
      await writeAudit(trx, d, actor, { guildId, action: 'MEMBER_BAN_ADD', targetId: userId });
  });
}

/**
 * D70: whether `userId` is someone the caller may name in `guildId`'s bans: a member of it, one
 * already banned from it, or someone sharing a guild or a DM with the caller (themselves
 * included). Unknown ids are not known either.
 */
async function knownTo(
  d: Domain,
  callerId: number,
  guildId: number,
  userId: number,
): Promise<boolean> {
  if (userId === callerId) return true;
  const [here, banned, shared, dm] = await Promise.all([
    d.db
      .selectFrom('members')
      .select('user_id')
      .where('guild_id', '=', guildId)
      .where('user_id', '=', userId)
      .executeTakeFirst(),
    d.db
      .selectFrom('bans')
      .select('user_id')
      .where('guild_id', '=', guildId)
      .where('user_id', '=', userId)
      .executeTakeFirst(),
    d.db
      .selectFrom('members as a')
      .innerJoin('members as b', 'b.guild_id', 'a.guild_id')
      .select('a.guild_id')
      .where('a.user_id', '=', callerId)
      .where('b.user_id', '=', userId)
      .limit(1)
      .executeTakeFirst(),
    d.db
      .selectFrom('channels')
      .select('id')
      .where('dm_user_low', '=', Math.min(callerId, userId))
      .where('dm_user_high', '=', Math.max(callerId, userId))
      .executeTakeFirst(),
  ]);
  return here !== undefined || banned !== undefined || shared !== undefined || dm !== undefined;
}

/** D49 `DELETE /guilds/:guildId/bans/:userId` → 204; 404 when the user is not banned. */
export async function unbanUser(
  d: Domain,
  actor: Actor,
  guildId: number,
  userId: number,
): Promise<void> {
  await requireRight(d, actor, guildId, Permission.BAN_MEMBERS);
  await d.db.transaction().execute(async (trx) => {
    const res = await trx
      .deleteFrom('bans')
      .where('guild_id', '=', guildId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    if (res.numDeletedRows === 0n) throw notFound('ban');
    await writeAudit(trx, d, actor, { guildId, action: 'MEMBER_BAN_REMOVE', targetId: userId });
  });
}

/** D49 `GET /guilds/:guildId/bans` → `{bans:[{user, createdAt}]}`, by user id ascending. */
export async function listBans(d: Domain, actor: Actor, guildId: number): Promise<Ban[]> {
  await requireRight(d, actor, guildId, Permission.BAN_MEMBERS);
  const rows = await d.db
    .selectFrom('bans as b')
    .innerJoin('users as u', 'u.id', 'b.user_id')
    .select(['u.id', 'u.name', 'u.avatar', 'u.is_bot', 'b.created_at'])
    .where('b.guild_id', '=', guildId)
    .orderBy('u.id', 'asc')
    .execute();
  return rows.map((r) => ({ user: memberUserView(d.urls, r), createdAt: iso(r.created_at) }));
}

/** D58: a time-out lasts at most 28 days. */
export const MAX_TIMEOUT_MS = 28 * 86_400_000;

/**
 * D58 `PATCH /guilds/:guildId/members/:userId {timeoutUntil}` (MODERATE_MEMBERS, a member below
 * the actor): until then the member can only read (sending, reacting, typing and commands are
 * 403 TIMED_OUT). null (or a time already past) ends it. GUILD_MEMBER_UPDATE to the guild.
 */
export async function timeoutMember(
  d: Domain,
  actor: Actor,
  guildId: number,
  userId: number,
  timeoutUntil: string | null,
): Promise<MemberRoles> {
  const s = await requireRight(d, actor, guildId, Permission.MODERATE_MEMBERS);
  const now = d.clock.now();
  let until: number | null = null;
  if (timeoutUntil !== null) {
    until = Date.parse(timeoutUntil);
    if (!Number.isFinite(until)) throw invalid('timeoutUntil', 'must be an ISO 8601 time');
    if (until - now > MAX_TIMEOUT_MS)
      throw invalid('timeoutUntil', 'may be at most 28 days ahead (D58)');
    if (until <= now) until = null;
  }
  await requireMemberBelow(d, s, userId, 'timed out');
  return d.db.transaction().execute(async (trx) => {
    const row = await trx
      .selectFrom('members as m')
      .innerJoin('users as u', 'u.id', 'm.user_id')
      .select(['u.id', 'u.name', 'u.avatar', 'u.is_bot', 'm.timeout_until'])
      .where('m.guild_id', '=', guildId)
      .where('m.user_id', '=', userId)
      .executeTakeFirst();
    if (!row) throw notFound('member');
    await trx
      .updateTable('members')
      .set({ timeout_until: until })
      .where('guild_id', '=', guildId)
      .where('user_id', '=', userId)
      .execute();
    const roles = await trx
      .selectFrom('member_roles')
      .select('role_id')
      .where('guild_id', '=', guildId)
      .where('user_id', '=', userId)
      .orderBy('role_id', 'asc')
      .execute();
    const old = memberTimeout(d, row.timeout_until).timeoutUntil ?? null;
    await writeAudit(trx, d, actor, {
      guildId,
      action: 'MEMBER_TIMEOUT',
      targetId: userId,
      changes: [{ key: 'timeoutUntil', old, new: until === null ? null : iso(until) }],
    });
    const data: MemberRoles = {
      guildId,
      user: memberUserView(d.urls, row),
      roles: roles.map((r) => Number(r.role_id)),
      ...memberTimeout(d, until),
    };
    d.people.people(trx, {
      type: 'GUILD_MEMBER_UPDATE',
      data,
      audience: { kind: 'guild', guildId },
    });
    return data;
  });
}

/**
 * D59 the one message delete of a guild channel: the author's own (D13: no bit needed beyond
 * seeing the channel) or, with MANAGE_MESSAGES in that channel, anyone's — then it is a
 * moderation delete with its audit entry (D60). The operator deletes any message. MESSAGE_DELETE
 * as for the author's own (D34/D35). A message of another channel → 404.
 */
export async function deleteGuildMessage(
  d: Domain,
  actor: Actor,
  channelId: number,
  messageId: number,
): Promise<void> {
  if (actor.kind !== 'operator') {
    const ch = await requireGuildChannel(d, actor.principal, channelId, 0);
    const m = await d.db
      .selectFrom('messages')
      .select('author_id')
      .where('id', '=', messageId)
      .where('channel_id', '=', ch.id)
      .executeTakeFirst();
    if (!m) throw notFound('message');
    if (Number(m.author_id) === actor.principal.userId) {
      await deleteMessage(d, ch.id, messageId);
      return;
    }
    // D13: without MANAGE_MESSAGES in this channel, only the author deletes.
    if (!has(ch.bits, Permission.MANAGE_MESSAGES))
      throw forbidden("Only the author may delete this message (others' need MANAGE_MESSAGES)");
  }
  await deleteMessage(d, channelId, messageId, async (trx, m) => {
    if (m.guild_id === null) return; // the operator's DM deletes are in its own log only
    await writeAudit(trx, d, actor, {
      guildId: Number(m.guild_id),
      action: 'MESSAGE_DELETE',
      targetId: Number(m.author_id),
      changes: [
        { key: 'messageId', old: m.id },
        { key: 'channelId', old: channelId },
      ],
    });
  });
}
