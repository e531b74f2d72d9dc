import {
  Permission,
  type AddBotBody,
  type Bot,
  type CreatedBot,
  type CreateOwnBotBody,
  type Member,
  type OwnedBot,
  type OwnedBotList,
  type PatchBotBody,
  type UploadQuota,
} from '@parley/protocol';
import { forbidden, notFound } from '../../errors/app-error.js';
import type { BotTokenCodec } from '../auth/bot-token.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { quotaLimits, quotaUsage } from '../files/quota.js';
import { purgeBot } from '../admin/purge.js';
import { putMember } from '../members/members.service.js';
import { guildPermissions, has } from '../permissions/permissions.js';
import { requireGuildMember } from '../permissions/access.service.js';
import { createBot, getBot, setBotEvents } from './bots.service.js';

/**
 * D50: a person's own bots. Every route names the bot by id and first checks it is the caller's:
 * someone else's bot is 404 exactly like a bot that does not exist (its existence is not
 * revealed). The operations themselves are the operator's (D41): one way of doing each thing.
 */
export async function requireOwnBot(
  d: Domain,
  p: Principal,
  botId: number,
): Promise<{ id: number; userId: number }> {
  const bot = await d.db
    .selectFrom('bots')
    .select(['id', 'user_id'])
    .where('id', '=', botId)
    .where('owner_id', '=', p.userId)
    .executeTakeFirst();
  if (!bot) throw notFound('bot');
  return { id: Number(bot.id), userId: Number(bot.user_id) };
}

/** D50: the caller's bots with their webhook address and the guilds they are in. */
export async function listOwnBots(d: Domain, p: Principal): Promise<OwnedBotList> {
  const rows = await d.db
    .selectFrom('bots')
    .select(['id', 'user_id', 'webhook_url'])
    .where('owner_id', '=', p.userId)
    .orderBy('id', 'asc')
    .execute();
  const bots: OwnedBot[] = [];
  for (const r of rows) {
    const guilds = await d.db
      .selectFrom('members')
      .select('guild_id')
      .where('user_id', '=', r.user_id)
      .orderBy('guild_id', 'asc')
      .execute();
    bots.push({
      bot: await getBot(d, Number(r.id)),
      webhookUrl: r.webhook_url,
      guilds: guilds.map((g) => Number(g.guild_id)),
    });
  }
  return { bots };
}

/** D50: a new bot of the caller (at most 3: the 4th → 409, D41). */
export async function createOwnBot(
  d: Domain,
  codec: BotTokenCodec,
  p: Principal,
  body: CreateOwnBotBody,
): Promise<CreatedBot> {
  return createBot(d, codec, { ownerId: p.userId, ...body });
}

/** D50: rename, describe, set or clear (null) the avatar of one's bot. Answers the bot. */
export async function patchOwnBot(
  d: Domain,
  p: Principal,
  botId: number,
  body: PatchBotBody,
): Promise<Bot> {
  const bot = await requireOwnBot(d, p, botId);
  await d.db.transaction().execute(async (trx) => {
    const user: { name?: string; avatar?: string | null } = {};
    if (body.name !== undefined) user.name = body.name;
    if (body.avatar !== undefined) user.avatar = body.avatar;
    if (Object.keys(user).length > 0)
      await trx.updateTable('users').set(user).where('id', '=', bot.userId).execute();
    if (body.description !== undefined)
      await trx
        .updateTable('bots')
        .set({ description: body.description })
        .where('id', '=', bot.id)
        .execute();
    // D63: the owner sets the bot's subscription as the bot itself may
    if (body.events !== undefined) await setBotEvents(d, trx, bot.id, body.events);
  });
  return getBot(d, bot.id);
}

/**
 * D50: delete one's bot, in one transaction: it leaves every guild (GUILD_MEMBER_REMOVE, its own
 * included, D34), its deliveries go, its record goes — so its token is refused from the next
 * request (401) — and after commit its gateway connection closes with 4004 (as a token reset,
 * D8). Its user stays, disabled, so the messages it sent keep their author. The owner gets the
 * slot back.
 */
export async function deleteOwnBot(d: Domain, p: Principal, botId: number): Promise<void> {
  const bot = await requireOwnBot(d, p, botId);
  await d.db.transaction().execute(async (trx) => {
    if (!(await purgeBot(d, trx, bot.id, 'user'))) throw notFound('bot'); // deleted meanwhile
  });
}

/** D50 (D24 shape): the upload quota of one's bot. */
export async function ownBotQuota(d: Domain, p: Principal, botId: number): Promise<UploadQuota> {
  const bot = await requireOwnBot(d, p, botId);
  return quotaUsage(d.db, quotaLimits(d.config), bot.userId, d.clock.now());
}

/**
 * D50: add one's bot to a guild where one has ADMINISTRATOR (the owner always has it), with
 * roles. GUILD_MEMBER_ADD (D34); `created` is false when it was already a member (its roles are
 * then set). A bot banned from the guild stays out (403, D49).
 */
export async function addOwnBotToGuild(
  d: Domain,
  p: Principal,
  guildId: number,
  botId: number,
  body: AddBotBody,
): Promise<{ member: Member; created: boolean }> {
  const bot = await requireOwnBot(d, p, botId);
  const { access } = await requireGuildMember(d, p, guildId);
  if (!has(guildPermissions(access), Permission.ADMINISTRATOR))
    throw forbidden('Missing permission: ADMINISTRATOR');
  const banned = await d.db
    .selectFrom('bans')
    .select('user_id')
    .where('guild_id', '=', guildId)
    .where('user_id', '=', bot.userId)
    .executeTakeFirst();
  if (banned) throw forbidden('This bot is banned from this guild');
  return putMember(d, guildId, bot.userId, body.roles === undefined ? {} : { roles: body.roles });
}
