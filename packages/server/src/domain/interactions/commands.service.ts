import {
  MAX_COMMANDS,
  Permission,
  type ChannelCommands,
  type Command,
  type CommandDeclaration,
} from '@parley/protocol';
import { conflict, forbidden, notFound } from '../../errors/app-error.js';
import type { Db } from '../../storage/db.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { requireGuild } from '../permissions/access.service.js';
import { has } from '../permissions/permissions.js';
import { checkDeclarations } from './declarations.js';
import { auditCommandsUpdate } from './hooks.js';
import { mayRun, placeOf } from './where.js';

/**
 * D64: a bot's slash commands, global or for one guild. A PUT replaces the whole list: a command
 * that keeps its name keeps its id (clients and handlers may hold it), the others go.
 */
export interface CommandRow {
  id: number;
  bot_id: number;
  guild_id: number | null;
  decl: string;
}

export function commandView(r: CommandRow): Command {
  const decl = JSON.parse(r.decl) as CommandDeclaration;
  return {
    id: r.id,
    botId: r.bot_id,
    ...(r.guild_id === null ? {} : { guildId: r.guild_id }),
    ...decl,
  };
}

function botOf(p: Principal): number {
  if (!p.isBot || p.botId === undefined) throw forbidden('Only a bot declares commands');
  return p.botId;
}

/** A guild's commands are declared by a bot that is a member of it (404 guild, 403 not in it). */
async function guildScope(d: Domain, p: Principal, guildId: number): Promise<number> {
  const g = await requireGuild(d.db, guildId);
  const m = await d.db
    .selectFrom('members')
    .select('user_id')
    .where('guild_id', '=', g.id)
    .where('user_id', '=', p.userId)
    .executeTakeFirst();
  if (!m) throw forbidden('Not a member of this guild');
  return g.id;
}

const scoped = (db: Db, botId: number, guildId: number | null) => {
  const q = db.selectFrom('app_commands').where('bot_id', '=', botId);
  return guildId === null ? q.where('guild_id', 'is', null) : q.where('guild_id', '=', guildId);
};

export async function setCommands(
  d: Domain,
  p: Principal,
  guildId: number | null,
  list: CommandDeclaration[],
): Promise<Command[]> {
  const botId = botOf(p);
  if (guildId !== null) await guildScope(d, p, guildId);
  if (list.length > MAX_COMMANDS) throw conflict(`At most ${MAX_COMMANDS} commands`);
  checkDeclarations(list);
  const now = d.clock.now();
  return d.db.transaction().execute(async (trx) => {
    const old = await scoped(trx, botId, guildId).select(['id', 'name', 'decl']).execute();
    const byName = new Map(old.map((r) => [r.name, r]));
    const keep = new Set<number>();
    const rows: CommandRow[] = [];
    for (const [position, c] of list.entries()) {
      const decl = JSON.stringify(c);
      const was = byName.get(c.name);
      if (was) {
        keep.add(was.id);
        await trx
          .updateTable('app_commands')
          .set({ decl, position })
          .where('id', '=', was.id)
          .execute();
        rows.push({ id: was.id, bot_id: botId, guild_id: guildId, decl });
      } else {
        const id = d.ids.next();
        await trx
          .insertInto('app_commands')
          .values({
            id,
            bot_id: botId,
            guild_id: guildId,
            name: c.name,
            position,
            decl,
            created_at: now,
          })
          .execute();
        rows.push({ id, bot_id: botId, guild_id: guildId, decl });
      }
    }
    const gone = old.filter((r) => !keep.has(r.id)).map((r) => r.id);
    if (gone.length > 0) await trx.deleteFrom('app_commands').where('id', 'in', gone).execute();
    if (guildId !== null)
      await auditCommandsUpdate(trx, d, p, { guildId, before: old, after: rows });
    return rows.map(commandView);
  });
}

export async function getCommands(
  d: Domain,
  p: Principal,
  guildId: number | null,
): Promise<Command[]> {
  const botId = botOf(p);
  if (guildId !== null) await guildScope(d, p, guildId);
  const rows = await scoped(d.db, botId, guildId)
    .select(['id', 'bot_id', 'guild_id', 'decl'])
    .orderBy('position', 'asc')
    .execute();
  return rows.map(commandView);
}

export async function deleteCommand(
  d: Domain,
  p: Principal,
  guildId: number | null,
  commandId: number,
): Promise<void> {
  const botId = botOf(p);
  if (guildId !== null) await guildScope(d, p, guildId);
  await d.db.transaction().execute(async (trx) => {
    const row = await scoped(trx, botId, guildId)
      .select(['id', 'bot_id', 'guild_id', 'name', 'decl'])
      .where('id', '=', commandId)
      .executeTakeFirst();
    if (!row) throw notFound('command');
    await trx.deleteFrom('app_commands').where('id', '=', row.id).execute();
    if (guildId !== null)
      await auditCommandsUpdate(trx, d, p, { guildId, before: [row], after: [] });
  });
}

/**
 * D64: the commands a person may run in a channel: those of the guild's bots (global ones and
 * this guild's), filtered by USE_APPLICATION_COMMANDS and each command's
 * defaultMemberPermissions; in a DM with a bot, that bot's global commands unless dmPermission
 * is false. Ordered by bot, then as each bot declared them.
 */
export async function channelCommands(
  d: Domain,
  p: Principal,
  channelId: number,
): Promise<ChannelCommands> {
  const place = await placeOf(d, p, channelId);
  if (!has(place.bits, Permission.USE_APPLICATION_COMMANDS)) return { commands: [], bots: [] };
  const found = await runnable(d, place);
  const commands = found.rows
    .map(commandView)
    .filter((c) => place.kind === 'guild' || c.dmPermission !== false)
    .filter((c) => mayRun(place.bits, c.defaultMemberPermissions));
  const used = new Set(commands.map((c) => c.botId));
  return { commands, bots: found.bots.filter((b) => used.has(b.id)) };
}

/** The command rows that may run at a place, before the per-person filters. */
export async function runnable(
  d: Domain,
  place: Awaited<ReturnType<typeof placeOf>>,
  commandId?: number,
): Promise<{
  rows: CommandRow[];
  bots: Array<{ id: number; userId: number; name: string }>;
}> {
  let bots = d.db
    .selectFrom('bots as b')
    .innerJoin('users as u', 'u.id', 'b.user_id')
    .select(['b.id', 'b.user_id as userId', 'u.name']);
  bots =
    place.kind === 'guild'
      ? bots
          .innerJoin('members as m', 'm.user_id', 'b.user_id')
          .where('m.guild_id', '=', place.guildId)
      : bots.where('b.user_id', '=', place.otherUserId);
  const botList = await bots.orderBy('b.id', 'asc').execute();
  if (botList.length === 0) return { rows: [], bots: [] };
  let q = d.db
    .selectFrom('app_commands')
    .select(['id', 'bot_id', 'guild_id', 'decl'])
    .where(
      'bot_id',
      'in',
      botList.map((b) => b.id),
    );
  q =
    place.kind === 'guild'
      ? q.where((eb) => eb.or([eb('guild_id', 'is', null), eb('guild_id', '=', place.guildId)]))
      : q.where('guild_id', 'is', null);
  if (commandId !== undefined) q = q.where('id', '=', commandId);
  const rows = await q.select('position').execute();
  // By bot, its global commands first, then as declared (the same order on both dialects:
  // they sort nulls differently).
  rows.sort(
    (a, b) =>
      a.bot_id - b.bot_id ||
      (a.guild_id === null ? 0 : 1) - (b.guild_id === null ? 0 : 1) ||
      a.position - b.position,
  );
  return { rows, bots: botList };
}
