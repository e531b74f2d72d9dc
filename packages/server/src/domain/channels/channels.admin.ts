import type { AdminChannelPatch, Channel } from '@parley/protocol';
import { notFound } from '../../errors/app-error.js';
import { deleteChannelRows, deleteMessage } from '../admin/purge.js';
import type { Domain } from '../context.js';
import { channelView } from '../views.js';

/** D52: the operator reads, changes and deletes guild channels; deletes any message. */
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

export async function updateChannel(
  d: Domain,
  channelId: number,
  body: AdminChannelPatch,
): Promise<Channel> {
  const before = await loadGuildChannel(d, channelId);
  const after = channelView({
    ...before,
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.topic !== undefined ? { topic: body.topic } : {}),
  });
  await d.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('channels')
      .set({ name: after.name, topic: after.topic })
      .where('id', '=', channelId)
      .execute();
    d.people.people(trx, {
      type: 'CHANNEL_UPDATE',
      data: after,
      audience: { kind: 'channel', guildId: after.guildId, channelId },
    });
  });
  return after;
}

/** The channel and its messages (bots are owed no event for a channel: D34 has none; people
 * get CHANNEL_DELETE, D51). */
export async function deleteChannel(d: Domain, channelId: number): Promise<void> {
  const c = await loadGuildChannel(d, channelId);
  await d.db.transaction().execute(async (trx) => {
    d.people.people(trx, {
      type: 'CHANNEL_DELETE',
      data: { id: channelId, guildId: c.guild_id },
      audience: { kind: 'channel', guildId: c.guild_id, channelId },
    });
    await deleteChannelRows(trx, [channelId]);
  });
}

/** D52: any message, whoever wrote it; MESSAGE_DELETE (or DM_MESSAGE_DELETE) as D34 says. */
export async function deleteAnyMessage(
  d: Domain,
  channelId: number,
  messageId: number,
): Promise<void> {
  await deleteMessage(d, channelId, messageId);
}
