import { Permission } from '@parley/protocol';
import type { Db } from '../../storage/db.js';
import { channelPermissions, has, type MemberAccess } from '../permissions/permissions.js';
import type { DerivedCache } from '../derived-cache.js';
import type { PeopleAudience, RecordedEvent } from './recorder.js';

/**
 * D34: which bots receive an event, decided inside the writing transaction, so membership and
 * VIEW_CHANNEL are those at the time of the event.
 *  - channel events: every bot that is a member of the guild and can VIEW the channel (its own
 *    messages included);
 *  - guild events (member add / remove): every bot in the guild, plus `alsoUserId` (a removed bot
 *    gets its own removal: members.service records it before deleting the member);
 *  - DM events: each bot that is a party of the DM.
 * Returns bot ids (not bot-user ids), ascending and unique: the order in which their stream rows
 * are locked, the same in every transaction so concurrent writers never deadlock.
 */
export function recipientBots(
  trx: Db,
  cache: DerivedCache,
  scope: RecordedEvent['scope'],
  /** a version from cache.now() shared with the caller's other lookups */
  version?: number,
): readonly number[] | Promise<readonly number[]> {
  // Read inside the writing transaction, so a change to membership or roles made earlier in the
  // same transaction has already moved the cache's version and is seen (derived-cache.ts).
  return cache.get(
    `recipients:${JSON.stringify(scope)}`,
    () => loadRecipients(trx, scope),
    version,
  );
}

async function loadRecipients(trx: Db, scope: RecordedEvent['scope']): Promise<number[]> {
  switch (scope.kind) {
    case 'bot':
      return [scope.botId];
    case 'dm':
      return botsOfUsers(trx, scope.userIds);
    case 'guild': {
      const bots = await guildBots(trx, scope.guildId);
      const ids = new Set(bots.map((b) => b.botId));
      if (scope.alsoUserId !== undefined)
        for (const id of await botsOfUsers(trx, [scope.alsoUserId])) ids.add(id);
      return [...ids].sort((a, b) => a - b);
    }
    case 'channel':
      return channelBots(trx, scope.guildId, scope.channelId);
  }
}

export async function botsOfUsers(trx: Db, userIds: readonly number[]): Promise<number[]> {
  const rows = await trx
    .selectFrom('bots')
    .select('id')
    .where('user_id', 'in', [...userIds])
    .orderBy('id', 'asc')
    .execute();
  return [...new Set(rows.map((r) => r.id))];
}

async function guildBots(
  trx: Db,
  guildId: number,
): Promise<Array<{ botId: number; userId: number }>> {
  const rows = await trx
    .selectFrom('members as m')
    .innerJoin('bots as b', 'b.user_id', 'm.user_id')
    .select(['b.id as botId', 'm.user_id as userId'])
    .where('m.guild_id', '=', guildId)
    .orderBy('b.id', 'asc')
    .execute();
  return rows;
}

async function channelBots(trx: Db, guildId: number, channelId: number): Promise<number[]> {
  // One query for the bots with what every one of them shares (owner, @everyone's bits) …
  const bots = await trx
    .selectFrom('members as m')
    .innerJoin('bots as b', 'b.user_id', 'm.user_id')
    .innerJoin('guilds as g', 'g.id', 'm.guild_id')
    .leftJoin('roles as e', 'e.id', 'm.guild_id')
    .select(['b.id as botId', 'm.user_id as userId', 'g.owner_id as ownerId', 'e.permissions'])
    .where('m.guild_id', '=', guildId)
    .orderBy('b.id', 'asc')
    .execute();
  const first = bots[0];
  if (!first) return [];
  const everyone = first.permissions ?? 0;
  const overwrites = await trx
    .selectFrom('channel_overwrites')
    .select(['role_id as roleId', 'allow', 'deny'])
    .where('channel_id', '=', channelId)
    .execute();
  // … and the common case needs nothing more: no overwrites and @everyone may VIEW (D11 default).
  if (overwrites.length === 0 && has(everyone, Permission.VIEW_CHANNEL))
    return bots.map((b) => b.botId);
  const roles = await trx
    .selectFrom('member_roles as mr')
    .innerJoin('roles as r', 'r.id', 'mr.role_id')
    .innerJoin('bots as b', 'b.user_id', 'mr.user_id')
    .select(['mr.user_id as userId', 'r.id', 'r.permissions'])
    .where('mr.guild_id', '=', guildId)
    .execute();
  const rolesOf = new Map<number, Array<{ id: number; permissions: number }>>();
  for (const r of roles) {
    const list = rolesOf.get(r.userId) ?? [];
    list.push({ id: r.id, permissions: r.permissions });
    rolesOf.set(r.userId, list);
  }
  // The same permission math as every REST check (D11), on rows read in this transaction.
  return bots
    .filter((b) => {
      const access: MemberAccess = {
        isOwner: b.ownerId === b.userId,
        everyone,
        roles: rolesOf.get(b.userId) ?? [],
      };
      return has(channelPermissions(access, guildId, overwrites), Permission.VIEW_CHANNEL);
    })
    .map((b) => b.botId);
}

/**
 * D63: the bots a people's event (D51 audience) would reach by D34's rules — for the bots that
 * subscribed to people's types (GUILD_CREATE, CHANNEL_UPDATE, TYPING_START, …).
 */
export async function botsOfAudience(
  trx: Db,
  cache: DerivedCache,
  audience: PeopleAudience,
  version?: number,
): Promise<readonly number[]> {
  switch (audience.kind) {
    case 'channel':
      return recipientBots(
        trx,
        cache,
        { kind: 'channel', guildId: audience.guildId, channelId: audience.channelId },
        version,
      );
    case 'guild': {
      const base = await recipientBots(
        trx,
        cache,
        { kind: 'guild', guildId: audience.guildId },
        version,
      );
      if (!audience.alsoUserIds || audience.alsoUserIds.length === 0) return base;
      const more = await botsOfUsers(trx, audience.alsoUserIds);
      return [...new Set([...base, ...more])].sort((a, b) => a - b);
    }
    case 'users':
      return botsOfUsers(trx, audience.userIds);
  }
}
