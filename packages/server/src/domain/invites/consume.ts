import { forbidden, notFound } from '../../errors/app-error.js';
import type { Db } from '../../storage/db.js';
import type { Domain } from '../context.js';
import { joinGuild } from '../members/members.service.js';

/**
 * D46/D49: consume an invite and join its guild inside `trx` — the invite's accept route, and
 * registering with an invite (the new person's row is written in the same transaction).
 *  - unknown, used up or expired → 404 NOT_FOUND;
 *  - banned from the guild → 403 FORBIDDEN;
 *  - already a member → `{joined: false}`: no use is counted, no event is sent;
 *  - otherwise the member is added (GUILD_MEMBER_ADD to the bots, D34; GUILD_CREATE to the
 *    person, D51) and one use is counted.
 * The use is counted by one guarded UPDATE (`uses < max_uses`, not expired): two people taking
 * the last use at once cannot both pass (PostgreSQL re-checks the condition on the locked row;
 * SQLite writes one transaction at a time), and the loser's join rolls back with its 404.
 */
export async function consumeInvite(
  trx: Db,
  d: Domain,
  code: string,
  userId: number,
): Promise<{ guildId: number; joined: boolean }> {
  const now = d.clock.now();
  const invite = await trx
    .selectFrom('invites')
    .select(['guild_id', 'uses', 'max_uses', 'expires_at'])
    .where('code', '=', code)
    .executeTakeFirst();
  if (
    !invite ||
    (invite.max_uses !== null && invite.uses >= invite.max_uses) ||
    (invite.expires_at !== null && Number(invite.expires_at) <= now)
  )
    throw notFound('invite');
  const guildId = Number(invite.guild_id);
  const banned = await trx
    .selectFrom('bans')
    .select('user_id')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (banned) throw forbidden('Banned from this guild');
  if (!(await joinGuild(trx, d, guildId, userId))) return { guildId, joined: false };
  const used = await trx
    .updateTable('invites')
    .set((eb) => ({ uses: eb('uses', '+', 1) }))
    .where('code', '=', code)
    .where((eb) =>
      eb.and([
        eb.or([eb('max_uses', 'is', null), eb('uses', '<', eb.ref('max_uses'))]),
        eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]),
      ]),
    )
    .executeTakeFirst();
  if (used.numUpdatedRows === 0n) throw notFound('invite');
  return { guildId, joined: true };
}
