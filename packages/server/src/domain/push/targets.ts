import type { Message } from '@parley/protocol';
import type { Domain } from '../context.js';

/** D66: someone to notify of a new message, and why. */
export interface NotifyTarget {
  userId: number;
  reason: 'dm' | 'mention';
}

/**
 * D66: whom to notify of a new message. The notification settings and mention rules (levels,
 * mutes, roles, everyone) belong to domain/notifications (helper "unread"); until that lands this
 * seam answers the plain cases: the other party of a DM, and the people a guild message
 * mentions by name (D61's `mentions`, already limited to those who may be mentioned).
 */
export async function notifyTargets(d: Domain, message: Message): Promise<NotifyTarget[]> {
  const author = message.author.id;
  if (message.guildId === undefined) {
    const ch = await d.db
      .selectFrom('channels')
      .select(['dm_user_low', 'dm_user_high'])
      .where('id', '=', message.channelId)
      .executeTakeFirst();
    if (!ch || ch.dm_user_low === null || ch.dm_user_high === null) return [];
    const other = ch.dm_user_low === author ? ch.dm_user_high : ch.dm_user_low;
    return other === author ? [] : [{ userId: Number(other), reason: 'dm' }];
  }
  return [...new Set(message.mentions ?? [])]
    .filter((u) => u !== author)
    .map((userId) => ({ userId, reason: 'mention' as const }));
}
