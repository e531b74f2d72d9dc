import { conflict } from '../../errors/app-error.js';
import type { Db } from '../../storage/db.js';
import type { Domain } from '../context.js';

/** D70: a guild holds at most this many channels (a guild's events and views stay bounded). */
export const MAX_CHANNELS = 500;

/**
 * D70: refuse (409) a new channel in a guild that already holds MAX_CHANNELS. Inside the
 * creating transaction; on PostgreSQL the guild's row is held first, so two creates at once are
 * counted one after the other (SQLite's writes are serial anyway).
 */
export async function requireChannelRoom(trx: Db, d: Domain, guildId: number): Promise<void> {
  if (d.dialect === 'postgres')
    await trx.selectFrom('guilds').select('id').where('id', '=', guildId).forUpdate().execute();
  const { n } = await trx
    .selectFrom('channels')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('guild_id', '=', guildId)
    .executeTakeFirstOrThrow();
  if (Number(n) >= MAX_CHANNELS) throw conflict(`A guild holds at most ${MAX_CHANNELS} channels`);
}
