import { Permission } from '@parley/protocol';
import type { DmList, MyGuilds, PatchMeBody, ReadStates, User } from '@parley/protocol';
import { conflict, notFound } from '../../errors/app-error.js';
import { isUniqueViolation } from '../../storage/db.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { requireDmChannel } from '../dms/dms.service.js';
import { clearMentionMarks, readStatesOf } from '../notifications/mention-marks.js';
import { removeMemberIn } from '../members/members.service.js';
import { requireGuildChannel, requireGuild } from '../permissions/access.service.js';
import { nameTaken, personNameKeys, requireFreeName } from '../users/person-name.js';
import { avatarUrl } from '../views.js';

const userView = (
  d: Domain,
  u: { id: number; name: string; avatar: string | null; is_bot: number },
): User => ({
  id: Number(u.id),
  name: u.name,
  avatar: avatarUrl(d.urls, u.avatar),
  isBot: u.is_bot === 1,
});

/** A user as people and bots see them (D48), or undefined. */
export async function loadUser(d: Domain, userId: number): Promise<User | undefined> {
  const row = await d.db
    .selectFrom('users')
    .select(['id', 'name', 'avatar', 'is_bot'])
    .where('id', '=', userId)
    .executeTakeFirst();
  return row ? userView(d, row) : undefined;
}

/** D48: GET /app/v1/users/@me. */
export async function getMe(d: Domain, p: Principal): Promise<User> {
  const me = await loadUser(d, p.userId);
  if (!me) throw notFound('user');
  return me;
}

/** D48: rename (unique ignoring case: 409) and set or clear (null) the avatar. */
export async function patchMe(d: Domain, p: Principal, body: PatchMeBody): Promise<User> {
  const set: { name?: string; name_key?: string; skeleton_key?: string; avatar?: string | null } =
    {};
  if (body.name !== undefined) {
    // D46/D70: not another person's name (ignoring case), nor confusable with one.
    await requireFreeName(d.db, body.name, p.userId);
    set.name = body.name;
    Object.assign(set, personNameKeys(body.name));
  }
  if (body.avatar !== undefined) set.avatar = body.avatar;
  if (Object.keys(set).length > 0) {
    try {
      await d.db.updateTable('users').set(set).where('id', '=', p.userId).execute();
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken();
      throw err;
    }
  }
  return getMe(d, p);
}

/** D48: the guilds the person is a member of, by id. */
export async function myGuilds(d: Domain, p: Principal): Promise<MyGuilds> {
  const rows = await d.db
    .selectFrom('members as m')
    .innerJoin('guilds as g', 'g.id', 'm.guild_id')
    .select(['g.id', 'g.name', 'g.owner_id'])
    .where('m.user_id', '=', p.userId)
    .orderBy('g.id', 'asc')
    .execute();
  return {
    guilds: rows.map((g) => ({ id: Number(g.id), name: g.name, ownerId: Number(g.owner_id) })),
  };
}

/**
 * D48: the person's DM channels, newest activity first: by their newest message, or by the
 * channel's own creation while it has none (ids are times, D3).
 */
export async function myDms(d: Domain, p: Principal): Promise<DmList> {
  return dmsOf(d, p.userId);
}

/** D48 (and D66's READY): the DMs of `userId`, newest activity first. */
export async function dmsOf(d: Domain, userId: number): Promise<DmList> {
  const p = { userId };
  const rows = await d.db
    .selectFrom('channels as c')
    .innerJoin('users as u', (j) =>
      j.on((eb) =>
        eb.or([
          eb.and([eb('c.dm_user_low', '=', p.userId), eb('u.id', '=', eb.ref('c.dm_user_high'))]),
          eb.and([eb('c.dm_user_high', '=', p.userId), eb('u.id', '=', eb.ref('c.dm_user_low'))]),
        ]),
      ),
    )
    .select((eb) => [
      'c.id',
      'u.id as userId',
      'u.name',
      'u.avatar',
      'u.is_bot',
      eb
        .selectFrom('messages as m')
        .select((e) => e.fn.max('m.id').as('max'))
        .whereRef('m.channel_id', '=', 'c.id')
        .as('lastMessageId'),
    ])
    .where('c.guild_id', 'is', null)
    .where((eb) => eb.or([eb('c.dm_user_low', '=', p.userId), eb('c.dm_user_high', '=', p.userId)]))
    .execute();
  const dms = rows.map((r) => ({
    channelId: Number(r.id),
    recipient: userView(d, { id: r.userId, name: r.name, avatar: r.avatar, is_bot: r.is_bot }),
    lastMessageId: r.lastMessageId == null ? null : Number(r.lastMessageId),
  }));
  // D48: newest activity first.
  dms.sort((a, b) => (b.lastMessageId ?? b.channelId) - (a.lastMessageId ?? a.channelId));
  return { dms };
}

/**
 * D48: leave a guild (GUILD_MEMBER_REMOVE to the guild's bots and people, GUILD_DELETE to the
 * person). The owner cannot leave (409): they delete the guild instead.
 */
export async function leaveGuild(d: Domain, p: Principal, guildId: number): Promise<void> {
  const guild = await requireGuild(d.db, guildId);
  if (Number(guild.owner_id) === p.userId)
    throw conflict('The owner cannot leave their guild (delete it instead)');
  await d.db.transaction().execute((trx) => removeMemberIn(trx, d, guildId, p.userId));
}

/**
 * D48: the person has read `channelId` up to `messageId` (a position, like D16 cursors). Needs
 * access to the channel (a guild channel they can VIEW, or a DM they are a party of). Never moves
 * backwards: a mark older than the stored one changes nothing (devices may report late).
 */
export async function markRead(
  d: Domain,
  p: Principal,
  channelId: number,
  messageId: number,
): Promise<void> {
  const ch = await d.db
    .selectFrom('channels')
    .select(['id', 'guild_id'])
    .where('id', '=', channelId)
    .executeTakeFirst();
  if (!ch) throw notFound('channel');
  if (ch.guild_id === null) await requireDmChannel(d, p, channelId);
  else await requireGuildChannel(d, p, channelId, Permission.VIEW_CHANNEL);
  // D66: the mentions up to the mark are read with it; the person's sessions (other tabs and
  // devices) hear the new state with its count (MESSAGE_ACK, after commit).
  await d.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('read_states')
      .values({ user_id: p.userId, channel_id: channelId, last_read_id: messageId })
      .onConflict((oc) =>
        oc
          .columns(['user_id', 'channel_id'])
          .doUpdateSet((eb) => ({ last_read_id: eb.ref('excluded.last_read_id') }))
          .where('read_states.last_read_id', '<', (eb) => eb.ref('excluded.last_read_id')),
      )
      .execute();
    await clearMentionMarks(trx, p.userId, channelId, messageId);
    const [state] = await readStatesOf(trx, p.userId, channelId);
    if (state)
      d.people.people(trx, {
        type: 'MESSAGE_ACK',
        data: state,
        audience: { kind: 'users', userIds: [p.userId] },
      });
  });
}

/** D48: every read mark of the person (DMs included), by channel id; D66: with mentionCount. */
export async function readStates(d: Domain, p: Principal): Promise<ReadStates> {
  return { readStates: await readStatesOf(d.db, p.userId) };
}
