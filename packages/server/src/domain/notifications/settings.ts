import type {
  NotificationLevel,
  NotificationSettingBody,
  NotificationSettings,
} from '@parley/protocol';
import { Permission } from '@parley/protocol';
import { AppError, invalid, notFound } from '../../errors/app-error.js';
import { iso } from '../../ids/clock.js';
import type { Db } from '../../storage/db.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { requireGuildChannel } from '../permissions/access.service.js';

/**
 * D66: `PUT /app/v1/users/@me/notification-settings {guildId | channelId, level, muteUntil?}`:
 * exactly one of the two ids (else 400), a guild the person is a member of or a channel they can
 * VIEW (a guild channel) or are a party of (a DM) — anything else is 404, as if unknown. One row
 * per person and target: a second PUT replaces the first. `muteUntil` absent or null: not muted.
 */
export async function putNotificationSetting(
  d: Domain,
  p: Principal,
  body: NotificationSettingBody,
): Promise<void> {
  const { guildId, channelId } = body;
  if ((guildId === undefined) === (channelId === undefined))
    throw invalid('guildId', 'or channelId: exactly one of the two is required');
  let muteUntil: number | null = null;
  if (body.muteUntil !== undefined && body.muteUntil !== null) {
    const ms = Date.parse(body.muteUntil);
    if (!Number.isFinite(ms)) throw invalid('muteUntil', 'must be an ISO 8601 date-time');
    muteUntil = ms;
  }
  if (guildId !== undefined) {
    const member = await d.db
      .selectFrom('members')
      .select('guild_id')
      .where('guild_id', '=', guildId)
      .where('user_id', '=', p.userId)
      .executeTakeFirst();
    if (!member) throw notFound('guild');
  } else {
    await requireVisibleChannel(d, p, channelId as number);
  }
  const target = (guildId ?? channelId) as number;
  await d.db
    .insertInto('notification_settings')
    .values({
      user_id: p.userId,
      target_id: target,
      guild_id: guildId ?? null,
      channel_id: channelId ?? null,
      level: body.level,
      mute_until: muteUntil,
    })
    .onConflict((oc) =>
      oc
        .columns(['user_id', 'target_id'])
        .doUpdateSet({ level: body.level, mute_until: muteUntil }),
    )
    .execute();
}

/** A guild channel the person can VIEW or a DM of theirs; otherwise 404 (nothing revealed). */
async function requireVisibleChannel(d: Domain, p: Principal, channelId: number): Promise<void> {
  const ch = await d.db
    .selectFrom('channels')
    .select(['guild_id', 'dm_user_low', 'dm_user_high'])
    .where('id', '=', channelId)
    .executeTakeFirst();
  if (!ch) throw notFound('channel');
  if (ch.guild_id === null) {
    if (ch.dm_user_low !== p.userId && ch.dm_user_high !== p.userId) throw notFound('channel');
    return;
  }
  try {
    await requireGuildChannel(d, p, channelId, Permission.VIEW_CHANNEL);
  } catch (err) {
    if (err instanceof AppError) throw notFound('channel');
    throw err;
  }
}

/** D66: `GET …/notification-settings` → `{settings:[{guildId?, channelId?, level, muteUntil}]}`. */
export async function listNotificationSettings(
  d: Domain,
  p: Principal,
): Promise<NotificationSettings> {
  const rows = await d.db
    .selectFrom('notification_settings')
    .select(['guild_id', 'channel_id', 'level', 'mute_until'])
    .where('user_id', '=', p.userId)
    .orderBy('target_id', 'asc')
    .execute();
  return {
    settings: rows.map((r) => ({
      ...(r.guild_id !== null ? { guildId: Number(r.guild_id) } : {}),
      ...(r.channel_id !== null ? { channelId: Number(r.channel_id) } : {}),
      level: r.level,
      muteUntil: r.mute_until === null ? null : iso(Number(r.mute_until)),
    })),
  };
}

/** One person's effective setting for a channel: the channel's row wins over its guild's. */
export interface EffectiveSetting {
  level: NotificationLevel;
  muted: boolean;
}

/**
 * D66: the effective settings of `userIds` for one channel (of `guildId`, null for a DM) at
 * `now`. Without a row: `mentions` in a guild (only what addresses the person notifies), `all`
 * in a DM.
 */
export async function effectiveSettings(
  db: Db,
  userIds: readonly number[],
  channelId: number,
  guildId: number | null,
  now: number,
): Promise<Map<number, EffectiveSetting>> {
  const out = new Map<number, EffectiveSetting>();
  const fallback: NotificationLevel = guildId === null ? 'all' : 'mentions';
  for (const u of userIds) out.set(u, { level: fallback, muted: false });
  if (userIds.length === 0) return out;
  const targets = guildId === null ? [channelId] : [channelId, guildId];
  const rows = await db
    .selectFrom('notification_settings')
    .select(['user_id', 'target_id', 'level', 'mute_until'])
    .where('user_id', 'in', [...userIds])
    .where('target_id', 'in', targets)
    .execute();
  // the guild's rows first, so that a channel's overrides it
  rows.sort(
    (a, b) =>
      (Number(a.target_id) === channelId ? 1 : 0) - (Number(b.target_id) === channelId ? 1 : 0),
  );
  for (const r of rows)
    out.set(Number(r.user_id), {
      level: r.level,
      muted: r.mute_until !== null && Number(r.mute_until) > now,
    });
  return out;
}
