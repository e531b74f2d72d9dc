import type { Message, MemberUser } from '@parley/protocol';
import { Permission, RICH_LIMITS } from '@parley/protocol';
import { conflict, forbidden, invalid, notFound } from '../../errors/app-error.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { requireDmChannel } from '../dms/dms.service.js';
import type { RecordedEvent } from '../events/recorder.js';
import { requireGuildChannel } from '../permissions/access.service.js';
import { memberUserView } from '../views.js';
import { normalizeEmoji } from './emoji.js';
import { hydrate, selectMessages } from './read.js';

/**
 * D63: reactions and pins, in guild channels (permission bits) and DMs (either party). Each
 * change that happens records its event (MESSAGE_REACTION_ADD|REMOVE, CHANNEL_PINS_UPDATE):
 * people receive them (D51), bots only by subscribing.
 */
interface Place {
  channelId: number;
  guildId: number | null;
  scope: RecordedEvent['scope'];
}

async function guildPlace(
  d: Domain,
  p: Principal,
  channelId: number,
  bits: number,
  /** D58: reacting is refused while the caller is timed out */
  opts: { speaking?: boolean } = {},
): Promise<Place> {
  const ch = await requireGuildChannel(d, p, channelId, bits, opts);
  return {
    channelId: ch.id,
    guildId: ch.guild_id,
    scope: { kind: 'channel', guildId: ch.guild_id, channelId: ch.id },
  };
}

async function dmPlace(d: Domain, p: Principal, channelId: number): Promise<Place> {
  const dm = await requireDmChannel(d, p, channelId);
  return {
    channelId: dm.id,
    guildId: null,
    scope: { kind: 'dm', userIds: [dm.userLow, dm.userHigh] },
  };
}

function emojiOf(raw: string): string {
  const e = normalizeEmoji(raw);
  if (e === undefined) throw invalid('emoji', 'must be one Unicode emoji (URL-encoded)');
  return e;
}

async function requireMessage(d: Domain, at: Place, messageId: number) {
  const m = await d.db
    .selectFrom('messages')
    .select(['id', 'pinned_at'])
    .where('id', '=', messageId)
    .where('channel_id', '=', at.channelId)
    .executeTakeFirst();
  if (!m) throw notFound('message');
  return m;
}

const reactionEvent = (
  type: 'MESSAGE_REACTION_ADD' | 'MESSAGE_REACTION_REMOVE',
  at: Place,
  messageId: number,
  userId: number,
  emoji: string,
): RecordedEvent => ({
  envelope: {
    type,
    data: {
      userId,
      channelId: at.channelId,
      messageId,
      ...(at.guildId === null ? {} : { guildId: at.guildId }),
      emoji,
    },
  },
  scope: at.scope,
});

async function addReaction(
  d: Domain,
  p: Principal,
  at: Place,
  messageId: number,
  raw: string,
): Promise<void> {
  const emoji = emojiOf(raw);
  await requireMessage(d, at, messageId);
  await d.db.transaction().execute(async (trx) => {
    const mine = await trx
      .selectFrom('message_reactions')
      .select('user_id')
      .where('message_id', '=', messageId)
      .where('emoji', '=', emoji)
      .where('user_id', '=', p.userId)
      .executeTakeFirst();
    if (mine) return; // already there: nothing changes, nothing is announced
    const distinct = await trx
      .selectFrom('message_reactions')
      .select('emoji')
      .distinct()
      .where('message_id', '=', messageId)
      .execute();
    if (
      !distinct.some((r) => r.emoji === emoji) &&
      distinct.length >= RICH_LIMITS.reactionsPerMessage
    )
      throw conflict(
        `A message holds at most ${RICH_LIMITS.reactionsPerMessage} different reactions`,
      );
    const res = await trx
      .insertInto('message_reactions')
      .values({ message_id: messageId, emoji, user_id: p.userId, created_at: d.clock.now() })
      .onConflict((oc) => oc.doNothing())
      .executeTakeFirst();
    if (res.numInsertedOrUpdatedRows === 0n) return;
    await d.events.record(
      trx,
      reactionEvent('MESSAGE_REACTION_ADD', at, messageId, p.userId, emoji),
    );
  });
}

async function removeReaction(
  d: Domain,
  at: Place,
  messageId: number,
  raw: string,
  userId: number,
): Promise<void> {
  const emoji = emojiOf(raw);
  await requireMessage(d, at, messageId);
  await d.db.transaction().execute(async (trx) => {
    const res = await trx
      .deleteFrom('message_reactions')
      .where('message_id', '=', messageId)
      .where('emoji', '=', emoji)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    if (Number(res.numDeletedRows) === 0) return;
    await d.events.record(
      trx,
      reactionEvent('MESSAGE_REACTION_REMOVE', at, messageId, userId, emoji),
    );
  });
}

async function reactors(
  d: Domain,
  at: Place,
  messageId: number,
  raw: string,
  q: { after?: number | undefined; limit: number },
): Promise<{ users: MemberUser[]; hasMore: boolean }> {
  const emoji = emojiOf(raw);
  await requireMessage(d, at, messageId);
  let query = d.db
    .selectFrom('message_reactions as r')
    .innerJoin('users as u', 'u.id', 'r.user_id')
    .select(['u.id', 'u.name', 'u.avatar'])
    .where('r.message_id', '=', messageId)
    .where('r.emoji', '=', emoji);
  if (q.after !== undefined) query = query.where('r.user_id', '>', q.after);
  const rows = await query
    .orderBy('r.user_id', 'asc')
    .limit(q.limit + 1)
    .execute();
  return {
    users: rows.slice(0, q.limit).map((u) => memberUserView(d.urls, u)),
    hasMore: rows.length > q.limit,
  };
}

async function pin(d: Domain, at: Place, messageId: number, on: boolean): Promise<void> {
  const m = await requireMessage(d, at, messageId);
  if ((m.pinned_at !== null) === on) return; // already so: nothing changes
  await d.db.transaction().execute(async (trx) => {
    if (on) {
      const n = await trx
        .selectFrom('messages')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('channel_id', '=', at.channelId)
        .where('pinned_at', 'is not', null)
        .executeTakeFirstOrThrow();
      if (Number(n.n) >= RICH_LIMITS.pinsPerChannel)
        throw conflict(`A channel holds at most ${RICH_LIMITS.pinsPerChannel} pins`);
    }
    const res = await trx
      .updateTable('messages')
      .set({ pinned_at: on ? d.clock.now() : null })
      .where('id', '=', messageId)
      .where('channel_id', '=', at.channelId)
      .where('pinned_at', on ? 'is' : 'is not', null)
      .executeTakeFirst();
    if (res.numUpdatedRows === 0n) return;
    await d.events.record(trx, {
      envelope: {
        type: 'CHANNEL_PINS_UPDATE',
        data: {
          channelId: at.channelId,
          ...(at.guildId === null ? {} : { guildId: at.guildId }),
        },
      },
      scope: at.scope,
    });
  });
}

/** D63: newest pin first (at most 50 exist). */
async function pins(d: Domain, p: Principal, at: Place): Promise<{ messages: Message[] }> {
  const rows = await selectMessages(d.db)
    .where('m.channel_id', '=', at.channelId)
    .where('m.pinned_at', 'is not', null)
    .orderBy('m.pinned_at', 'desc')
    .orderBy('m.id', 'desc')
    .limit(RICH_LIMITS.pinsPerChannel)
    .execute();
  return { messages: await hydrate(d.db, rows, p.userId) };
}

const READ = Permission.READ_MESSAGE_HISTORY;
const REACT = Permission.ADD_REACTIONS | Permission.READ_MESSAGE_HISTORY;
const MANAGE = Permission.MANAGE_MESSAGES;

/** Someone else's reaction: MANAGE_MESSAGES in a guild; in a DM nobody removes the other's. */
async function removeOthers(
  d: Domain,
  p: Principal,
  at: Place,
  messageId: number,
  emoji: string,
  userId: number,
): Promise<void> {
  if (at.guildId === null && userId !== p.userId)
    throw forbidden('Only its author may remove a reaction in a DM');
  await removeReaction(d, at, messageId, emoji, userId);
}

export const guildReactions = {
  add: async (d: Domain, p: Principal, ch: number, m: number, e: string) =>
    addReaction(d, p, await guildPlace(d, p, ch, REACT, { speaking: true }), m, e),
  removeOwn: async (d: Domain, p: Principal, ch: number, m: number, e: string) =>
    removeReaction(d, await guildPlace(d, p, ch, READ), m, e, p.userId),
  removeUser: async (d: Domain, p: Principal, ch: number, m: number, e: string, u: number) =>
    removeOthers(d, p, await guildPlace(d, p, ch, u === p.userId ? READ : MANAGE | READ), m, e, u),
  list: async (
    d: Domain,
    p: Principal,
    ch: number,
    m: number,
    e: string,
    q: { after?: number | undefined; limit: number },
  ) => reactors(d, await guildPlace(d, p, ch, READ), m, e, q),
  pin: async (d: Domain, p: Principal, ch: number, m: number, on: boolean) =>
    pin(d, await guildPlace(d, p, ch, MANAGE), m, on),
  pins: async (d: Domain, p: Principal, ch: number) => pins(d, p, await guildPlace(d, p, ch, READ)),
};

// D63: "DMs too": either party reacts and pins.
export const dmReactions: typeof guildReactions = {
  add: async (d, p, ch, m, e) => addReaction(d, p, await dmPlace(d, p, ch), m, e),
  removeOwn: async (d, p, ch, m, e) => removeReaction(d, await dmPlace(d, p, ch), m, e, p.userId),
  removeUser: async (d, p, ch, m, e, u) => removeOthers(d, p, await dmPlace(d, p, ch), m, e, u),
  list: async (d, p, ch, m, e, q) => reactors(d, await dmPlace(d, p, ch), m, e, q),
  pin: async (d, p, ch, m, on) => pin(d, await dmPlace(d, p, ch), m, on),
  pins: async (d, p, ch) => pins(d, p, await dmPlace(d, p, ch)),
};
