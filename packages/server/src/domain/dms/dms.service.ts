import type { DmChannelRef } from '@parley/protocol';
import { AppError, forbidden, invalid, notFound } from '../../errors/app-error.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';

export interface DmChannel {
  id: number;
  userLow: number;
  userHigh: number;
}

/**
 * D21: a DM channel the caller is part of; a guild channel id here is unknown (404).
 * D54: a bot↔person DM lasts only while the two share a guild — a bot removed from every guild
 * it shared with the person can no longer send, read, edit or delete there (403), and neither can
 * the person write to it. Person↔person DMs are checked only when opened (D21).
 */
export async function requireDmChannel(
  d: Domain,
  p: Principal,
  channelId: number,
): Promise<DmChannel> {
  const ch = await d.db
    .selectFrom('channels')
    .select(['id', 'dm_user_low', 'dm_user_high'])
    .where('id', '=', channelId)
    .executeTakeFirst();
  if (!ch || ch.dm_user_low === null || ch.dm_user_high === null) throw notFound('channel');
  if (ch.dm_user_low !== p.userId && ch.dm_user_high !== p.userId)
    throw forbidden('Not a party of this DM channel');
  const other = ch.dm_user_low === p.userId ? ch.dm_user_high : ch.dm_user_low;
  if ((p.isBot || (await isBotUser(d, other))) && !(await shareGuild(d, p.userId, other)))
    throw forbidden('You no longer share a guild with this user');
  return { id: ch.id, userLow: ch.dm_user_low, userHigh: ch.dm_user_high };
}

/**
 * D21: open (or return) the DM channel between the caller and `userId`. Idempotent, also under
 * concurrent calls: the unique (dm_user_low, dm_user_high) index lets exactly one insert win;
 * every caller then reads the winner.
 */
export async function openDm(d: Domain, p: Principal, userId: number): Promise<DmChannelRef> {
  const other = await d.db
    .selectFrom('users')
    .select(['id', 'is_bot'])
    .where('id', '=', userId)
    .executeTakeFirst();
  if (!other) throw notFound('user');
  if (other.id === p.userId) throw invalid('userId', 'cannot open a DM with yourself');
  if (p.isBot && other.is_bot) throw forbidden('Bots cannot open DMs with other bots');
  if (!(await shareGuild(d, p.userId, other.id)))
    throw forbidden('You share no guild with this user');

  const low = Math.min(p.userId, other.id);
  const high = Math.max(p.userId, other.id);
  const existing = await findDm(d, low, high);
  if (existing !== undefined) return { channelId: existing, recipientId: other.id };
  await d.db
    .insertInto('channels')
    .values({
      id: d.ids.next(),
      guild_id: null,
      type: 1,
      name: '',
      topic: '',
      dm_user_low: low,
      dm_user_high: high,
      created_at: d.clock.now(),
    })
    .onConflict((oc) => oc.columns(['dm_user_low', 'dm_user_high']).doNothing())
    .execute();
  const id = await findDm(d, low, high);
  if (id === undefined) throw new AppError('INTERNAL_ERROR', 'DM channel vanished after creation');
  return { channelId: id, recipientId: other.id };
}

async function shareGuild(d: Domain, a: number, b: number): Promise<boolean> {
  const shared = await d.db
    .selectFrom('members as a')
    .innerJoin('members as b', 'b.guild_id', 'a.guild_id')
    .select('a.guild_id')
    .where('a.user_id', '=', a)
    .where('b.user_id', '=', b)
    .limit(1)
    .executeTakeFirst();
  return shared !== undefined;
}

async function isBotUser(d: Domain, userId: number): Promise<boolean> {
  const u = await d.db
    .selectFrom('users')
    .select('is_bot')
    .where('id', '=', userId)
    .executeTakeFirst();
  return Boolean(u?.is_bot);
}

async function findDm(d: Domain, low: number, high: number): Promise<number | undefined> {
  const row = await d.db
    .selectFrom('channels')
    .select('id')
    .where('dm_user_low', '=', low)
    .where('dm_user_high', '=', high)
    .executeTakeFirst();
  return row?.id;
}
