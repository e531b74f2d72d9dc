import type { Db } from '../../storage/db.js';
import type { Domain } from '../context.js';

/**
 * Hooks into work that lands from other branches (issue 23: D58 time-outs, D60 audit log). Each
 * is the one place this area calls; the merge fills them in.
 */

/**
 * D60: `COMMANDS_UPDATE` in the guild's audit log, written in the change's transaction (actor:
 * the bot's user). HOOK(issue-23): write the audit entry once domain/audit lands.
 */
export async function auditCommandsUpdate(
  _trx: Db,
  _d: Domain,
  _e: {
    guildId: number;
    botUserId: number;
    before: ReadonlyArray<{ id: number; decl: string }>;
    after: ReadonlyArray<{ id: number; decl: string }>;
  },
): Promise<void> {}

/**
 * D58: a timed-out member cannot invoke commands or use components (403 TIMED_OUT).
 * HOOK(issue-23): call its time-out check once it lands.
 */
export async function requireNotTimedOut(
  _d: Domain,
  _guildId: number,
  _userId: number,
): Promise<void> {}
