import { Permission } from '@parley/protocol';
import { AppError, forbidden, notFound } from '../../errors/app-error.js';
import { iso } from '../../ids/clock.js';
import type { Db } from '../../storage/db.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import type { ChannelRow } from '../views.js';
import {
  bitNames,
  channelPermissions,
  has,
  type MemberAccess,
  type OverwriteRow,
} from './permissions.js';

export interface GuildChannel extends ChannelRow {
  guild_id: number;
  /** the caller's bits in this channel (D11 overwrites applied) */
  bits: number;
}

/** What the access check caches of a member (below), as loaded. */
interface Standing {
  everyone: number;
  roles: Array<{ id: number; permissions: number }>;
  timeoutUntil: number | null;
  /** D62/D66: a mention tells bots from people by it (a user's kind never changes) */
  isBot: boolean;
}

/**
 * A member's standing, or null when `userId` is not a member: cached per (guild, user) until a
 * write could change it (domain/derived-cache.ts).
 */
function standingOf(
  d: Domain,
  guildId: number,
  userId: number,
  version: number | undefined,
  db: Db,
): Standing | null | Promise<Standing | null> {
  return d.cache.get(
    `member:${guildId}:${userId}`,
    async (): Promise<Standing | null> => {
      const [member, everyone, roles] = await Promise.all([
        db
          .selectFrom('members as m')
          .innerJoin('users as u', 'u.id', 'm.user_id')
          .select(['m.timeout_until', 'u.is_bot'])
          .where('m.guild_id', '=', guildId)
          .where('m.user_id', '=', userId)
          .executeTakeFirst(),
        db.selectFrom('roles').select('permissions').where('id', '=', guildId).executeTakeFirst(),
        db
          .selectFrom('member_roles as mr')
          .innerJoin('roles as r', 'r.id', 'mr.role_id')
          .select(['r.id', 'r.permissions'])
          .where('mr.guild_id', '=', guildId)
          .where('mr.user_id', '=', userId)
          .execute(),
      ]);
      return member
        ? {
            everyone: everyone?.permissions ?? 0,
            roles,
            timeoutUntil: member.timeout_until === null ? null : Number(member.timeout_until),
            isBot: Number(member.is_bot) === 1,
          }
        : null;
    },
    version,
  );
}

/**
 * The caller's standing in a guild, or null when it is not a member. Cached, it is known at once
 * (no promise: the access check runs on every request, issue 29); callers await it.
 */
export function memberAccess(
  d: Domain,
  guildId: number,
  ownerId: number,
  userId: number,
  /** a version from d.cache.now() shared with the caller's other lookups */
  version?: number,
  /** where a miss loads from: a transaction's own handle inside one (see viewersAmong) */
  db: Db = d.db,
): MemberAccess | null | Promise<MemberAccess | null> {
  const standing = standingOf(d, guildId, userId, version, db);
  const access = (s: Standing | null): MemberAccess | null =>
    s && {
      isOwner: ownerId === userId,
      everyone: s.everyone,
      roles: s.roles,
      timeoutUntil: s.timeoutUntil,
    };
  return standing instanceof Promise ? standing.then(access) : access(standing);
}

/**
 * D62: which of `userIds` are members of the guild (in their order), and which of those are
 * people — from the standings the access check caches, so a send that mentions an active member
 * reads nothing (issue 24's "mention + reply" send). `db` as in viewersAmong.
 */
export async function membersAmong(
  d: Domain,
  guildId: number,
  userIds: readonly number[],
  db: Db = d.db,
): Promise<{ members: number[]; people: number[] }> {
  const now = d.cache.now();
  const version = typeof now === 'number' ? now : await now;
  const members: number[] = [];
  const people: number[] = [];
  for (const id of userIds) {
    const standing = await standingOf(d, guildId, id, version, db);
    if (!standing) continue;
    members.push(id);
    if (!standing.isBot) people.push(id);
  }
  return { members, people };
}

/** The guild, or 404: the one "does this guild exist" check of the domain. */
export async function requireGuild(
  db: Db,
  guildId: number,
): Promise<{ id: number; owner_id: number }> {
  const guild = await db
    .selectFrom('guilds')
    .select(['id', 'owner_id'])
    .where('id', '=', guildId)
    .executeTakeFirst();
  if (!guild) throw notFound('guild');
  return guild;
}

/** D12: 404 when the guild does not exist, 403 when the caller is not a member. */
export async function requireGuildMember(
  d: Domain,
  p: Principal,
  guildId: number,
): Promise<{ guildId: number; ownerId: number; access: MemberAccess }> {
  const guild = await requireGuild(d.db, guildId);
  const access = await memberAccess(d, guild.id, guild.owner_id, p.userId);
  if (!access) throw forbidden('Not a member of this guild');
  return { guildId: guild.id, ownerId: guild.owner_id, access };
}

/** A channel's permission overwrites (D11), cached like the rest of an access check. */
export function channelOverwrites(
  d: Domain,
  channelId: number,
  version?: number,
  db: Db = d.db,
): readonly OverwriteRow[] | Promise<readonly OverwriteRow[]> {
  return d.cache.get(
    `overwrites:${channelId}`,
    () =>
      db
        .selectFrom('channel_overwrites')
        .select(['role_id as roleId', 'allow', 'deny'])
        .where('channel_id', '=', channelId)
        .execute(),
    version,
  );
}

/**
 * D58: a timed-out member can only read: sending, reacting, typing and invoking commands are
 * 403 TIMED_OUT until the time-out ends (the owner is never timed out).
 */
export function requireNotTimedOut(d: Pick<Domain, 'clock'>, access: MemberAccess): void {
  const until = access.timeoutUntil ?? null;
  if (until !== null && until > d.clock.now() && !access.isOwner)
    throw new AppError('TIMED_OUT', `You are timed out in this guild until ${iso(until)}`);
}

/** A channel with its guild's owner, cached like the rest of an access check. */
function channelWithOwner(d: Domain, channelId: number, version?: number, db: Db = d.db) {
  return d.cache.get(
    `channel:${channelId}`,
    () =>
      db
        .selectFrom('channels as c')
        .innerJoin('guilds as g', 'g.id', 'c.guild_id')
        .select(['c.id', 'c.guild_id', 'c.type', 'c.name', 'c.topic', 'g.owner_id'])
        .where('c.id', '=', channelId)
        .executeTakeFirst(),
    version,
  );
}

/**
 * D12/D66: which of `userIds` (members or not) can VIEW a guild channel, worked out from each
 * one's standing and the channel's overwrites as the access check does — and from the same
 * cached lookups, so no read while nothing changed, where building each standing's view of the
 * whole guild (guilds/audience.ts viewGroups) is ten reads. `db`: where a miss loads from — inside
 * a transaction its own handle (SQLite has one connection: a load through `d.db` would wait for
 * the transaction that waits for it). Ascending ids; none for a DM or an unknown channel.
 */
export async function viewersAmong(
  d: Domain,
  channelId: number,
  userIds: readonly number[],
  db: Db = d.db,
): Promise<number[]> {
  const now = d.cache.now();
  const version = typeof now === 'number' ? now : await now;
  const ch = await channelWithOwner(d, channelId, version, db);
  if (!ch || ch.guild_id === null) return [];
  const overwrites = await channelOverwrites(d, ch.id, version, db);
  const out: number[] = [];
  for (const id of userIds) {
    const access = await memberAccess(d, ch.guild_id, ch.owner_id, id, version, db);
    if (access && has(channelPermissions(access, ch.guild_id, overwrites), Permission.VIEW_CHANNEL))
      out.push(id);
  }
  return out.sort((a, b) => a - b);
}

/**
 * D12: a guild channel the caller may use with `needed` bits. Order of answers: unknown (or DM)
 * channel 404, not a member 403, cannot VIEW 403, lacks a needed bit 403.
 */
export function requireGuildChannel(
  d: Domain,
  p: Principal,
  channelId: number,
  needed: number,
  /** D58: the caller speaks (sends, reacts, types, invokes a command): refused while timed out */
  opts: { speaking?: boolean } = {},
): GuildChannel | Promise<GuildChannel> {
  // One version read for the three lookups (on PostgreSQL each read is a round trip) — the one
  // the request was authenticated at, if it has one: an access check comes before any write.
  // Everything cached (SQLite, nothing changed): decided at once, without a promise (issue 29).
  const now = p.pinned ?? d.cache.now();
  const check = (version: number): GuildChannel | Promise<GuildChannel> => {
    const ch = channelWithOwner(d, channelId, version);
    return ch instanceof Promise
      ? ch.then((c) => checkIn(d, p, c, needed, opts, version))
      : checkIn(d, p, ch, needed, opts, version);
  };
  return typeof now === 'number' ? check(now) : now.then(check);
}

type ChannelWithOwner = Awaited<ReturnType<typeof channelWithOwner>>;

function checkIn(
  d: Domain,
  p: Principal,
  ch: ChannelWithOwner,
  needed: number,
  opts: { speaking?: boolean },
  version: number,
): GuildChannel | Promise<GuildChannel> {
  if (!ch || ch.guild_id === null) throw notFound('channel');
  const guildId = ch.guild_id;
  const access = memberAccess(d, guildId, ch.owner_id, p.userId, version);
  const overwrites = channelOverwrites(d, ch.id, version);
  const decide = (a: MemberAccess | null, o: readonly OverwriteRow[]): GuildChannel => {
    if (!a) throw forbidden('Not a member of this guild');
    const bits = channelPermissions(a, guildId, o);
    const want = needed | Permission.VIEW_CHANNEL;
    if (!has(bits, want)) {
      throw forbidden(`Missing permission: ${bitNames(want & ~bits).join(', ')}`);
    }
    if (opts.speaking) requireNotTimedOut(d, a);
    return { id: ch.id, guild_id: guildId, type: ch.type, name: ch.name, topic: ch.topic, bits };
  };
  return access instanceof Promise || overwrites instanceof Promise
    ? Promise.all([access, overwrites]).then(([a, o]) => decide(a, o))
    : decide(access, overwrites);
}
