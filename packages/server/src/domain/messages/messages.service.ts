import type { EditedMessage, Message, MessageList } from '@parley/protocol';
import { Permission } from '@parley/protocol';
import { forbidden, notFound } from '../../errors/app-error.js';
import { iso } from '../../ids/clock.js';
import { deleteMessage } from '../admin/purge.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { requireDmChannel } from '../dms/dms.service.js';
import { countMessageForQuota } from '../files/quota.js';
import type { RecordedEvent } from '../events/recorder.js';
import { requireGuildChannel } from '../permissions/access.service.js';
import { messageView, type MessageRow } from '../views.js';
import { rawQuery } from '../../storage/raw-sql.js';
import { checkMsgType } from './msg-type.js';
import { actorOf } from '../guilds/actor.js';
import { deleteGuildMessage } from '../moderation/moderation.service.js';

/**
 * Messages in guild channels and DMs share one core; only how the channel is resolved and
 * which events are emitted differ (D17).
 */
interface Target {
  channelId: number;
  guildId: number | null;
  scope: RecordedEvent['scope'];
}

export interface PageQuery {
  before?: number | undefined;
  after?: number | undefined;
  limit: number;
}

async function guildTarget(
  d: Domain,
  p: Principal,
  channelId: number,
  needed: number,
  opts: { speaking?: boolean } = {},
): Promise<Target> {
  const ch = await requireGuildChannel(d, p, channelId, needed, opts);
  return {
    channelId: ch.id,
    guildId: ch.guild_id,
    scope: { kind: 'channel', guildId: ch.guild_id, channelId: ch.id },
  };
}

async function dmTarget(d: Domain, p: Principal, channelId: number): Promise<Target> {
  const dm = await requireDmChannel(d, p, channelId);
  return {
    channelId: dm.id,
    guildId: null,
    scope: { kind: 'dm', userIds: [dm.userLow, dm.userHigh] },
  };
}

async function send(
  d: Domain,
  p: Principal,
  t: Target,
  content: string,
  msgType: number,
): Promise<Message> {
  await checkMsgType(d, msgType, content);
  const now = d.clock.now();
  const row: MessageRow = {
    id: d.ids.next(),
    channel_id: t.channelId,
    guild_id: t.guildId,
    author_id: p.userId,
    author_name: p.name,
    author_is_bot: p.isBot,
    content,
    created_at: now,
    edited_at: null,
  };
  const message = messageView(row);
  // D36: the message and its event commit together or not at all.
  await d.db.transaction().execute(async (trx) => {
    // Fixed SQL: the hottest write of the server (storage/raw-sql.ts).
    await rawQuery(
      trx,
      'insert into "messages" ("id", "channel_id", "guild_id", "author_id", "content", ' +
        '"msg_type", "created_at", "edited_at") values (?, ?, ?, ?, ?, ?, ?, null)',
      [row.id, row.channel_id, row.guild_id, row.author_id, content, msgType, now],
    );
    // D24: each message sent today raises today's upload limit; counted with the message.
    await countMessageForQuota(trx, p.userId, now);
    await d.events.record(trx, {
      envelope:
        t.guildId === null
          ? { type: 'DM_MESSAGE_CREATE', data: message }
          : { type: 'MESSAGE_CREATE', data: message },
      scope: t.scope,
    });
  });
  return message;
}

/** D16: newest first; before/after/both as positions; hasMore in the direction of paging. */
async function list(d: Domain, t: Target, q: PageQuery): Promise<MessageList> {
  let query = d.db
    .selectFrom('messages as m')
    .innerJoin('users as u', 'u.id', 'm.author_id')
    .select([
      'm.id',
      'm.channel_id',
      'm.guild_id',
      'm.author_id',
      'u.name as author_name',
      'u.is_bot as author_is_bot',
      'm.content',
      'm.created_at',
      'm.edited_at',
    ])
    .where('m.channel_id', '=', t.channelId);
  if (q.before !== undefined) query = query.where('m.id', '<', q.before);
  if (q.after !== undefined) query = query.where('m.id', '>', q.after);
  // `after` alone pages towards newer messages: take the oldest ones past the cursor, then
  // present them newest first like every other page.
  const towardsNewer = q.after !== undefined && q.before === undefined;
  const rows = await query
    .orderBy('m.id', towardsNewer ? 'asc' : 'desc')
    .limit(q.limit + 1)
    .execute();
  const hasMore = rows.length > q.limit;
  const page = rows.slice(0, q.limit);
  if (towardsNewer) page.reverse();
  return { messages: page.map(messageView), hasMore };
}

async function ownMessage(d: Domain, p: Principal, t: Target, messageId: number) {
  const m = await d.db
    .selectFrom('messages')
    .select(['id', 'author_id', 'created_at'])
    .where('id', '=', messageId)
    .where('channel_id', '=', t.channelId)
    .executeTakeFirst();
  // D13: a message in another channel is 404; someone else's message is 403, whatever the roles.
  if (!m) throw notFound('message');
  if (m.author_id !== p.userId) throw forbidden('Only the author may change this message');
  return m;
}

async function edit(
  d: Domain,
  p: Principal,
  t: Target,
  messageId: number,
  content: string,
): Promise<EditedMessage> {
  const m = await ownMessage(d, p, t, messageId);
  const now = Math.max(d.clock.now(), m.created_at);
  const message = messageView({
    id: m.id,
    channel_id: t.channelId,
    guild_id: t.guildId,
    author_id: p.userId,
    author_name: p.name,
    author_is_bot: p.isBot,
    content,
    created_at: m.created_at,
    edited_at: now,
  });
  await d.db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('messages')
      .set({ content, edited_at: now })
      .where('id', '=', m.id)
      .where('channel_id', '=', t.channelId)
      .executeTakeFirst();
    // Deleted between the read and the write.
    if (res.numUpdatedRows === 0n) throw notFound('message');
    await d.events.record(trx, {
      envelope:
        t.guildId === null
          ? { type: 'DM_MESSAGE_UPDATE', data: message }
          : { type: 'MESSAGE_UPDATE', data: message },
      scope: t.scope,
    });
  });
  return { id: m.id, channelId: t.channelId, content, editedTimestamp: iso(now) };
}

async function remove(d: Domain, p: Principal, t: Target, messageId: number): Promise<void> {
  const m = await ownMessage(d, p, t, messageId);
  await deleteMessage(d, t.channelId, m.id);
}

// D12: sending needs SEND_MESSAGES (D57: and ATTACH_FILES for msgType 1–3; D58: not timed
// out); listing needs READ_MESSAGE_HISTORY; VIEW_CHANNEL always.
export const guildMessages = {
  send: async (d: Domain, p: Principal, channelId: number, content: string, msgType: number) =>
    send(
      d,
      p,
      await guildTarget(
        d,
        p,
        channelId,
        Permission.SEND_MESSAGES | (msgType === 0 ? 0 : Permission.ATTACH_FILES),
        { speaking: true },
      ),
      content,
      msgType,
    ),
  list: async (d: Domain, p: Principal, channelId: number, q: PageQuery) =>
    list(d, await guildTarget(d, p, channelId, Permission.READ_MESSAGE_HISTORY), q),
  edit: async (d: Domain, p: Principal, channelId: number, messageId: number, content: string) =>
    edit(d, p, await guildTarget(d, p, channelId, 0), messageId, content),
  // D59: the author's own, or anyone's with MANAGE_MESSAGES (moderation/moderation.service.ts)
  remove: async (
    d: Domain,
    p: Principal,
    channelId: number,
    messageId: number,
    reason: string | null = null,
  ) => deleteGuildMessage(d, actorOf(p, reason), channelId, messageId),
};

// D17: the same operations on DM channels, open to the two parties.
export const dmMessages = {
  send: async (d: Domain, p: Principal, channelId: number, content: string, msgType: number) =>
    send(d, p, await dmTarget(d, p, channelId), content, msgType),
  list: async (d: Domain, p: Principal, channelId: number, q: PageQuery) =>
    list(d, await dmTarget(d, p, channelId), q),
  edit: async (d: Domain, p: Principal, channelId: number, messageId: number, content: string) =>
    edit(d, p, await dmTarget(d, p, channelId), messageId, content),
  remove: async (d: Domain, p: Principal, channelId: number, messageId: number) =>
    remove(d, p, await dmTarget(d, p, channelId), messageId),
};
