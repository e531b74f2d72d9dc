import type { Db } from '../../storage/db.js';
import { writeAudit } from '../audit/audit.service.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { actorOf } from '../guilds/actor.js';
import {
  memberAccess,
  requireNotTimedOut as refuseWhileTimedOut,
} from '../permissions/access.service.js';

/** Where commands meet D58 time-outs and the D60 audit log. */

/**
 * D60: `COMMANDS_UPDATE` in the guild's audit log, written in the change's transaction (actor:
 * the bot), with the declarations before and after.
 */
export async function auditCommandsUpdate(
  trx: Db,
  d: Domain,
  bot: Principal,
  e: {
    guildId: number;
    before: ReadonlyArray<{ id: number; decl: string }>;
    after: ReadonlyArray<{ id: number; decl: string }>;
  },
): Promise<void> {
  const names = (rows: ReadonlyArray<{ decl: string }>) =>
    rows.map((r) => (JSON.parse(r.decl) as { name?: string }).name ?? '?').sort();
  await writeAudit(trx, d, actorOf(bot), {
    guildId: e.guildId,
    action: 'COMMANDS_UPDATE',
    targetId: bot.userId,
    changes: [{ key: 'commands', old: names(e.before), new: names(e.after) }],
  });
}

/** D58: a timed-out member cannot invoke commands or use components (403 TIMED_OUT). */
export async function requireNotTimedOut(
  d: Domain,
  guildId: number,
  userId: number,
): Promise<void> {
  const g = await d.db
    .selectFrom('guilds')
    .select('owner_id')
    .where('id', '=', guildId)
    .executeTakeFirst();
  if (!g) return;
  const access = await memberAccess(d, guildId, Number(g.owner_id), userId);
  if (access) refuseWhileTimedOut(d, access);
}
