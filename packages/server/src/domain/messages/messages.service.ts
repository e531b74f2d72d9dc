import type {
  ActionRow,
  EditedMessage,
  MessageInteraction,
  EditMessageBody,
  Message,
  MessageList,
  ReferencedMessage,
  SendMessageBody,
} from '@parley/protocol';
import { ALL_PERMISSIONS, Permission } from '@parley/protocol';
import { forbidden, invalid, notFound } from '../../errors/app-error.js';
import { deleteMessage } from '../admin/purge.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { requireDmChannel } from '../dms/dms.service.js';
import { countMessageForQuota } from '../files/quota.js';
import type { RecordedEvent } from '../events/recorder.js';
import { requireGuildChannel, type GuildChannel } from '../permissions/access.service.js';
import { has } from '../permissions/permissions.js';
import { messageView, type MessageRow } from '../views.js';
import { flatRows, rawQuery, tuples } from '../../storage/raw-sql.js';
import { foldAtGroupEnd } from '../../storage/group-commit.js';
import { isForeignKeyViolation, type Db } from '../../storage/db.js';
import { readExtra, storeExtra, storedExtra, type MessageExtra } from './extra.js';
import { resolveMentions } from './mentions.js';
import { checkMsgType } from './msg-type.js';
import { actorOf } from '../guilds/actor.js';
import { deleteGuildMessage } from '../moderation/moderation.service.js';
import { findInChannel, hydrate, selectMessages } from './read.js';
import { checkEmbeds, resolveAttachments } from './uploads.js';
import { checkComponents } from '../interactions/components.js';
import {
  addressedPeople,
  addressesNobody,
  type AddressedMessage,
} from '../notifications/mentioned.js';
import { addMentionMarks, updateMentionMarks } from '../notifications/mention-marks.js';
import { indexMessage, reindexMessage } from '../search/search-index.js';

/**
 * Messages in guild channels and DMs share one core; only how the channel is resolved and
 * which events are emitted differ (D17).
 */
interface Target {
  channelId: number;
  guildId: number | null;
  scope: RecordedEvent['scope'];
  /** the caller's bits in the channel; a DM party may do everything a DM allows */
  permissions: number;
}

export interface PageQuery {
  before?: number | undefined;
  after?: number | undefined;
  limit: number;
}

/** D14/D15/D61: what a send carries (the body as validated). */
export type SendInput = SendMessageBody;

/** Known at once when the access check is (issue 29); callers await it. */
function guildTarget(
  d: Domain,
  p: Principal,
  channelId: number,
  needed: number,
  opts: { speaking?: boolean } = {},
): Target | Promise<Target> {
  const ch = requireGuildChannel(d, p, channelId, needed, opts);
  return ch instanceof Promise ? ch.then(targetOf) : targetOf(ch);
}

const targetOf = (ch: GuildChannel): Target => ({
  channelId: ch.id,
  guildId: ch.guild_id,
  scope: { kind: 'channel', guildId: ch.guild_id, channelId: ch.id },
  permissions: ch.bits,
});

async function dmTarget(d: Domain, p: Principal, channelId: number): Promise<Target> {
  const dm = await requireDmChannel(d, p, channelId);
  return {
    channelId: dm.id,
    guildId: null,
    scope: { kind: 'dm', userIds: [dm.userLow, dm.userHigh] },
    // D57's bits are a guild's; in a DM each party may attach, react and mention the other
    permissions: ALL_PERMISSIONS & ~Permission.MENTION_EVERYONE,
  };
}

const need = (t: Target, bit: number, name: string): void => {
  if (!has(t.permissions, bit)) throw forbidden(`Missing permission: ${name}`);
};

/** D65: what an interaction's reply adds to a send (domain/interactions/respond.ts). */
export interface ReplyOptions {
  interaction: MessageInteraction;
  /** a deferred reply takes the id of its "thinking…" message */
  id?: number;
}

async function send(
  d: Domain,
  p: Principal,
  t: Target,
  body: SendInput,
  reply?: ReplyOptions,
): Promise<Message> {
  const content = body.content ?? '';
  const msgType = body.msgType ?? 0;
  const files = body.attachments ?? [];
  const embedsIn = body.embeds ?? [];
  const components = body.components ?? [];
  // D14, and D61: content may be empty only when attachments, embeds or components carry it.
  if (content === '' && files.length === 0 && embedsIn.length === 0 && components.length === 0)
    throw invalid('content', 'must not be empty (unless the message has attachments or embeds)');
  if (msgType !== 0) await checkMsgType(d, msgType, content);
  // D57: a message with files needs ATTACH_FILES.
  if (files.length > 0 || msgType !== 0) need(t, Permission.ATTACH_FILES, 'ATTACH_FILES');
  const extra: MessageExtra = {};
  if (files.length > 0) extra.attachments = await resolveAttachments(d, files);
  if (embedsIn.length > 0) extra.embeds = await checkEmbeds(d, p.isBot, embedsIn);
  if (components.length > 0) extra.components = botComponents(p, components);
  if (reply) extra.interaction = reply.interaction;
  // D61/D62: the replied-to message and who the mentions notify are read from the database. On
  // SQLite (one connection) they are read inside the send's own transaction: a read of its own
  // would queue behind the group commits and cost each send a second turn on the connection
  // (bench/send's "mention + reply" case). On PostgreSQL they are read first, on the pool, so
  // the group's transaction stays short.
  let mentionedPeople: number[] | undefined;
  const rich = async (db: Db) => {
    let referenced: ReferencedMessage | undefined;
    let repliedUserId: number | undefined;
    if (body.messageReference) {
      // D61: a reply in the same channel; a message elsewhere or gone → 400.
      const row = await findInChannel(db, t.channelId, body.messageReference.messageId);
      if (!row) throw invalid('messageReference', 'must name a message of this channel');
      extra.reference = { messageId: row.id, channelId: t.channelId };
      const { reference: _r, referencedMessage: _m, ...view } = messageView(row);
      referenced = view;
      repliedUserId = row.author_id;
    }
    if (content !== '' || repliedUserId !== undefined) {
      const m = await resolveMentions(d, db, {
        content,
        guildId: t.guildId,
        ...(t.scope.kind === 'dm' ? { dmUserIds: t.scope.userIds } : {}),
        permissions: t.permissions,
        allowed: body.allowedMentions,
        repliedUserId,
        authorId: p.userId,
      });
      extra.mentions = m.mentions;
      extra.mentionRoles = m.mentionRoles;
      mentionedPeople = m.mentionedPeople;
      if (m.mentionEveryone) extra.mentionEveryone = true;
    }
    return referenced;
  };
  // Content with nothing a mention could be (the common case) needs no read at all.
  const reads = body.messageReference !== undefined || /[<@]/.test(content);
  const readFirst = reads && d.dialect !== 'sqlite';
  let referenced = readFirst ? await rich(d.db) : undefined;
  const now = d.clock.now();
  const id = reply?.id ?? d.ids.next();
  // D66: whom it addresses (no query for a guild message that mentions nobody), marked unread
  // for them in the same transaction: mention counts kept as messages arrive. Read where the
  // mentions are read (inside the transaction on SQLite, before it on PostgreSQL).
  const addressedIn = (db: Db) => {
    const m = addressedOf(t, id, p.userId, extra, mentionedPeople);
    return addressesNobody(m) ? undefined : addressedPeople(db, m, d);
  };
  const inside = d.dialect === 'sqlite';
  let addressed = inside ? undefined : await addressedIn(d.db);
  let row!: MessageRow;
  let message!: Message;
  // D36: the message and its event commit together or not at all.
  try {
    await d.db.transaction().execute(async (trx) => {
      if (reads && !readFirst) referenced = await rich(trx);
      if (inside) {
        const reading = addressedIn(trx);
        if (reading) addressed = await reading;
      }
      // the send's view is built from what it stores, not from parsing it back
      const stored = storedExtra(extra);
      const extraText = stored === null ? null : JSON.stringify(stored);
      row = {
        id,
        channel_id: t.channelId,
        guild_id: t.guildId,
        author_id: p.userId,
        author_name: p.name,
        author_is_bot: p.isBot,
        content,
        created_at: now,
        edited_at: null,
        extra: extraText,
      };
      message = messageView(row, {
        ...(stored === null ? {} : { extra: stored }),
        ...(referenced === undefined ? {} : { referenced }),
      });
      // In a group commit these three are written at the group's end, and answer at once
      // (issue 29: no promise each); alone, each statement is awaited.
      const inserted = insertMessage(trx, [
        row.id,
        row.channel_id,
        row.guild_id,
        row.author_id,
        content,
        msgType,
        now,
        extraText,
      ]);
      if (inserted) await inserted;
      // D67: searchable from the same commit
      const indexed = indexMessage(trx, row.id, content);
      if (indexed) await indexed;
      // D24: each message sent today raises today's upload limit; counted with the message.
      const counted = countMessageForQuota(trx, p.userId, now);
      if (counted) await counted;
      if (addressed && addressed.size > 0)
        await addMentionMarks(trx, row.id, t.channelId, [...addressed.keys()]);
      await d.events.record(trx, {
        envelope:
          t.guildId === null
            ? { type: 'DM_MESSAGE_CREATE', data: message }
            : { type: 'MESSAGE_CREATE', data: message },
        scope: t.scope,
        pinned: p.pinned,
        answer: true,
      });
    });
  } catch (err) {
    // The channel was deleted after the access check (D49), in this send's group commit or
    // just before it: the message row's foreign key says so. 404 as if it had been gone.
    throw isForeignKeyViolation(err) ? notFound('channel') : err;
  }
  // D71: a person's links get previews, fetched after the answer (never for bots' messages).
  if (!p.isBot && body.suppressEmbeds !== true && content !== '')
    d.previews?.schedule({ ...row, scope: t.scope });
  // D66: Web Push for DMs and mentions, planned after the commit (never delays the answer).
  d.push?.messageCreated(message);
  return message;
}

type MessageValues = [
  id: number,
  channelId: number,
  guildId: number | null,
  authorId: number,
  content: string,
  msgType: number,
  createdAt: number,
  extra: string | null,
];
const MESSAGE_INSERT =
  'insert into "messages" ("id", "channel_id", "guild_id", "author_id", "content", ' +
  '"msg_type", "created_at", "edited_at", "extra") values ';
const MESSAGE_TUPLE = '(?, ?, ?, ?, ?, ?, ?, null, ?)';

/**
 * The message row. Fixed SQL: the hottest write of the server (storage/raw-sql.ts). In a group
 * commit it is folded into one statement with the other sends' rows at the group's end
 * (storage/group-commit.ts foldAtGroupEnd: issue 29, a plain send then runs no statement of its
 * own); a row that fails there (its channel deleted meanwhile) fails its own send alone.
 */
function insertMessage(trx: Db, values: MessageValues): void | Promise<void> {
  const folded = foldAtGroupEnd(
    trx,
    'messages',
    values,
    (run, rows) =>
      run(
        MESSAGE_INSERT + tuples(rows.length, MESSAGE_TUPLE),
        flatRows(rows, (r, out) => {
          for (const v of r) out.push(v);
        }),
      ),
    { gather: true },
  );
  if (!folded) return rawQuery(trx, MESSAGE_INSERT + MESSAGE_TUPLE, values).then(() => undefined);
}

/** D16: newest first; before/after/both as positions; hasMore in the direction of paging. */
async function list(d: Domain, p: Principal, t: Target, q: PageQuery): Promise<MessageList> {
  let query = selectMessages(d.db).where('m.channel_id', '=', t.channelId);
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
  return { messages: await hydrate(d.db, page, p.userId), hasMore };
}

async function ownMessage(d: Domain, p: Principal, t: Target, messageId: number) {
  const m = await findInChannel(d.db, t.channelId, messageId);
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
  body: EditMessageBody,
): Promise<EditedMessage> {
  const { message } = await editMessage(d, p, t, messageId, body);
  return {
    id: message.id,
    channelId: t.channelId,
    content: message.content,
    editedTimestamp: message.editedTimestamp ?? message.timestamp,
  };
}

async function editMessage(
  d: Domain,
  p: Principal,
  t: Target,
  messageId: number,
  body: Omit<EditMessageBody, 'content'> & { content?: string },
): Promise<{ message: Message }> {
  const m = await ownMessage(d, p, t, messageId);
  const now = Math.max(d.clock.now(), m.created_at);
  // D65: an edit of @original may leave the content as it is
  const content = body.content ?? m.content;
  // D61: an edit changes content and (a bot's) embeds, never attachments or the reference;
  // mentions are those of the new content, by the same rules.
  const extra = readExtra(m.extra);
  if (body.embeds !== undefined) {
    const links = (extra.embeds ?? []).filter((e) => e.type === 'link');
    extra.embeds = [...(await checkEmbeds(d, p.isBot, body.embeds)), ...links];
  }
  if (body.components !== undefined) extra.components = botComponents(p, body.components);
  const mentions = await resolveMentions(d, d.db, {
    content,
    guildId: t.guildId,
    ...(t.scope.kind === 'dm' ? { dmUserIds: t.scope.userIds } : {}),
    permissions: t.permissions,
    allowed: undefined,
    authorId: p.userId,
  });
  // the replied-to author stays mentioned when they were
  const replied = extra.reference && (extra.mentions ?? []).length > 0 ? extra.mentions : [];
  extra.mentions = [...new Set([...mentions.mentions, ...(replied ?? [])])];
  extra.mentionRoles = mentions.mentionRoles;
  if (mentions.mentionEveryone) extra.mentionEveryone = true;
  else delete extra.mentionEveryone;
  const extraText = storeExtra(extra);
  const row: MessageRow = { ...m, content, edited_at: now, extra: extraText };
  const message = messageView(row);
  // D66: an edit that adds a mention marks it unread for the newly mentioned (unless they read
  // past it), one that drops a mention unmarks it. A DM addresses its other party either way.
  const addressed =
    t.guildId === null
      ? undefined
      : await addressedPeople(d.db, addressedOf(t, m.id, p.userId, extra));
  await d.db.transaction().execute(async (trx) => {
    const res = await trx
      .updateTable('messages')
      .set({ content, edited_at: now, extra: extraText })
      .where('id', '=', m.id)
      .where('channel_id', '=', t.channelId)
      .executeTakeFirst();
    // Deleted between the read and the write.
    if (res.numUpdatedRows === 0n) throw notFound('message');
    if (addressed) await updateMentionMarks(trx, m.id, t.channelId, [...addressed.keys()]);
    // D67: the new text is what search finds, from the same commit
    if (content !== m.content) await reindexMessage(trx, m.id);
    await d.events.record(trx, {
      envelope:
        t.guildId === null
          ? { type: 'DM_MESSAGE_UPDATE', data: message }
          : { type: 'MESSAGE_UPDATE', data: message },
      scope: t.scope,
    });
  });
  return { message };
}

/** D66: a message of this target as whom it addresses sees it. */
const addressedOf = (
  t: Target,
  id: number,
  authorId: number,
  extra: MessageExtra,
  mentionedPeople?: readonly number[],
): AddressedMessage => ({
  id,
  channelId: t.channelId,
  guildId: t.guildId,
  authorId,
  mentions: extra.mentions ?? [],
  mentionRoles: extra.mentionRoles ?? [],
  mentionEveryone: extra.mentionEveryone === true,
  dmUserIds: t.scope.kind === 'dm' ? t.scope.userIds : undefined,
  mentionedPeople,
});

/** D65: components are a bot's (a person's → 400), checked beyond their schema. */
function botComponents(p: Principal, rows: ActionRow[]): ActionRow[] {
  if (!p.isBot) throw invalid('components', 'only bots send components');
  checkComponents(rows);
  return rows;
}

async function remove(d: Domain, p: Principal, t: Target, messageId: number): Promise<void> {
  const m = await ownMessage(d, p, t, messageId);
  await deleteMessage(d, t.channelId, m.id);
}

// D12: sending needs SEND_MESSAGES (D57: and ATTACH_FILES for msgType 1–3; D58: not timed
// out); listing needs READ_MESSAGE_HISTORY; VIEW_CHANNEL always.
export const guildMessages = {
  // Not async: a known target goes straight on to the send's own promise (issue 29). An access
  // check that fails at once throws here; callers await inside async handlers, where a throw
  // and a rejection are one.
  send: (d: Domain, p: Principal, channelId: number, body: SendInput): Promise<Message> => {
    // D58: a timed-out member may not send
    const t = guildTarget(d, p, channelId, Permission.SEND_MESSAGES, { speaking: true });
    return t instanceof Promise ? t.then((x) => send(d, p, x, body)) : send(d, p, t, body);
  },
  list: async (d: Domain, p: Principal, channelId: number, q: PageQuery) =>
    list(d, p, await guildTarget(d, p, channelId, Permission.READ_MESSAGE_HISTORY), q),
  edit: async (
    d: Domain,
    p: Principal,
    channelId: number,
    messageId: number,
    body: EditMessageBody,
  ) => edit(d, p, await guildTarget(d, p, channelId, 0), messageId, body),
  // D59: the author's own, or anyone's with MANAGE_MESSAGES (moderation/moderation.service.ts)
  remove: async (
    d: Domain,
    p: Principal,
    channelId: number,
    messageId: number,
    reason: string | null = null,
  ) => deleteGuildMessage(d, actorOf(p, reason), channelId, messageId),
};

/**
 * D65: a bot's answer to an interaction and the edits of it, in a guild channel or a DM. The
 * interaction's token authorizes them (the person invoked the bot there): the bot needs only to
 * see the channel, not SEND_MESSAGES.
 */
export const interactionMessages = {
  send: async (d: Domain, p: Principal, channelId: number, body: SendInput, reply: ReplyOptions) =>
    send(d, p, await anyTarget(d, p, channelId), body, reply),
  edit: async (
    d: Domain,
    p: Principal,
    channelId: number,
    messageId: number,
    body: Omit<EditMessageBody, 'content'> & { content?: string },
  ): Promise<Message> =>
    (await editMessage(d, p, await anyTarget(d, p, channelId), messageId, body)).message,
};

async function anyTarget(d: Domain, p: Principal, channelId: number): Promise<Target> {
  const ch = await d.db
    .selectFrom('channels')
    .select('guild_id')
    .where('id', '=', channelId)
    .executeTakeFirst();
  if (!ch) throw notFound('channel');
  return ch.guild_id === null ? dmTarget(d, p, channelId) : guildTarget(d, p, channelId, 0);
}

// D17: the same operations on DM channels, open to the two parties.
export const dmMessages = {
  send: async (d: Domain, p: Principal, channelId: number, body: SendInput) =>
    send(d, p, await dmTarget(d, p, channelId), body),
  list: async (d: Domain, p: Principal, channelId: number, q: PageQuery) =>
    list(d, p, await dmTarget(d, p, channelId), q),
  edit: async (
    d: Domain,
    p: Principal,
    channelId: number,
    messageId: number,
    body: EditMessageBody,
  ) => edit(d, p, await dmTarget(d, p, channelId), messageId, body),
  remove: async (d: Domain, p: Principal, channelId: number, messageId: number) =>
    remove(d, p, await dmTarget(d, p, channelId), messageId),
};
