import type { Message, Reaction, ReferencedMessage } from '@parley/protocol';
import { sql } from 'kysely';
import type { Db } from '../../storage/db.js';
import { builtOnce } from '../../storage/raw-sql.js';
import { messageView, type MessageRow } from '../views.js';
import { readExtra } from './extra.js';

/** The one select of messages as views need them (author's name and bot flag joined). */
export const selectMessages = (db: Db) =>
  db
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
      'm.extra',
      'm.pinned_at',
    ]);

/** D63: the reactions of these messages as `viewerId` sees them (`me`), oldest emoji first. */
export async function reactionsOf(
  db: Db,
  messageIds: readonly number[],
  viewerId: number,
): Promise<Map<number, Reaction[]>> {
  const out = new Map<number, Reaction[]>();
  if (messageIds.length === 0) return out;
  const rows = await db
    .selectFrom('message_reactions')
    .select([
      'message_id',
      'emoji',
      (eb) => eb.fn.countAll<number | string>().as('n'),
      (eb) => eb.fn.min('created_at').as('first'),
      sql<number | string>`sum(case when "user_id" = ${viewerId} then 1 else 0 end)`.as('mine'),
    ])
    .where('message_id', 'in', [...messageIds])
    .groupBy(['message_id', 'emoji'])
    .execute();
  rows.sort((a, b) => Number(a.first) - Number(b.first) || (a.emoji < b.emoji ? -1 : 1));
  for (const r of rows) {
    const id = Number(r.message_id);
    const list = out.get(id) ?? [];
    list.push({ emoji: r.emoji, count: Number(r.n), me: Number(r.mine) > 0 });
    out.set(id, list);
  }
  return out;
}

/**
 * D61/D63: a page of rows as the reader sees it: each with its reactions (`me` is the reader's)
 * and, for a reply, the message it answers as it is now (null once deleted).
 */
export async function hydrate(
  db: Db,
  rows: readonly MessageRow[],
  viewerId: number,
): Promise<Message[]> {
  const refIds = new Set<number>();
  for (const r of rows) {
    if (!r.extra) continue;
    const ref = readExtra(r.extra).reference;
    if (ref) refIds.add(ref.messageId);
  }
  const referenced =
    refIds.size === 0
      ? []
      : await selectMessages(db)
          .where('m.id', 'in', [...refIds])
          .execute();
  const reactions = await reactionsOf(
    db,
    [...rows.map((r) => r.id), ...referenced.map((r) => r.id)],
    viewerId,
  );
  const refViews = new Map<number, ReferencedMessage>();
  for (const r of referenced) {
    // "that message without its own reference" (D61)
    const {
      reference: _r,
      referencedMessage: _m,
      ...rest
    } = messageView(r, {
      reactions: reactions.get(r.id) ?? [],
    });
    refViews.set(r.id, rest);
  }
  return rows.map((r) => {
    const ref = r.extra ? readExtra(r.extra).reference : undefined;
    return messageView(r, {
      reactions: reactions.get(r.id) ?? [],
      ...(ref ? { referenced: refViews.get(ref.messageId) ?? null } : {}),
    });
  });
}

/** A message of this channel as a view without reader-specific parts, or undefined. */
export async function findInChannel(
  db: Db,
  channelId: number,
  messageId: number,
): Promise<MessageRow | undefined> {
  const rows = await builtOnce(
    db,
    'message-in-channel',
    () => selectMessages(db).where('m.id', '=', 0).where('m.channel_id', '=', 0),
    [messageId, channelId],
  );
  return rows[0];
}
