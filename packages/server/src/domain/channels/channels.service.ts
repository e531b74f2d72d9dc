import type {
  Channel,
  ChannelSummary,
  CreateChannelBody,
  Overwrite,
  OverwriteBody,
} from '@parley/protocol';
import { Permission } from '@parley/protocol';
import { notFound } from '../../errors/app-error.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import {
  requireGuildChannel,
  requireGuildMember,
  requireGuild,
} from '../permissions/access.service.js';
import { channelPermissions, has } from '../permissions/permissions.js';
import { channelSummaryView, channelView } from '../views.js';
import { emitViewChanges, viewSnapshot } from '../guilds/audience.js';
import { toViewers } from './app-channels.service.js';
import { requireChannelRoom } from './channel-limit.js';

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

// Operator side (D41).

export async function createChannel(
  d: Domain,
  guildId: number,
  body: CreateChannelBody,
): Promise<Channel> {
  await requireGuild(d.db, guildId);
  const row = {
    id: d.ids.next(),
    guild_id: guildId,
    type: body.type ?? 0,
    name: body.name,
    topic: body.topic ?? '',
  };
  const channel = channelView(row);
  await d.db.transaction().execute(async (trx) => {
    // D70: at most 500 channels; CHANNEL_CREATE to the people who can see it.
    await requireChannelRoom(trx, d, guildId);
    await trx
      .insertInto('channels')
      .values({ ...row, dm_user_low: null, dm_user_high: null, created_at: d.clock.now() })
      .execute();
    await toViewers(trx, d, 'CHANNEL_CREATE', channel);
  });
  return channel;
}

export async function setOverwrite(
  d: Domain,
  channelId: number,
  roleId: number,
  body: OverwriteBody,
): Promise<Overwrite> {
  const ch = await d.db
    .selectFrom('channels')
    .select(['id', 'guild_id'])
    .where('id', '=', channelId)
    .executeTakeFirst();
  if (!ch || ch.guild_id === null) throw notFound('channel');
  const role = await d.db
    .selectFrom('roles')
    .select('id')
    .where('id', '=', roleId)
    .where('guild_id', '=', ch.guild_id)
    .executeTakeFirst();
  if (!role) throw notFound('role');
  const guildId = ch.guild_id;
  await d.db.transaction().execute(async (trx) => {
    // D70: people who gain or lose the channel hear CHANNEL_CREATE / CHANNEL_DELETE.
    const before = await viewSnapshot(trx, guildId);
    await trx
      .insertInto('channel_overwrites')
      .values({ channel_id: channelId, role_id: roleId, allow: body.allow, deny: body.deny })
      .onConflict((oc) =>
        oc.columns(['channel_id', 'role_id']).doUpdateSet({ allow: body.allow, deny: body.deny }),
      )
      .execute();
    await emitViewChanges(trx, d, guildId, before);
  });
  return { channelId, roleId, allow: body.allow, deny: body.deny };
}
