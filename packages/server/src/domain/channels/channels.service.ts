import type { Channel, ChannelSummary } from '@parley/protocol';
import { Permission } from '@parley/protocol';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { requireGuildChannel, requireGuildMember } from '../permissions/access.service.js';
import { channelPermissions, has } from '../permissions/permissions.js';
import { channelSummaryView, channelView } from '../views.js';

/** D12/D19: the guild's channels the caller can VIEW, oldest first. */
export async function listGuildChannels(
  d: Domain,
  p: Principal,
  guildId: number,
): Promise<ChannelSummary[]> {
  const { access } = await requireGuildMember(d, p, guildId);
  const [channels, overwrites] = await Promise.all([
    d.db
      .selectFrom('channels')
      .select(['id', 'guild_id', 'type', 'name', 'topic'])
      .where('guild_id', '=', guildId)
      .orderBy('id', 'asc')
      .execute(),
    d.db
      .selectFrom('channel_overwrites as o')
      .innerJoin('channels as c', 'c.id', 'o.channel_id')
      .select(['o.channel_id', 'o.role_id as roleId', 'o.allow', 'o.deny'])
      .where('c.guild_id', '=', guildId)
      .execute(),
  ]);
  return channels
    .filter((c) =>
      has(
        channelPermissions(
          access,
          guildId,
          overwrites.filter((o) => o.channel_id === c.id),
        ),
        Permission.VIEW_CHANNEL,
      ),
    )
    .map((c) => channelSummaryView({ ...c, guild_id: guildId }));
}

export async function getGuildChannel(
  d: Domain,
  p: Principal,
  channelId: number,
): Promise<Channel> {
  return channelView(await requireGuildChannel(d, p, channelId, 0));
}
