import { Type, type Static } from 'typebox';
import { Id } from './ids.js';
import { Components, MessageInteraction } from './interactions.js';
import {
  AllowedMentions,
  Attachment,
  Embed,
  EmbedInput,
  MessageReference,
  MessageReferenceBody,
  Reaction,
  RICH_LIMITS,
  BotEvents,
  TrueFlag,
} from './rich.js';

/** D18: ISO 8601 UTC with milliseconds. */
export const Timestamp = Type.String({
  format: 'date-time',
  examples: ['2026-11-22T03:00:00.000Z'],
});

/** D14: 1–2000 Unicode code points (ajv counts code points, not UTF-16 units). */
export const MAX_CONTENT_CODEPOINTS = 2000;
export const Content = Type.String({ minLength: 1, maxLength: MAX_CONTENT_CODEPOINTS });

export const BotUser = Type.Object(
  { id: Id, name: Type.String(), isBot: Type.Boolean() },
  { title: 'BotUser', additionalProperties: false },
);
export type BotUser = Static<typeof BotUser>;

export const Bot = Type.Object(
  {
    id: Id,
    name: Type.String(),
    avatar: Type.String({ description: 'absolute URL (D20)' }),
    description: Type.String(),
    botUser: BotUser,
    /** D63: the event types it subscribed to beyond D34's eight; absent when none */
    events: Type.Optional(BotEvents),
  },
  { title: 'Bot', additionalProperties: false },
);
export type Bot = Static<typeof Bot>;

/** D18: author is {id, name}; D56: a bot author adds `isBot: true` (absent for people). */
export const Author = Type.Object(
  { id: Id, name: Type.String(), isBot: Type.Optional(TrueFlag) },
  { additionalProperties: false },
);

/**
 * D17: the same Message object everywhere; guild messages carry guildId, DM messages never.
 * D61: the fields after `editedTimestamp` are present only when they carry something (D56).
 */
const messageFields = {
  id: Id,
  channelId: Id,
  guildId: Type.Optional(Id),
  content: Type.String(),
  author: Author,
  timestamp: Timestamp,
  editedTimestamp: Type.Optional(Timestamp),
  mentions: Type.Optional(Type.Array(Id)),
  mentionRoles: Type.Optional(Type.Array(Id)),
  mentionEveryone: Type.Optional(TrueFlag),
  attachments: Type.Optional(Type.Array(Attachment)),
  embeds: Type.Optional(Type.Array(Embed)),
  reactions: Type.Optional(Type.Array(Reaction)),
  pinned: Type.Optional(TrueFlag),
  // D65: a bot's buttons and selects; D61: 1 = ephemeral (128: the "thinking…" of a deferred
  // reply); the interaction a reply answers
  components: Type.Optional(Components),
  flags: Type.Optional(Type.Integer({ minimum: 1 })),
  interaction: Type.Optional(MessageInteraction),
};

/** D61: the message a reply answers, as it is now, without its own reference. */
export const ReferencedMessage = Type.Object(messageFields, {
  title: 'ReferencedMessage',
  additionalProperties: false,
});
export type ReferencedMessage = Static<typeof ReferencedMessage>;

export const Message = Type.Object(
  {
    ...messageFields,
    reference: Type.Optional(MessageReference),
    /** null once the replied-to message is deleted */
    referencedMessage: Type.Optional(Type.Union([ReferencedMessage, Type.Null()])),
  },
  { title: 'Message', additionalProperties: false },
);
export type Message = Static<typeof Message>;

/** D15: msgType optional, 0 text, 1 image, 2 audio, 3 video. */
export const MsgType = Type.Union(
  [Type.Literal(0), Type.Literal(1), Type.Literal(2), Type.Literal(3)],
  { description: '0 text (default); 1 image, 2 audio, 3 video: content is an uploaded file URL' },
);

/**
 * D14/D15 and D61: `content` may be empty (or left out) only when the message carries
 * attachments or embeds; D71: `suppressEmbeds` skips link previews.
 */
export const SendMessageBody = Type.Object(
  {
    content: Type.Optional(Type.String({ maxLength: MAX_CONTENT_CODEPOINTS })),
    msgType: Type.Optional(MsgType),
    messageReference: Type.Optional(MessageReferenceBody),
    allowedMentions: Type.Optional(AllowedMentions),
    attachments: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 2048 }), {
        minItems: 1,
        maxItems: RICH_LIMITS.attachments,
      }),
    ),
    embeds: Type.Optional(Type.Array(EmbedInput, { maxItems: RICH_LIMITS.embeds })),
    suppressEmbeds: Type.Optional(Type.Boolean()),
    /** D65: bots only */
    components: Type.Optional(Components),
  },
  { title: 'SendMessageBody' },
);
export type SendMessageBody = Static<typeof SendMessageBody>;

/** D61: an edit may change content and (a bot's) embeds, never attachments. */
export const EditMessageBody = Type.Object(
  {
    content: Content,
    embeds: Type.Optional(Type.Array(EmbedInput, { maxItems: RICH_LIMITS.embeds })),
    /** D65: a bot's components ([] removes them) */
    components: Type.Optional(Components),
  },
  { title: 'EditMessageBody' },
);
export type EditMessageBody = Static<typeof EditMessageBody>;

/** docs/interface.md: the edit response is {id, channelId, content, editedTimestamp}. */
export const EditedMessage = Type.Object(
  { id: Id, channelId: Id, content: Type.String(), editedTimestamp: Timestamp },
  { title: 'EditedMessage', additionalProperties: false },
);
export type EditedMessage = Static<typeof EditedMessage>;

export const MessageList = Type.Object(
  { messages: Type.Array(Message), hasMore: Type.Boolean() },
  { title: 'MessageList', additionalProperties: false },
);
export type MessageList = Static<typeof MessageList>;

/** D67: what a search may ask for (`has`), and its page sizes. */
export const SEARCH_HAS = ['link', 'embed', 'file', 'image', 'video', 'audio'] as const;
export type SearchHas = (typeof SEARCH_HAS)[number];
export const SEARCH_PAGE = { default: 25, max: 25, maxOffset: 975, totalCap: 1000 } as const;

/**
 * D67: a page of search hits, newest first. `total` is exact up to 1,000; past that it is 1000
 * and `totalCapped` is true (present only then).
 */
export const SearchResult = Type.Object(
  {
    messages: Type.Array(Message),
    total: Type.Integer({ minimum: 0, maximum: SEARCH_PAGE.totalCap }),
    hasMore: Type.Boolean(),
    totalCapped: Type.Optional(Type.Literal(true)),
  },
  { title: 'SearchResult', additionalProperties: false },
);
export type SearchResult = Static<typeof SearchResult>;

/** D19: list entries {id, guildId, name, type}; the single read adds topic. */
export const ChannelSummary = Type.Object(
  { id: Id, guildId: Id, name: Type.String(), type: Type.Integer() },
  { title: 'ChannelSummary', additionalProperties: false },
);
export type ChannelSummary = Static<typeof ChannelSummary>;

export const Channel = Type.Object(
  {
    id: Id,
    guildId: Id,
    name: Type.String(),
    type: Type.Integer(),
    topic: Type.String(),
    /** D66: only in a person's READY, and only once the channel has a message */
    lastMessageId: Type.Optional(Id),
  },
  { title: 'Channel', additionalProperties: false },
);
export type Channel = Static<typeof Channel>;

export const ChannelList = Type.Object(
  { channels: Type.Array(ChannelSummary) },
  { title: 'ChannelList', additionalProperties: false },
);
export type ChannelList = Static<typeof ChannelList>;

/** D56: a bot member's user carries `isBot: true` (absent for people). */
export const MemberUser = Type.Object(
  {
    id: Id,
    name: Type.String(),
    avatar: Type.String(),
    isBot: Type.Optional(Type.Boolean({ description: 'D56: present (true) only for bots' })),
  },
  { title: 'MemberUser', additionalProperties: false },
);
export type MemberUser = Static<typeof MemberUser>;

/** D20: list entries {user, joinedAt}; the single read adds roles (without @everyone). */
export const MemberSummary = Type.Object(
  {
    user: MemberUser,
    joinedAt: Timestamp,
    /** D56/D58: only with `?withRoles=true` — the member's role ids (ascending) */
    roles: Type.Optional(Type.Array(Id)),
    /** D56/D58: only with `?withRoles=true`, and only while the member is timed out */
    timeoutUntil: Type.Optional(Timestamp),
  },
  { title: 'MemberSummary', additionalProperties: false },
);
export type MemberSummary = Static<typeof MemberSummary>;

export const Member = Type.Object(
  {
    user: MemberUser,
    roles: Type.Array(Id),
    joinedAt: Timestamp,
    /** D58: present while the member is timed out */
    timeoutUntil: Type.Optional(Timestamp),
  },
  { title: 'Member', additionalProperties: false },
);
export type Member = Static<typeof Member>;

export const MemberList = Type.Object(
  { members: Type.Array(MemberSummary), hasMore: Type.Boolean() },
  { title: 'MemberList', additionalProperties: false },
);
export type MemberList = Static<typeof MemberList>;

export const DmChannelRef = Type.Object(
  { channelId: Id, recipientId: Id },
  { title: 'DmChannelRef', additionalProperties: false },
);
export type DmChannelRef = Static<typeof DmChannelRef>;

export const UploadedFile = Type.Object(
  { url: Type.String(), filename: Type.String(), size: Type.Integer({ minimum: 0 }) },
  { title: 'UploadedFile', additionalProperties: false },
);
export type UploadedFile = Static<typeof UploadedFile>;

export const UploadQuota = Type.Object(
  {
    dailyUsed: Type.Integer({ minimum: 0 }),
    dailyLimit: Type.Integer({ minimum: 0 }),
    monthlyUsed: Type.Integer({ minimum: 0 }),
    monthlyLimit: Type.Integer({ minimum: 0 }),
  },
  { title: 'UploadQuota', additionalProperties: false },
);
export type UploadQuota = Static<typeof UploadQuota>;

/** D16 limits. */
export const MESSAGE_PAGE = { default: 50, max: 100 } as const;
export const MEMBER_PAGE = { default: 100, max: 1000 } as const;
