import type { Ban } from '@parley/protocol';
import { conflict, notFound } from '../../errors/app-error.js';
import { iso } from '../../ids/clock.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { requireChannelAdmin, requireGuildAdmin } from '../guilds/admin-access.js';
import { removeMemberIn } from '../members/members.service.js';
import { moderateGuildMessage } from '../messages/messages.service.js';
import { memberUserView } from '../views.js';

/**
 * D49 moderation, for guild administrators: kicks, bans and deleting anyone's message.
 * The owner cannot be kicked or banned: 409 CONFLICT, as the owner leaving is (D48) — the guild
 * would have no owner. Removals emit GUILD_MEMBER_REMOVE to the guild's bots, the removed one
 * included (D34), and GUILD_DELETE {id} to the removed person (D51).
 */
export async function kickMember(
  d: Domain,
  p: Principal,
  guildId: number,
  userId: number,
): Promise<void> {
  const g = await requireGuildAdmin(d, p, guildId);
  if (userId === g.ownerId) throw conflict('The owner cannot be removed from the guild');
  await d.db.transaction().execute((trx) => removeMemberIn(trx, d, guildId, userId));
}

/**
 * D49 `PUT /guilds/:guildId/bans/:userId` → 204: removes the member (when it is one) and refuses
 * its rejoining. Idempotent. Banning someone who is not a member (pre-emptively) is allowed for
 * people the caller knows — who share a guild or a DM with them; anyone else is 404 exactly like
 * an unknown id (D70: a ban, and the ban list's name and avatar, must not reveal a stranger).
 */
export async function banUser(
  d: Domain,
  p: Principal,
  guildId: number,
  userId: number,
): Promise<void> {
  const g = await requireGuildAdmin(d, p, guildId);
  if (userId === g.ownerId) throw conflict('The owner cannot be banned from the guild');
  if (!(await knownTo(d, p.userId, guildId, userId))) throw notFound('user');
  await d.db.transaction().execute(async (trx) => {
    // PostgreSQL: hold the guild row, so a join under way (its member row shares the guild's
    // key) finishes first and is removed below, or starts after and sees the ban (invites).
    if (d.dialect === 'postgres')
      await trx.selectFrom('guilds').select('id').where('id', '=', guildId).forUpdate().execute();
    await trx
      .insertInto('bans')
      .values({ guild_id: guildId, user_id: userId, created_at: d.clock.now() })
      .onConflict((oc) => oc.columns(['guild_id', 'user_id']).doNothing())
      .execute();
    const member = await trx
      .selectFrom('members')
      .select('user_id')
      .where('guild_id', '=', guildId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    if (member) await removeMemberIn(trx, d, guildId, userId);
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
  p: Principal,
  guildId: number,
  userId: number,
): Promise<void> {
  await requireGuildAdmin(d, p, guildId);
  const res = await d.db
    .deleteFrom('bans')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (res.numDeletedRows === 0n) throw notFound('ban');
}

/** D49 `GET /guilds/:guildId/bans` → `{bans:[{user, createdAt}]}`, by user id ascending. */
export async function listBans(d: Domain, p: Principal, guildId: number): Promise<Ban[]> {
  await requireGuildAdmin(d, p, guildId);
  const rows = await d.db
    .selectFrom('bans as b')
    .innerJoin('users as u', 'u.id', 'b.user_id')
    .select(['u.id', 'u.name', 'u.avatar', 'b.created_at'])
    .where('b.guild_id', '=', guildId)
    .orderBy('u.id', 'asc')
    .execute();
  return rows.map((r) => ({ user: memberUserView(d.urls, r), createdAt: iso(r.created_at) }));
}

/** D49 moderation delete: any author's message; MESSAGE_DELETE as for the author's own (D35). */
export async function moderateMessage(
  d: Domain,
  p: Principal,
  channelId: number,
  messageId: number,
): Promise<void> {
  const ch = await requireChannelAdmin(d, p, channelId);
  await moderateGuildMessage(d, { id: ch.id, guildId: ch.guildId }, messageId);
}
