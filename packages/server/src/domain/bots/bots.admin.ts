import type { AdminBot, AdminBotDetail, AdminBotPatch, Page } from '@parley/protocol';
import { notFound } from '../../errors/app-error.js';
import { iso } from '../../ids/clock.js';
import { nameContains, toPage, type PageQuery } from '../admin/paging.js';
import { purgeBot } from '../admin/purge.js';
import type { Domain } from '../context.js';
import { botView } from '../views.js';

/** D52: the operator's view of bots. */
const bots = (d: Domain) =>
  d.db
    .selectFrom('bots as b')
    .innerJoin('users as u', 'u.id', 'b.user_id')
    .select([
      'b.id',
      'b.description',
      'b.user_id',
      'b.owner_id',
      'b.webhook_url',
      'b.created_at',
      'u.name',
      'u.avatar',
    ]);

type BotRow = Awaited<ReturnType<ReturnType<typeof bots>['execute']>>[number];

const view = (d: Domain, r: BotRow): AdminBot => ({
  ...botView(d.urls, r),
  ownerId: r.owner_id,
  webhookUrl: r.webhook_url,
  createdAt: iso(r.created_at),
});

export async function listBots(d: Domain, q: PageQuery): Promise<Page<AdminBot>> {
  let query = bots(d);
  if (q.after !== undefined) query = query.where('b.id', '>', q.after);
  if (q.q !== undefined && q.q !== '') query = query.where(nameContains('u.name', q.q));
  const rows = await query
    .orderBy('b.id', 'asc')
    .limit(q.limit + 1)
    .execute();
  return toPage(rows, q.limit, (r) => view(d, r));
}

export async function getAdminBot(d: Domain, botId: number): Promise<AdminBotDetail> {
  const row = await bots(d).where('b.id', '=', botId).executeTakeFirst();
  if (!row) throw notFound('bot');
  const [guilds, live] = await Promise.all([
    d.db
      .selectFrom('members')
      .select('guild_id')
      .where('user_id', '=', row.user_id)
      .orderBy('guild_id')
      .execute(),
    d.db
      .selectFrom('gateway_sessions')
      .select('id')
      .where('bot_id', '=', botId)
      .where('connected', '=', 1)
      .where('ended', '=', 0)
      .executeTakeFirst(),
  ]);
  return { ...view(d, row), guilds: guilds.map((g) => g.guild_id), connected: live !== undefined };
}

export async function updateBot(
  d: Domain,
  botId: number,
  body: AdminBotPatch,
): Promise<AdminBotDetail> {
  const row = await bots(d).where('b.id', '=', botId).executeTakeFirst();
  if (!row) throw notFound('bot');
  await d.db.transaction().execute(async (trx) => {
    if (body.description !== undefined)
      await trx
        .updateTable('bots')
        .set({ description: body.description })
        .where('id', '=', botId)
        .execute();
    if (body.name !== undefined || body.avatar !== undefined)
      await trx
        .updateTable('users')
        .set({
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.avatar !== undefined ? { avatar: body.avatar } : {}),
        })
        .where('id', '=', row.user_id)
        .execute();
  });
  return getAdminBot(d, botId);
}

/**
 * D50/D52: the token dies, its gateway connection closes with 4004, it leaves every guild with
 * GUILD_MEMBER_REMOVE; its messages, stream and deliveries go. One transaction.
 */
export async function deleteBot(d: Domain, botId: number): Promise<void> {
  await d.db.transaction().execute(async (trx) => {
    if (!(await purgeBot(d, trx, botId))) throw notFound('bot');
  });
}
