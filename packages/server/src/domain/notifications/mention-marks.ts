import type { ReadState } from '@parley/protocol';
import type { Db } from '../../storage/db.js';

/**
 * D66: read states' `mentionCount`, kept as messages arrive. One `unread_mentions` row per
 * person and message that addresses them (domain/notifications/mentioned.ts), written in the
 * transaction of the send (or edit) — so it holds on both dialects and whichever node took the
 * write — and counted past the person's `lastReadId` when asked (READY, GET read states, the ack).
 * Rows go when the person marks the channel read past them, when an edit drops the mention, and
 * with the message (ON DELETE CASCADE: every delete path, moderation and purges included).
 */
export async function addMentionMarks(
  trx: Db,
  messageId: number,
  channelId: number,
  userIds: readonly number[],
): Promise<void> {
  for (let i = 0; i < userIds.length; i += 500) {
    const rows = userIds
      .slice(i, i + 500)
      .map((userId) => ({ message_id: messageId, user_id: userId, channel_id: channelId }));
    await trx
      .insertInto('unread_mentions')
      .values(rows)
      .onConflict((oc) => oc.columns(['message_id', 'user_id']).doNothing())
      .execute();
  }
}

/**
 * D66: an edit changed whom the message addresses. Those it no longer mentions lose the mark
 * (a decrement only while it was unread: a read mark already removed it); those it newly mentions
 * gain one only if they have not read past the message yet.
 */
export async function updateMentionMarks(
  trx: Db,
  messageId: number,
  channelId: number,
  now: readonly number[],
): Promise<void> {
  const before = await trx
    .selectFrom('unread_mentions')
    .select('user_id')
    .where('message_id', '=', messageId)
    .execute();
  const had = new Set(before.map((r) => Number(r.user_id)));
  const keep = new Set(now);
  const gone = [...had].filter((u) => !keep.has(u));
  if (gone.length > 0)
    await trx
      .deleteFrom('unread_mentions')
      .where('message_id', '=', messageId)
      .where('user_id', 'in', gone)
      .execute();
  const added = now.filter((u) => !had.has(u));
  if (added.length === 0) return;
  const read = await trx
    .selectFrom('read_states')
    .select('user_id')
    .where('channel_id', '=', channelId)
    .where('user_id', 'in', added)
    .where('last_read_id', '>=', messageId)
    .execute();
  const done = new Set(read.map((r) => Number(r.user_id)));
  await addMentionMarks(
    trx,
    messageId,
    channelId,
    added.filter((u) => !done.has(u)),
  );
}

/** D66: the person read the channel up to `lastReadId`: the marks up to it go. */
export async function clearMentionMarks(
  trx: Db,
  userId: number,
  channelId: number,
  lastReadId: number,
): Promise<void> {
  await trx
    .deleteFrom('unread_mentions')
    .where('user_id', '=', userId)
    .where('channel_id', '=', channelId)
    .where('message_id', '<=', lastReadId)
    .execute();
}

/**
 * D66: the person's unread mentions per channel (only channels that have some): the marks past
 * each channel's read mark — an index range on (user_id, channel_id, message_id).
 */
export async function mentionCounts(
  db: Db,
  userId: number,
  channelId?: number,
): Promise<Map<number, number>> {
  let q = db
    .selectFrom('unread_mentions as um')
    .leftJoin('read_states as rs', (j) =>
      j.onRef('rs.user_id', '=', 'um.user_id').onRef('rs.channel_id', '=', 'um.channel_id'),
    )
    .select(['um.channel_id', (eb) => eb.fn.countAll<number | string>().as('n')])
    .where('um.user_id', '=', userId)
    .where((eb) =>
      eb.or([
        eb('rs.last_read_id', 'is', null),
        eb('um.message_id', '>', eb.ref('rs.last_read_id')),
      ]),
    );
  if (channelId !== undefined) q = q.where('um.channel_id', '=', channelId);
  const rows = await q.groupBy('um.channel_id').execute();
  return new Map(rows.map((r) => [Number(r.channel_id), Number(r.n)]));
}

/**
 * D48 + D66: the person's read states with `mentionCount` (by channel id; DMs included), or one
 * channel's. A channel with unread mentions and no read mark yet is listed with `lastReadId: 0`.
 */
export async function readStatesOf(
  db: Db,
  userId: number,
  channelId?: number,
): Promise<ReadState[]> {
  let q = db
    .selectFrom('read_states')
    .select(['channel_id', 'last_read_id'])
    .where('user_id', '=', userId);
  if (channelId !== undefined) q = q.where('channel_id', '=', channelId);
  const [marks, counts] = await Promise.all([
    q.orderBy('channel_id', 'asc').execute(),
    mentionCounts(db, userId, channelId),
  ]);
  const out = new Map<number, ReadState>();
  for (const r of marks) {
    const id = Number(r.channel_id);
    out.set(id, { channelId: id, lastReadId: Number(r.last_read_id), mentionCount: 0 });
  }
  for (const [id, n] of counts) {
    const s = out.get(id);
    if (s) s.mentionCount = n;
    else out.set(id, { channelId: id, lastReadId: 0, mentionCount: n });
  }
  return [...out.values()].sort((a, b) => a.channelId - b.channelId);
}
