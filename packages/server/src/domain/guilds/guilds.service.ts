import type { AppGuild, CreateGuildBody, Guild } from '@parley/protocol';
import { DEFAULT_EVERYONE_PERMISSIONS } from '@parley/protocol';
import { invalid, notFound } from '../../errors/app-error.js';
import type { Db } from '../../storage/db.js';
import type { Domain } from '../context.js';
import { guildView } from './guild-view.js';
import { memberView } from '../views.js';

/** D41: a guild with its @everyone role (id = guild id, D11) and its owner as first member. */
export async function createGuild(d: Domain, body: CreateGuildBody): Promise<Guild> {
  const owner = await d.db
    .selectFrom('users')
    .select(['id', 'name', 'avatar', 'is_bot'])
    .where('id', '=', body.ownerId)
    .executeTakeFirst();
  if (!owner) throw notFound('user');
  // D54: a bot user can never own a guild (ownership is a person's: it cannot be kicked, and
  // carries every right).
  if (owner.is_bot) throw invalid('ownerId', 'must be a person, not a bot user');
  const id = d.ids.next();
  await d.db.transaction().execute(async (trx) => {
    await insertGuild(trx, d, id, body.name, owner);
    await announceGuild(trx, d, id, owner);
  });
  return { id, name: body.name, ownerId: owner.id };
}

/**
 * The rows of a new guild inside `trx`: the guild, its @everyone role (id = guild id, D11) and
 * its owner as first member (GUILD_MEMBER_ADD, D34).
 */
export async function insertGuild(
  trx: Db,
  d: Domain,
  id: number,
  name: string,
  owner: { id: number; name: string; avatar: string | null },
): Promise<void> {
  const now = d.clock.now();
  await trx
    .insertInto('guilds')
    .values({ id, name, owner_id: owner.id, created_at: now })
    .execute();
  await trx
    .insertInto('roles')
    .values({
      id,
      guild_id: id,
      name: '@everyone',
      permissions: DEFAULT_EVERYONE_PERMISSIONS,
      created_at: now,
    })
    .execute();
  await trx
    .insertInto('members')
    .values({ guild_id: id, user_id: owner.id, joined_at: now })
    .execute();
  await d.events.record(trx, {
    envelope: {
      type: 'GUILD_MEMBER_ADD',
      data: { guildId: id, ...memberView(d.urls, owner, [], now) },
    },
    scope: { kind: 'guild', guildId: id },
  });
}

/** D51: GUILD_CREATE (the full guild) to its owner when the owner is a person; the view. */
export async function announceGuild(
  trx: Db,
  d: Domain,
  id: number,
  owner: { id: number; is_bot: number },
): Promise<AppGuild | undefined> {
  const view = await guildView(trx, id, owner.id);
  if (view && owner.is_bot === 0)
    d.people.people(trx, {
      type: 'GUILD_CREATE',
      data: view,
      audience: { kind: 'users', userIds: [owner.id] },
    });
  return view;
}
