import { ALL_PERMISSIONS, Permission } from '@parley/protocol';
import { forbidden, notFound } from '../../errors/app-error.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { requireDmChannel } from '../dms/dms.service.js';
import { channelOverwrites, memberAccess } from '../permissions/access.service.js';
import { channelPermissions, has, type MemberAccess } from '../permissions/permissions.js';

/**
 * Where a command runs (D64): a guild channel with the caller's bits there, or a DM with a bot
 * (every bit a DM allows; the bot is the only one whose commands run there).
 */
export type Place =
  | {
      kind: 'guild';
      channelId: number;
      guildId: number;
      ownerId: number;
      access: MemberAccess;
      bits: number;
    }
  | { kind: 'dm'; channelId: number; otherUserId: number; bits: number };

/** 404 unknown channel, 403 not a member / not a party / cannot VIEW it. */
export async function placeOf(d: Domain, p: Principal, channelId: number): Promise<Place> {
  const ch = await d.db
    .selectFrom('channels as c')
    .leftJoin('guilds as g', 'g.id', 'c.guild_id')
    .select(['c.id', 'c.guild_id', 'g.owner_id', 'c.dm_user_low', 'c.dm_user_high'])
    .where('c.id', '=', channelId)
    .executeTakeFirst();
  if (!ch) throw notFound('channel');
  if (ch.guild_id === null || ch.owner_id === null) {
    const dm = await requireDmChannel(d, p, channelId);
    return {
      kind: 'dm',
      channelId: dm.id,
      otherUserId: dm.userLow === p.userId ? dm.userHigh : dm.userLow,
      bits: ALL_PERMISSIONS & ~Permission.ADMINISTRATOR,
    };
  }
  const access = await memberAccess(d, ch.guild_id, ch.owner_id, p.userId);
  if (!access) throw forbidden('Not a member of this guild');
  const bits = channelPermissions(access, ch.guild_id, await channelOverwrites(d, ch.id));
  if (!has(bits, Permission.VIEW_CHANNEL)) throw forbidden('Missing permission: VIEW_CHANNEL');
  return {
    kind: 'guild',
    channelId: ch.id,
    guildId: ch.guild_id,
    ownerId: ch.owner_id,
    access,
    bits,
  };
}

/**
 * D64: may a member with `bits` see and run a command that asks for `needed`
 * (defaultMemberPermissions)? Absent or null: anyone who may use commands; 0: administrators only
 * (as Discord: "disabled by default").
 */
export function mayRun(bits: number, needed: number | null | undefined): boolean {
  if (needed === null || needed === undefined) return true;
  if (needed === 0) return has(bits, Permission.ADMINISTRATOR) || bits === ALL_PERMISSIONS;
  return has(bits, needed);
}
