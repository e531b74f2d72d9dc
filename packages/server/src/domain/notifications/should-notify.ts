import type { Message } from '@parley/protocol';
import type { Domain } from '../context.js';
import { addressedPeople, viewersOf, type AddressReason } from './mentioned.js';
import { effectiveSettings } from './settings.js';

/**
 * Why a person is notified of a new message (D66): 'dm' — a DM's other party; 'mention' — it
 * mentions them, a role of theirs or everyone (D61/D62/D57 rules already applied to the
 * message); 'message' — neither, but their level for the channel (or its guild) is `all`.
 */
export type NotifyReason = AddressReason | 'message';

export interface NotifyTarget {
  userId: number;
  reason: NotifyReason;
}

/**
 * D66: the ONE answer to "whom does this new message notify" (the web push sender asks it;
 * badges count mentions whatever the settings, mention-marks.ts). Honours each person's
 * notification settings — the channel's row wins over its guild's; `none` or a mute still in
 * force notifies nothing; `mentions` (a guild's default) only what addresses them; `all` (a DM's
 * default) every message. Never the author, never bots, only people who can see the channel.
 * Reads only; ordered by user id.
 */
export async function notifyTargets(
  ctx: Pick<Domain, 'db' | 'clock'>,
  message: Message,
): Promise<NotifyTarget[]> {
  const { db } = ctx;
  const guildId = message.guildId ?? null;
  let dmUserIds: number[] | undefined;
  if (guildId === null) {
    const ch = await db
      .selectFrom('channels')
      .select(['dm_user_low', 'dm_user_high'])
      .where('id', '=', message.channelId)
      .executeTakeFirst();
    if (!ch || ch.dm_user_low === null || ch.dm_user_high === null) return [];
    dmUserIds = [Number(ch.dm_user_low), Number(ch.dm_user_high)];
  }
  const reasons = new Map<number, NotifyReason>(
    await addressedPeople(db, {
      id: message.id,
      channelId: message.channelId,
      guildId,
      authorId: message.author.id,
      mentions: message.mentions ?? [],
      mentionRoles: message.mentionRoles ?? [],
      mentionEveryone: message.mentionEveryone === true,
      dmUserIds,
    }),
  );
  if (guildId !== null) {
    // Those who asked for every message of this channel or its guild (and can see it).
    const rows = await db
      .selectFrom('notification_settings')
      .select('user_id')
      .where('target_id', 'in', [message.channelId, guildId])
      .where('level', '=', 'all')
      .execute();
    const wanting = [...new Set(rows.map((r) => Number(r.user_id)))].filter(
      (u) => u !== message.author.id && !reasons.has(u),
    );
    if (wanting.length > 0)
      for (const u of await viewersOf(db, guildId, message.channelId, wanting))
        reasons.set(u, 'message');
  }
  const settings = await effectiveSettings(
    db,
    [...reasons.keys()],
    message.channelId,
    guildId,
    ctx.clock.now(),
  );
  const out: NotifyTarget[] = [];
  for (const [userId, reason] of reasons) {
    const s = settings.get(userId);
    if (!s || s.muted || s.level === 'none') continue;
    if (s.level === 'mentions' && reason === 'message') continue;
    out.push({ userId, reason });
  }
  return out.sort((a, b) => a.userId - b.userId);
}
