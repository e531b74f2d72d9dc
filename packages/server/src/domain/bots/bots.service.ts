import { randomBytes } from 'node:crypto';
import type { Bot, CreateBotBody, CreatedBot } from '@parley/protocol';
import { conflict, forbidden, invalid, notFound } from '../../errors/app-error.js';
import type { BotTokenCodec } from '../auth/bot-token.js';
import type { Principal } from '../auth/principal.js';
import type { Db } from '../../storage/db.js';
import type { Domain } from '../context.js';
import { botView } from '../views.js';

/** docs/interface.md#limits: bots per account. */
export const MAX_BOTS_PER_OWNER = 3;

/**
 * D68: `whsec_` + standard base64 (24 random bytes: 32 characters, no padding), the form every
 * Standard Webhooks library decodes. Secrets made before D68 are base64url (still valid, D38).
 */
export const newWebhookSecret = (): string => 'whsec_' + randomBytes(24).toString('base64');

/**
 * A bot as the API shows it. Read on every GET /bot/me (a bot's "is my token good" call) and every
 * READY: kept in the derived cache, exact as its other values (a write to `bots` or `users` moves
 * its version, domain/derived-cache.ts), so a steady caller costs no query.
 */
export function getBot(d: Domain, botId: number): Bot | Promise<Bot> {
  return d.cache.get(`bot-view:${botId}`, () => loadBot(d, botId));
}

async function loadBot(d: Domain, botId: number): Promise<Bot> {
  const row = await d.db
    .selectFrom('bots as b')
    .innerJoin('users as u', 'u.id', 'b.user_id')
    .select(['b.id', 'b.description', 'b.user_id', 'u.name', 'u.avatar', 'b.events'])
    .where('b.id', '=', botId)
    .executeTakeFirst();
  if (!row) throw notFound('bot');
  return botView(d.urls, row);
}

/** GET /bot/me: a human session is authenticated but has no bot record (403). */
export async function getMe(d: Domain, p: Principal): Promise<Bot> {
  if (p.botId === undefined) throw forbidden('This token belongs to a user, not a bot');
  return await getBot(d, p.botId);
}

/**
 * D63: the event types a bot receives beyond D34's eight, for its gateway and its webhook alike
 * (an empty list: the eight only). A change of the bots table moves the derived cache's version,
 * so the next event's recipients see it (domain/events/recipients.ts).
 */
export async function setBotEvents(
  d: Domain,
  trx: Db,
  botId: number,
  events: readonly string[],
): Promise<void> {
  await trx
    .updateTable('bots')
    .set({ events: events.length === 0 ? null : JSON.stringify([...new Set(events)]) })
    .where('id', '=', botId)
    .execute();
}

/** PATCH /bot/me (D63): the calling bot changes its own subscription. */
export async function patchMe(
  d: Domain,
  p: Principal,
  body: { events?: readonly string[] | undefined },
): Promise<Bot> {
  if (p.botId === undefined) throw forbidden('This token belongs to a user, not a bot');
  const botId = p.botId;
  if (body.events !== undefined) {
    const events = body.events;
    await d.db.transaction().execute((trx) => setBotEvents(d, trx, botId, events));
  }
  return getBot(d, botId);
}

export async function createBot(
  d: Domain,
  codec: BotTokenCodec,
  body: CreateBotBody,
): Promise<CreatedBot> {
  const owner = await d.db
    .selectFrom('users')
    .select(['id', 'is_bot'])
    .where('id', '=', body.ownerId)
    .executeTakeFirst();
  if (!owner) throw notFound('user');
  if (owner.is_bot) throw invalid('ownerId', 'must be a human user');
  const botId = d.ids.next();
  const userId = d.ids.next();
  const now = d.clock.now();
  const secret = newWebhookSecret();
  await d.db.transaction().execute(async (trx) => {
    // docs/interface.md#bots-per-account: a guarded increment is atomic on both dialects, so
    // concurrent creates can never make a fourth bot.
    const slot = await trx
      .updateTable('users')
      .set((eb) => ({ bot_count: eb('bot_count', '+', 1) }))
      .where('id', '=', owner.id)
      .where('bot_count', '<', MAX_BOTS_PER_OWNER)
      .executeTakeFirst();
    if (slot.numUpdatedRows === 0n)
      throw conflict(`An account can own at most ${MAX_BOTS_PER_OWNER} bots`);
    await trx
      .insertInto('users')
      .values({
        id: userId,
        name: body.name,
        avatar: body.avatar ?? null,
        is_bot: 1,
        password_hash: null,
        bot_count: 0,
        created_at: now,
      })
      .execute();
    await trx
      .insertInto('bots')
      .values({
        id: botId,
        user_id: userId,
        owner_id: owner.id,
        description: body.description ?? '',
        token_generation: 1,
        webhook_url: null,
        webhook_secret: secret,
        created_at: now,
      })
      .execute();
  });
  const token = await codec.sign({ botId, generation: 1 }, now);
  return { bot: await getBot(d, botId), token, webhookSecret: secret };
}

/** D8: a new token; the previous one is refused from the next request on. */
export async function resetBotToken(
  d: Domain,
  codec: BotTokenCodec,
  botId: number,
): Promise<{ token: string }> {
  const generation = await d.db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('bots')
      .set((eb) => ({ token_generation: eb('token_generation', '+', 1) }))
      .where('id', '=', botId)
      .executeTakeFirst();
    if (res.numUpdatedRows === 0n) throw notFound('bot');
    // D8: after commit, gateway connections opened with the old token close with 4004.
    await d.events.botTokenReset(trx, botId);
    const row = await trx
      .selectFrom('bots')
      .select('token_generation')
      .where('id', '=', botId)
      .executeTakeFirstOrThrow();
    return row.token_generation;
  });
  return { token: await codec.sign({ botId, generation }, d.clock.now()) };
}
