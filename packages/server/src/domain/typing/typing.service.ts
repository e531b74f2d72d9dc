import { Permission } from '@parley/protocol';
import { iso } from '../../ids/clock.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { requireDmChannel } from '../dms/dms.service.js';
import { requireGuildChannel } from '../permissions/access.service.js';

/**
 * D51 `POST /app/v1/channels/:channelId/typing`: TYPING_START {channelId, userId, at} to the
 * people who can VIEW the channel (a DM's two parties), at once and never stored (clients show
 * it for 8 s). Sending needs SEND_MESSAGES (D12 order of refusals: 404, 403); D58: a timed-out
 * member is refused (403 TIMED_OUT). A DM channel id
 * works too: the app shows typing in DMs like anywhere else.
 */
export async function startTyping(d: Domain, p: Principal, channelId: number): Promise<void> {
  const dm = await d.db
    .selectFrom('channels')
    .select(['guild_id'])
    .where('id', '=', channelId)
    .executeTakeFirst();
  const data = { channelId, userId: p.userId, at: iso(d.clock.now()) };
  if (dm && dm.guild_id === null) {
    const ch = await requireDmChannel(d, p, channelId);
    d.people.ephemeral({
      type: 'TYPING_START',
      data,
      audience: { kind: 'users', userIds: [ch.userLow, ch.userHigh] },
    });
    return;
  }
  const ch = await requireGuildChannel(d, p, channelId, Permission.SEND_MESSAGES, {
    speaking: true,
  });
  d.people.ephemeral({
    type: 'TYPING_START',
    data,
    audience: { kind: 'channel', guildId: ch.guild_id, channelId: ch.id },
  });
}
