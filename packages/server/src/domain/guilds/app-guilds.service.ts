import { Permission, type AppGuild } from '@parley/protocol';
import { forbidden, notFound } from '../../errors/app-error.js';
import { purgeGuild } from '../admin/purge.js';
import { diff, writeAudit } from '../audit/audit.service.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import type { Actor } from './actor.js';
import { emitGuildUpdate, emitViewChanges, viewSnapshot } from './audience.js';
import { requireRight } from './rights.js';
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

/**
 * D49/D59: a guild as the caller sees it — members only (403), 404 for an unknown guild; bots
 * read it under /api/v1 too (their own myPermissions).
 */
export async function getAppGuild(d: Domain, actor: Actor, guildId: number): Promise<AppGuild> {
  if (actor.kind === 'operator') throw forbidden('The operator reads guilds at /admin/v1');
  await requireRight(d, actor, guildId, 0);
  const view = await guildView(d.db, guildId, actor.principal.userId);
  // Removed or deleted between the check and the read.
  if (!view) throw notFound('guild');
  return view;
}

/**
 * D49/D52/D59 change a guild: rename (MANAGE_GUILD) — GUILD_UPDATE to every member, as each sees
 * the guild (D51); hand it to another member (the operator only: `ownerId`, who must already be
 * a member) — the old and new owner also hear the channels they gained or lost (D70).
 */
export async function updateGuild(
  d: Domain,
  actor: Actor,
  guildId: number,
  body: { name?: string | undefined; ownerId?: number | undefined },
): Promise<void> {
  await requireRight(d, actor, guildId, Permission.MANAGE_GUILD);
  if (body.ownerId !== undefined && actor.kind !== 'operator')
    throw forbidden('Only the operator hands a guild to another owner');
  await d.db.transaction().execute(async (trx) => {
    const current = await trx
      .selectFrom('guilds')
      .select(['name', 'owner_id'])
      .where('id', '=', guildId)
      .executeTakeFirst();
    if (!current) throw notFound('guild');
    if (body.ownerId !== undefined) {
      const member = await trx
        .selectFrom('members')
        .select('user_id')
        .where('guild_id', '=', guildId)
        .where('user_id', '=', body.ownerId)
        .executeTakeFirst();
      if (!member) throw notFound('member (the new owner must be a member of the guild)');
    }
    const concerned = body.ownerId === undefined ? [] : [Number(current.owner_id), body.ownerId];
    const before = await viewSnapshot(trx, guildId, concerned);
    await trx
      .updateTable('guilds')
      .set({
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.ownerId !== undefined ? { owner_id: body.ownerId } : {}),
      })
      .where('id', '=', guildId)
      .execute();
    await writeAudit(trx, d, actor, {
      guildId,
      action: 'GUILD_UPDATE',
      targetId: guildId,
      changes: diff(
        { name: current.name, ownerId: Number(current.owner_id) },
        { name: body.name, ownerId: body.ownerId },
      ),
    });
    await emitGuildUpdate(trx, d, guildId);
    if (concerned.length > 0)
      await emitViewChanges(trx, d, guildId, before, { only: concerned, permissions: true });
  });
}

/** D49 rename (MANAGE_GUILD), answered with the guild as the caller sees it. */
export async function renameGuild(
  d: Domain,
  p: Principal,
  guildId: number,
  name: string,
  reason: string | null = null,
): Promise<AppGuild> {
  await updateGuild(d, { kind: p.isBot ? 'bot' : 'person', principal: p, reason }, guildId, {
    name,
  });
  const view = await guildView(d.db, guildId, p.userId);
  if (!view) throw forbidden('Not a member of this guild');
  return view;
}

/**
 * D49/D52: only the owner (or the operator) deletes a guild; everything that hangs on it goes in
 * one transaction (purge.ts `purgeGuild`). The owner's way: each bot member gets its own
 * GUILD_MEMBER_REMOVE, the bots leaving one by one; the operator's: all removals recorded while
 * every bot is still there (the tests pin each order). Every person gets GUILD_DELETE.
 */
export async function deleteGuild(d: Domain, actor: Actor, guildId: number): Promise<void> {
  const s = await requireRight(d, actor, guildId, 0);
  if (actor.kind !== 'operator' && s.ownerId !== actor.principal.userId)
    throw forbidden('Only the owner may delete the guild');
  await d.db.transaction().execute(async (trx) => {
    await purgeGuild(d, trx, guildId, actor.kind === 'operator' ? 'together' : 'one-by-one');
    // The guild's own log goes with it; the operator's deletion stays in the operator's log.
    await trx
      .deleteFrom('audit_log')
      .where('guild_id', '=', guildId)
      .where('operator_log', '=', 0)
      .execute();
    if (actor.kind === 'operator')
      await writeAudit(trx, d, actor, { guildId: null, action: 'GUILD_DELETE', targetId: guildId });
  });
}
