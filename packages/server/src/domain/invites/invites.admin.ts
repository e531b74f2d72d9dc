import { randomBytes } from 'node:crypto';
import type { AdminInvitePatch, CreateInviteBody, Invite } from '@parley/protocol';
import { notFound } from '../../errors/app-error.js';
import { iso } from '../../ids/clock.js';
import { isUniqueViolation } from '../../storage/db.js';
import type { InvitesTable } from '../../storage/schema-people.js';
import type { Domain } from '../context.js';

/**
 * D49/D52: invites as the operator sees them (the people's API creates them the same way).
 * `url` is the web app's invite page, `<public origin>/invite/<code>`.
 */
export const newInviteCode = (): string => randomBytes(6).toString('base64url');

const view = (d: Domain, r: InvitesTable): Invite => ({
  code: r.code,
  guildId: r.guild_id,
  url: `${d.urls.origin}/invite/${r.code}`,
  uses: r.uses,
  maxUses: r.max_uses,
  expiresAt: r.expires_at === null ? null : iso(r.expires_at),
});

export async function createInvite(
  d: Domain,
  guildId: number,
  body: CreateInviteBody,
  creatorId: number | null = null,
): Promise<Invite> {
  const guild = await d.db
    .selectFrom('guilds')
    .select('id')
    .where('id', '=', guildId)
    .executeTakeFirst();
  if (!guild) throw notFound('guild');
  const now = d.clock.now();
  for (let i = 0; ; i++) {
    const row: InvitesTable = {
      code: newInviteCode(),
      guild_id: guildId,
      creator_id: creatorId,
      max_uses: body.maxUses ?? null,
      uses: 0,
      expires_at: body.expiresInS === undefined ? null : now + body.expiresInS * 1000,
      created_at: now,
    };
    try {
      await d.db.insertInto('invites').values(row).execute();
      return view(d, row);
    } catch (err) {
      // 48 random bits: a collision is all but impossible; try another code anyway.
      if (!isUniqueViolation(err) || i >= 3) throw err;
    }
  }
}

/** A guild's invites, newest first (used up and expired ones included: the operator sees all). */
export async function listInvites(d: Domain, guildId: number): Promise<{ invites: Invite[] }> {
  const guild = await d.db
    .selectFrom('guilds')
    .select('id')
    .where('id', '=', guildId)
    .executeTakeFirst();
  if (!guild) throw notFound('guild');
  const rows = await d.db
    .selectFrom('invites')
    .selectAll()
    .where('guild_id', '=', guildId)
    .orderBy('created_at', 'desc')
    .orderBy('code')
    .execute();
  return { invites: rows.map((r) => view(d, r)) };
}

async function load(d: Domain, code: string): Promise<InvitesTable> {
  const r = await d.db
    .selectFrom('invites')
    .selectAll()
    .where('code', '=', code)
    .executeTakeFirst();
  if (!r) throw notFound('invite');
  return r;
}

export async function getInvite(d: Domain, code: string): Promise<Invite> {
  return view(d, await load(d, code));
}

/** Change the use limit or the expiry (null: unlimited / never). */
export async function updateInvite(
  d: Domain,
  code: string,
  body: AdminInvitePatch,
): Promise<Invite> {
  await load(d, code);
  await d.db
    .updateTable('invites')
    .set({
      ...(body.maxUses !== undefined ? { max_uses: body.maxUses } : {}),
      ...(body.expiresInS !== undefined
        ? {
            expires_at: body.expiresInS === null ? null : d.clock.now() + body.expiresInS * 1000,
          }
        : {}),
    })
    .where('code', '=', code)
    .execute();
  return getInvite(d, code);
}

export async function deleteInvite(d: Domain, code: string): Promise<void> {
  const res = await d.db.deleteFrom('invites').where('code', '=', code).executeTakeFirst();
  if (res.numDeletedRows === 0n) throw notFound('invite');
}
