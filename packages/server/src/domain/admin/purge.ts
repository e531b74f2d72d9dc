import { notFound } from '../../errors/app-error.js';
import type { Db } from '../../storage/db.js';
import type { Domain } from '../context.js';
import { removeMemberIn } from '../members/members.service.js';
import { memberUserView } from '../views.js';

/**
 * D52: what hangs on a guild, a bot or a user, removed inside the caller's transaction (one
 * transaction for the whole deletion), emitting the events bots are owed on the way (D34, D36).
 * Events are recorded BEFORE the rows they speak of go, so recipients are decided while the
 * membership still exists (the removed bot gets its own removal, as members.service does).
 *
 * Uploaded files' rows go with their owner; their bytes become orphans that the hourly blob
 * sweep removes (files.service.ts).
 */

/** The user leaves every guild it is in, lowest id first (members.service `removeMemberIn`). */
async function leaveEveryGuild(d: Domain, trx: Db, userId: number): Promise<void> {
  const guilds = await trx
    .selectFrom('members')
    .select('guild_id')
    .where('user_id', '=', userId)
    .orderBy('guild_id', 'asc')
    .execute();
  for (const g of guilds) await removeMemberIn(trx, d, Number(g.guild_id), userId);
}

interface MessageRef {
  id: number;
  channel_id: number;
  guild_id: number | null;
}

/**
 * The one message deletion (an author's own, moderation D49, the operator D52, and the bulk
 * purges here): MESSAGE_DELETE (guild) or DM_MESSAGE_DELETE (DM) for each message (D34, D35),
 * then delete. Answers how many rows went (fewer when some were deleted meanwhile).
 */
export async function deleteMessages(d: Domain, trx: Db, messages: MessageRef[]): Promise<number> {
  if (messages.length === 0) return 0;
  const dmParties = new Map<number, [number, number]>();
  const dmIds = [...new Set(messages.filter((m) => m.guild_id === null).map((m) => m.channel_id))];
  if (dmIds.length > 0) {
    const rows = await trx
      .selectFrom('channels')
      .select(['id', 'dm_user_low', 'dm_user_high'])
      .where('id', 'in', dmIds)
      .execute();
    for (const r of rows)
      if (r.dm_user_low !== null && r.dm_user_high !== null)
        dmParties.set(r.id, [r.dm_user_low, r.dm_user_high]);
  }
  for (const m of messages) {
    if (m.guild_id !== null) {
      await d.events.record(trx, {
        envelope: {
          type: 'MESSAGE_DELETE',
          data: { id: m.id, channelId: m.channel_id, guildId: m.guild_id },
        },
        scope: { kind: 'channel', guildId: m.guild_id, channelId: m.channel_id },
      });
    } else {
      const parties = dmParties.get(m.channel_id);
      if (parties)
        await d.events.record(trx, {
          envelope: { type: 'DM_MESSAGE_DELETE', data: { id: m.id, channelId: m.channel_id } },
          scope: { kind: 'dm', userIds: parties },
        });
    }
  }
  const ids = messages.map((m) => m.id);
  let deleted = 0;
  for (let i = 0; i < ids.length; i += 500) {
    const res = await trx
      .deleteFrom('messages')
      .where('id', 'in', ids.slice(i, i + 500))
      .executeTakeFirst();
    deleted += Number(res.numDeletedRows);
  }
  return deleted;
}

/**
 * One message of one channel, with its event, in its own transaction; 404 when it is not there
 * (D13: a message of another channel is 404, so is an unknown channel). Deleted meanwhile by
 * someone else: 404 and no event (the transaction rolls back).
 */
export async function deleteMessage(
  d: Domain,
  channelId: number,
  messageId: number,
  /** written in the same transaction once the message is known (D60: its audit entry) */
  also?: (trx: Db, m: { id: number; guild_id: number | null; author_id: number }) => Promise<void>,
): Promise<void> {
  await d.db.transaction().execute(async (trx) => {
    const m = await trx
      .selectFrom('messages')
      .select(['id', 'channel_id', 'guild_id', 'author_id'])
      .where('id', '=', messageId)
      .where('channel_id', '=', channelId)
      .executeTakeFirst();
    if (!m || (await deleteMessages(d, trx, [m])) === 0) throw notFound('message');
    if (also) await also(trx, m);
  });
}

/** Channels and everything in them, without message events (their guild is going, or D49). */
export async function deleteChannelRows(trx: Db, channelIds: number[]): Promise<void> {
  if (channelIds.length === 0) return;
  // read_states, and invites/bans of a guild, go by their foreign keys' ON DELETE CASCADE.
  await trx.deleteFrom('messages').where('channel_id', 'in', channelIds).execute();
  await trx.deleteFrom('channel_overwrites').where('channel_id', 'in', channelIds).execute();
  await trx.deleteFrom('channels').where('id', 'in', channelIds).execute();
}

/**
 * The one "delete a guild" (D49 owner via /app/v1, D52 operator, and a deleted owner's guilds):
 * the guild and everything on it, inside the caller's transaction — channels with their
 * messages, overwrites and read states; roles, members, invites, bans. Bots are owed one thing:
 * each bot member's own GUILD_MEMBER_REMOVE (D34: its last event there), recorded before the rows
 * go. People's removals are not sent one by one (a guild of 10,000 people would be 10,000 events
 * for the bots that are leaving anyway); every person who was a member gets GUILD_DELETE (D51).
 * 404 when the guild is not there.
 *
 * `botsLeave`: 'one-by-one' (the owner's route) removes each bot's membership right after its
 * event, lowest id first, so a bot hears the removals of those before it and its own, as when
 * members leave one by one; 'together' (the operator's) records every removal while all bots
 * are still members, so each bot hears them all. The tests pin each route's order
 * (app.guilds.test.ts, admin.manage.test.ts).
 */
export async function purgeGuild(
  d: Domain,
  trx: Db,
  guildId: number,
  botsLeave: 'one-by-one' | 'together' = 'together',
): Promise<void> {
  const members = await trx
    .selectFrom('members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id', 'u.name', 'u.avatar', 'u.is_bot'])
    .where('m.guild_id', '=', guildId)
    .orderBy('u.id', 'asc')
    .execute();
  for (const bot of members.filter((m) => m.is_bot === 1)) {
    await d.events.record(trx, {
      envelope: {
        type: 'GUILD_MEMBER_REMOVE',
        data: { guildId, user: memberUserView(d.urls, bot) },
      },
      scope: { kind: 'guild', guildId, alsoUserId: bot.id },
    });
    if (botsLeave === 'one-by-one')
      await trx
        .deleteFrom('members')
        .where('guild_id', '=', guildId)
        .where('user_id', '=', bot.id)
        .execute();
  }
  const channels = trx.selectFrom('channels').select('id').where('guild_id', '=', guildId);
  // PostgreSQL: messages being sent meanwhile wait (their foreign key shares the channel row),
  // so none is left pointing at a deleted channel.
  if (d.dialect === 'postgres') await channels.forUpdate().execute();
  await trx.deleteFrom('messages').where('channel_id', 'in', channels).execute();
  await trx.deleteFrom('channel_overwrites').where('channel_id', 'in', channels).execute();
  await trx.deleteFrom('read_states').where('channel_id', 'in', channels).execute();
  await trx.deleteFrom('channels').where('guild_id', '=', guildId).execute();
  await trx.deleteFrom('member_roles').where('guild_id', '=', guildId).execute();
  await trx.deleteFrom('members').where('guild_id', '=', guildId).execute();
  await trx.deleteFrom('roles').where('guild_id', '=', guildId).execute();
  await trx.deleteFrom('invites').where('guild_id', '=', guildId).execute();
  await trx.deleteFrom('bans').where('guild_id', '=', guildId).execute();
  const res = await trx.deleteFrom('guilds').where('id', '=', guildId).executeTakeFirst();
  if (res.numDeletedRows === 0n) throw notFound('guild');
  const people = members.filter((m) => m.is_bot === 0).map((m) => m.id);
  if (people.length > 0)
    d.people.people(trx, {
      type: 'GUILD_DELETE',
      data: { id: guildId },
      audience: { kind: 'users', userIds: people },
    });
}

/**
 * Everything a user (person or bot user) leaves behind when it goes: its memberships (with
 * GUILD_MEMBER_REMOVE), its messages (with MESSAGE_DELETE / DM_MESSAGE_DELETE), its DM channels,
 * files, quota rows and sessions — all but the user row itself. Guilds it owns and bots it owns are
 * the caller's business (purged first).
 */
export async function purgeUserRows(d: Domain, trx: Db, userId: number): Promise<void> {
  // Messages first, while the author is still a member (the events' recipients do not depend
  // on the author, but on who can see the channel).
  const messages = await trx
    .selectFrom('messages')
    .select(['id', 'channel_id', 'guild_id'])
    .where('author_id', '=', userId)
    .orderBy('id')
    .execute();
  await deleteMessages(d, trx, messages);
  await leaveEveryGuild(d, trx, userId);
  const dms = await trx
    .selectFrom('channels')
    .select('id')
    .where((eb) => eb.or([eb('dm_user_low', '=', userId), eb('dm_user_high', '=', userId)]))
    .execute();
  if (dms.length > 0) {
    // The other party's messages in those DMs go with the channel: tell its bot (D35).
    const others = await trx
      .selectFrom('messages')
      .select(['id', 'channel_id', 'guild_id'])
      .where(
        'channel_id',
        'in',
        dms.map((c) => c.id),
      )
      .orderBy('id')
      .execute();
    await deleteMessages(d, trx, others);
    await deleteChannelRows(
      trx,
      dms.map((c) => c.id),
    );
  }
  await trx.deleteFrom('files').where('owner_id', '=', userId).execute();
  await trx.deleteFrom('upload_usage_daily').where('user_id', '=', userId).execute();
  await trx.deleteFrom('upload_usage_monthly').where('user_id', '=', userId).execute();
  await trx.deleteFrom('user_sessions').where('user_id', '=', userId).execute();
  // The users row itself is the caller's to delete (a bot row refers to its user).
}

/**
 * The one "delete a bot" (D50 owner, D52 operator, a deleted owner's bots), inside the caller's
 * transaction: it leaves every guild (GUILD_MEMBER_REMOVE, its own included, D34/D50), its
 * stream, gateway sessions and webhook deliveries go, its token dies (no bot row: 401) and after
 * commit its connections close with 4004 (the D8 token signal: the generation check finds no
 * bot); the owner gets the slot back (INTERFACE "Limits").
 *
 * `keep`: 'nothing' (operator, D52) also removes its messages (MESSAGE_DELETE /
 * DM_MESSAGE_DELETE), DMs, files and its user row; 'user' (owner, D50) keeps its user, disabled,
 * so the messages it sent keep their author. False when there is no such bot.
 */
export async function purgeBot(
  d: Domain,
  trx: Db,
  botId: number,
  keep: 'nothing' | 'user' = 'nothing',
): Promise<boolean> {
  const bot = await trx
    .selectFrom('bots')
    .select(['id', 'user_id', 'owner_id'])
    .where('id', '=', botId)
    .executeTakeFirst();
  if (!bot) return false;
  if (keep === 'nothing') await purgeUserRows(d, trx, bot.user_id);
  else await leaveEveryGuild(d, trx, bot.user_id);
  // Its ids in event_log rows go with those rows (pruned after the resume window).
  await trx.deleteFrom('gateway_claims').where('bot_id', '=', botId).execute();
  await trx.deleteFrom('gateway_sessions').where('bot_id', '=', botId).execute();
  await trx.deleteFrom('webhook_deliveries').where('bot_id', '=', botId).execute();
  const gone = await trx.deleteFrom('bots').where('id', '=', botId).executeTakeFirst();
  if (gone.numDeletedRows === 0n) return false; // deleted meanwhile
  // Its user row goes after the bot row that references it.
  if (keep === 'nothing') await trx.deleteFrom('users').where('id', '=', bot.user_id).execute();
  else await trx.updateTable('users').set({ disabled: 1 }).where('id', '=', bot.user_id).execute();
  await trx
    .updateTable('users')
    .set((eb) => ({ bot_count: eb('bot_count', '-', 1) }))
    .where('id', '=', bot.owner_id)
    .where('bot_count', '>', 0)
    .execute();
  await d.events.botTokenReset(trx, botId);
  return true;
}
