import type { Db } from '../../storage/db.js';
import type { Domain } from '../context.js';
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

/** D34: GUILD_MEMBER_REMOVE to every bot in the guild (the removed one included), then delete. */
export async function removeMembership(
  d: Domain,
  trx: Db,
  guildId: number,
  user: { id: number; name: string; avatar: string | null },
): Promise<void> {
  await d.events.record(trx, {
    envelope: {
      type: 'GUILD_MEMBER_REMOVE',
      data: { guildId, user: memberUserView(d.urls, user) },
    },
    scope: { kind: 'guild', guildId, alsoUserId: user.id },
  });
  await trx
    .deleteFrom('member_roles')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', user.id)
    .execute();
  await trx
    .deleteFrom('members')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', user.id)
    .execute();
}

interface MessageRef {
  id: number;
  channel_id: number;
  guild_id: number | null;
}

/** MESSAGE_DELETE (guild) or DM_MESSAGE_DELETE (DM) for each message (D34, D35), then delete. */
export async function deleteMessages(d: Domain, trx: Db, messages: MessageRef[]): Promise<void> {
  if (messages.length === 0) return;
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
  for (let i = 0; i < ids.length; i += 500)
    await trx
      .deleteFrom('messages')
      .where('id', 'in', ids.slice(i, i + 500))
      .execute();
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
 * A guild and everything in it. Bots are owed one thing: each bot member's own
 * GUILD_MEMBER_REMOVE (D34: its last event there). People's removals are not sent one by one:
 * a guild of 10,000 people would be 10,000 events for the bots that are leaving anyway.
 */
export async function purgeGuild(d: Domain, trx: Db, guildId: number): Promise<void> {
  const bots = await trx
    .selectFrom('members as m')
    .innerJoin('users as u', 'u.id', 'm.user_id')
    .select(['u.id', 'u.name', 'u.avatar'])
    .where('m.guild_id', '=', guildId)
    .where('u.is_bot', '=', 1)
    .orderBy('u.id')
    .execute();
  // Every removal is recorded while all of them are still members: each bot hears them all.
  for (const b of bots)
    await d.events.record(trx, {
      envelope: {
        type: 'GUILD_MEMBER_REMOVE',
        data: { guildId, user: memberUserView(d.urls, b) },
      },
      scope: { kind: 'guild', guildId },
    });
  // D51: its people hear GUILD_DELETE (the audience is decided after commit, from the members
  // each node knew: the guild's members as they were).
  d.people.people(trx, {
    type: 'GUILD_DELETE',
    data: { id: guildId },
    audience: { kind: 'guild', guildId },
  });
  const channels = await trx
    .selectFrom('channels')
    .select('id')
    .where('guild_id', '=', guildId)
    .execute();
  await deleteChannelRows(
    trx,
    channels.map((c) => c.id),
  );
  await trx.deleteFrom('member_roles').where('guild_id', '=', guildId).execute();
  await trx.deleteFrom('members').where('guild_id', '=', guildId).execute();
  await trx.deleteFrom('roles').where('guild_id', '=', guildId).execute();
  await trx.deleteFrom('guilds').where('id', '=', guildId).execute();
}

/**
 * Everything a user (person or bot user) leaves behind when it goes: its memberships (with
 * GUILD_MEMBER_REMOVE), its messages (with MESSAGE_DELETE / DM_MESSAGE_DELETE), its DM channels,
 * files, quota rows and sessions — all but the user row itself. Guilds it owns and bots it owns are
 * the caller's business (purged first).
 */
export async function purgeUserRows(d: Domain, trx: Db, userId: number): Promise<void> {
  const user = await trx
    .selectFrom('users')
    .select(['id', 'name', 'avatar'])
    .where('id', '=', userId)
    .executeTakeFirstOrThrow();
  const guilds = await trx
    .selectFrom('members')
    .select('guild_id')
    .where('user_id', '=', userId)
    .orderBy('guild_id')
    .execute();
  // Messages first, while the author is still a member (the events' recipients do not depend
  // on the author, but on who can see the channel).
  const messages = await trx
    .selectFrom('messages')
    .select(['id', 'channel_id', 'guild_id'])
    .where('author_id', '=', userId)
    .orderBy('id')
    .execute();
  await deleteMessages(d, trx, messages);
  for (const g of guilds) await removeMembership(d, trx, g.guild_id, user);
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
 * A bot: it leaves every guild (GUILD_MEMBER_REMOVE, D50), its messages go, its stream, gateway
 * sessions and webhook deliveries go, its token dies (no bot row: 401) and after commit its
 * connections close with 4004 (the D8 token signal: the generation check finds no bot).
 */
export async function purgeBot(d: Domain, trx: Db, botId: number): Promise<void> {
  const bot = await trx
    .selectFrom('bots')
    .select(['id', 'user_id', 'owner_id'])
    .where('id', '=', botId)
    .executeTakeFirst();
  if (!bot) return;
  await purgeUserRows(d, trx, bot.user_id);
  await trx.deleteFrom('bot_events').where('bot_id', '=', botId).execute();
  await trx.deleteFrom('event_streams').where('bot_id', '=', botId).execute();
  await trx.deleteFrom('gateway_sessions').where('bot_id', '=', botId).execute();
  await trx.deleteFrom('webhook_deliveries').where('bot_id', '=', botId).execute();
  await trx.deleteFrom('bots').where('id', '=', botId).execute();
  // Its user row goes after the bot row that references it.
  await trx.deleteFrom('users').where('id', '=', bot.user_id).execute();
  // INTERFACE "Limits": the owner may create another one.
  await trx
    .updateTable('users')
    .set((eb) => ({ bot_count: eb('bot_count', '-', 1) }))
    .where('id', '=', bot.owner_id)
    .where('bot_count', '>', 0)
    .execute();
  await d.events.botTokenReset(trx, botId);
}
