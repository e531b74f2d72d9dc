import type { AdminInvitePatch, Invite } from '@parley/protocol';
import { notFound } from '../../errors/app-error.js';
import type { InvitesTable } from '../../storage/schema-people.js';
import { requireGuild } from '../permissions/access.service.js';
import type { Domain } from '../context.js';
import * as core from './invites.service.js';

/**
 * D49/D52: invites as the operator sees them. Thin operator-side wrappers (no principal, no
 * access check) over the one core in invites.service.ts. Creating and deleting are the one
 * createInvite / deleteInvite of invites.service.ts, with the operator as actor (D59).
 */

/** A guild's invites, newest first (used up and expired ones included: the operator sees all). */
export async function listInvites(d: Domain, guildId: number): Promise<{ invites: Invite[] }> {
  await requireGuild(d.db, guildId);
  return { invites: await core.guildInvites(d, guildId) };
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
  return core.inviteView(d, await load(d, code));
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
