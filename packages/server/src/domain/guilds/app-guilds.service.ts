import type { AppGuild } from '@parley/protocol';
import { forbidden, notFound } from '../../errors/app-error.js';
import { purgeGuild } from '../admin/purge.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { requireGuildMember } from '../permissions/access.service.js';
import { requireGuildAdmin } from './admin-access.js';
import { emitGuildUpdate } from './audience.js';
import { guildView } from './guild-view.js';
import { announceGuild, insertGuild } from './guilds.service.js';

/**
 * D49: guilds for people. The caller of `createAppGuild` owns the new guild, which starts with
 * a text channel `general`; the answer is the guild as GET shows it (and GUILD_CREATE, D51).
 */
export async function createAppGuild(d: Domain, p: Principal, name: string): Promise<AppGuild> {
  const owner = await d.db
    .selectFrom('users')
    .select(['id', 'name', 'avatar', 'is_bot'])
    .where('id', '=', p.userId)
    .executeTakeFirst();
  if (!owner) throw notFound('user');
  const id = d.ids.next();
  return d.db.transaction().execute(async (trx) => {
    await insertGuild(trx, d, id, name, owner);
    await trx
      .insertInto('channels')
      .values({
        id: d.ids.next(),
        guild_id: id,
        type: 0,
        name: 'general',
        topic: '',
        dm_user_low: null,
        dm_user_high: null,
        created_at: d.clock.now(),
      })
      .execute();
    const view = await announceGuild(trx, d, id, owner);
    if (!view) throw notFound('guild');
    return view;
  });
}

/** D49: members only (403), 404 for an unknown guild. */
export async function getAppGuild(d: Domain, p: Principal, guildId: number): Promise<AppGuild> {
  await requireGuildMember(d, p, guildId);
  const view = await guildView(d.db, guildId, p.userId);
  // Removed or deleted between the check and the read.
  if (!view) throw notFound('guild');
  return view;
}

/** D49 rename (ADMINISTRATOR): GUILD_UPDATE to every member, as each sees the guild (D51). */
export async function renameGuild(
  d: Domain,
  p: Principal,
  guildId: number,
  name: string,
): Promise<AppGuild> {
  await requireGuildAdmin(d, p, guildId);
  return d.db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('guilds')
      .set({ name })
      .where('id', '=', guildId)
      .executeTakeFirst();
    if (res.numUpdatedRows === 0n) throw notFound('guild');
    await emitGuildUpdate(trx, d, guildId);
    const view = await guildView(trx, guildId, p.userId);
    if (!view) throw forbidden('Not a member of this guild');
    return view;
  });
}

/**
 * D49: only the owner deletes a guild; everything that hangs on it goes in one transaction
 * (purge.ts `purgeGuild`, shared with the operator). Each bot member gets its own
 * GUILD_MEMBER_REMOVE, the bots leaving one by one; every person gets GUILD_DELETE.
 */
export async function deleteGuild(d: Domain, p: Principal, guildId: number): Promise<void> {
  const g = await requireGuildMember(d, p, guildId);
  if (g.ownerId !== p.userId) throw forbidden('Only the owner may delete the guild');
  await d.db.transaction().execute((trx) => purgeGuild(d, trx, guildId, 'one-by-one'));
}
