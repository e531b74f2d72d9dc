import type { Channel } from '@parley/protocol';
import { notFound } from '../../errors/app-error.js';
import type { Domain } from '../context.js';
import { channelView } from '../views.js';

/** D52: the operator reads guild channels (changes: domain/admin/operator.ts, D59). */
async function loadGuildChannel(d: Domain, channelId: number) {
  const c = await d.db
    .selectFrom('channels')
    .select(['id', 'guild_id', 'type', 'name', 'topic'])
    .where('id', '=', channelId)
    .executeTakeFirst();
  // DM channels are not the operator's to read or rename (their messages may still be deleted).
  if (!c || c.guild_id === null) throw notFound('channel');
  return { ...c, guild_id: c.guild_id };
}

export async function getChannel(d: Domain, channelId: number): Promise<Channel> {
  return channelView(await loadGuildChannel(d, channelId));
}
