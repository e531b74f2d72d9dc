import type { DmChannelRef } from '@parley/protocol';
import { AppError, forbidden, invalid, notFound } from '../../errors/app-error.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';

export interface DmChannel {
  id: number;
  userLow: number;
  userHigh: number;
}

/** D21: a DM channel the caller is part of; a guild channel id here is unknown (404). */
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
  const shared = await d.db
    .selectFrom('members as a')
    .innerJoin('members as b', 'b.guild_id', 'a.guild_id')
    .select('a.guild_id')
    .where('a.user_id', '=', p.userId)
    .where('b.user_id', '=', other.id)
    .limit(1)
    .executeTakeFirst();
  if (!shared) throw forbidden('You share no guild with this user');

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

async function findDm(d: Domain, low: number, high: number): Promise<number | undefined> {
  const row = await d.db
    .selectFrom('channels')
    .select('id')
    .where('dm_user_low', '=', low)
    .where('dm_user_high', '=', high)
    .executeTakeFirst();
  return row?.id;
}
