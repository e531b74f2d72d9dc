import { notFound } from '../../errors/app-error.js';
import type { Db } from '../../storage/db.js';

/**
 * D46/D49: use one invite inside the caller's transaction and answer its guild. Unknown, used up
 * or expired → 404 (which of them is not told). The check and the count are one guarded UPDATE,
 * atomic on both dialects (PostgreSQL re-checks the guard under the row lock; SQLite runs one
 * write transaction at a time), so concurrent uses can never pass `max_uses`. Shared by register
 * (D46) and accepting an invite (D49).
 */
export async function consumeInvite(trx: Db, code: string, now: number): Promise<number> {
  const used = await trx
    .updateTable('invites')
    .set((eb) => ({ uses: eb('uses', '+', 1) }))
    .where('code', '=', code)
    .where((eb) => eb.or([eb('max_uses', 'is', null), eb('uses', '<', eb.ref('max_uses'))]))
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirst();
  if (used.numUpdatedRows === 0n) throw notFound('invite (or it is used up or expired)');
  const row = await trx
    .selectFrom('invites')
    .select('guild_id')
    .where('code', '=', code)
    .executeTakeFirstOrThrow();
  return Number(row.guild_id);
}
