import { Type, type Static } from 'typebox';
import { CursorParam, Id } from './ids.js';

/**
 * D61–D63, D71: what a message may carry beyond D17–D18. Every field is present on a Message
 * only when it carries something (D56), so a client that uses none of it sees what it saw.
 */

/** D61 limits. */
export const RICH_LIMITS = {
  attachments: 10,
  embeds: 10,
  embedTitle: 256,
  embedDescription: 4096,
  embedFields: 25,
  fieldName: 256,
  fieldValue: 1024,
  footerText: 2048,
  authorName: 256,
  /** all the text of all of a message's embeds together */
  embedTotal: 6000,
  /** D63 */
  reactionsPerMessage: 20,
  pinsPerChannel: 50,
  /** D71 */
  linkPreviews: 5,
} as const;

const Url = Type.String({ minLength: 1, maxLength: 2048 });
const Iso = Type.String({ format: 'date-time' });

/** D61: `messageReference {messageId}`: a reply in the same channel. */
export const MessageReferenceBody = Type.Object(
  { messageId: Id },
  { title: 'MessageReferenceBody', additionalProperties: false },
);

/** D61: which mentions notify (default: every parsed one, the replied-to author included). */
export const AllowedMentions = Type.Object(
  {
    parse: Type.Optional(
      Type.Array(
        Type.Union([Type.Literal('users'), Type.Literal('roles'), Type.Literal('everyone')]),
        {
          uniqueItems: true,
        },
      ),
    ),
    users: Type.Optional(Type.Array(Id, { maxItems: 100, uniqueItems: true })),
    roles: Type.Optional(Type.Array(Id, { maxItems: 100, uniqueItems: true })),
    repliedUser: Type.Optional(Type.Boolean()),
  },
  { title: 'AllowedMentions', additionalProperties: false },
);
export type AllowedMentions = Static<typeof AllowedMentions>;

const EmbedAuthor = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: RICH_LIMITS.authorName }),
    url: Type.Optional(Url),
    iconUrl: Type.Optional(Url),
  },
  { additionalProperties: false },
);
const EmbedField = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: RICH_LIMITS.fieldName }),
    value: Type.String({ minLength: 1, maxLength: RICH_LIMITS.fieldValue }),
    inline: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const EmbedImageIn = Type.Object({ url: Url }, { additionalProperties: false });
const EmbedFooter = Type.Object(
  {
    text: Type.String({ minLength: 1, maxLength: RICH_LIMITS.footerText }),
    iconUrl: Type.Optional(Url),
  },
  { additionalProperties: false },
);

/** D61: a bot's embed as sent. Image and icon URLs must be this platform's uploads. */
export const EmbedInput = Type.Object(
  {
    title: Type.Optional(Type.String({ minLength: 1, maxLength: RICH_LIMITS.embedTitle })),
    description: Type.Optional(
      Type.String({ minLength: 1, maxLength: RICH_LIMITS.embedDescription }),
    ),
    url: Type.Optional(Url),
    color: Type.Optional(Type.Integer({ minimum: 0, maximum: 0xffffff })),
    timestamp: Type.Optional(Iso),
    author: Type.Optional(EmbedAuthor),
    fields: Type.Optional(Type.Array(EmbedField, { maxItems: RICH_LIMITS.embedFields })),
    image: Type.Optional(EmbedImageIn),
    thumbnail: Type.Optional(EmbedImageIn),
    footer: Type.Optional(EmbedFooter),
  },
  { title: 'EmbedInput', additionalProperties: false, minProperties: 1 },
);
export type EmbedInput = Static<typeof EmbedInput>;

const EmbedImage = Type.Object(
  {
    url: Url,
    width: Type.Optional(Type.Integer({ minimum: 0 })),
    height: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { additionalProperties: false },
);

/**
 * D61/D71: an embed as a Message carries it: a bot's own (`type: "rich"`) or a link preview the
 * server made (`type: "link"`, with `siteName`).
 */
export const Embed = Type.Object(
  {
    type: Type.Union([Type.Literal('rich'), Type.Literal('link')]),
    title: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    url: Type.Optional(Type.String()),
    siteName: Type.Optional(Type.String()),
    color: Type.Optional(Type.Integer()),
    timestamp: Type.Optional(Iso),
    author: Type.Optional(EmbedAuthor),
    fields: Type.Optional(Type.Array(EmbedField)),
    image: Type.Optional(EmbedImage),
    thumbnail: Type.Optional(EmbedImage),
    footer: Type.Optional(EmbedFooter),
  },
  { title: 'Embed', additionalProperties: false },
);
export type Embed = Static<typeof Embed>;

/** D61: an attachment; type, size and dimensions are read from the file by the server. */
export const Attachment = Type.Object(
  {
    url: Type.String(),
    filename: Type.String(),
    size: Type.Integer({ minimum: 0 }),
    contentType: Type.String(),
    width: Type.Optional(Type.Integer({ minimum: 1 })),
    height: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { title: 'Attachment', additionalProperties: false },
);
export type Attachment = Static<typeof Attachment>;

/** D63: one emoji's reactions on a message; `me` is the reader's own. */
export const Reaction = Type.Object(
  { emoji: Type.String(), count: Type.Integer({ minimum: 1 }), me: Type.Boolean() },
  { title: 'Reaction', additionalProperties: false },
);
export type Reaction = Static<typeof Reaction>;

export const MessageReference = Type.Object(
  { messageId: Id, channelId: Id },
  { title: 'MessageReference', additionalProperties: false },
);
export type MessageReference = Static<typeof MessageReference>;

/** D63: GET …/reactions/:emoji → {users, hasMore}, ascending ids. */
export const ReactionUsersQuery = Type.Object(
  {
    after: Type.Optional(CursorParam),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  },
  { additionalProperties: false },
);

/** D63: the types a bot may subscribe to beyond D34's eight. */
export const SUBSCRIBABLE_EVENT_TYPES = [
  'MESSAGE_REACTION_ADD',
  'MESSAGE_REACTION_REMOVE',
  'CHANNEL_PINS_UPDATE',
  'MESSAGE_EMBEDS_UPDATE',
  'GUILD_CREATE',
  'GUILD_UPDATE',
  'GUILD_DELETE',
  'CHANNEL_CREATE',
  'CHANNEL_UPDATE',
  'CHANNEL_DELETE',
  'GUILD_ROLES_UPDATE',
  'GUILD_MEMBER_UPDATE',
  'TYPING_START',
  'PRESENCE_UPDATE',
] as const;
export type SubscribableEventType = (typeof SUBSCRIBABLE_EVENT_TYPES)[number];

export const BotEvents = Type.Array(
  Type.Union(SUBSCRIBABLE_EVENT_TYPES.map((t) => Type.Literal(t))),
  { uniqueItems: true, maxItems: SUBSCRIBABLE_EVENT_TYPES.length },
);

/** D63: the reaction events' data. */
export const ReactionEventData = Type.Object(
  {
    userId: Id,
    channelId: Id,
    messageId: Id,
    guildId: Type.Optional(Id),
    emoji: Type.String(),
  },
  { additionalProperties: false },
);
export type ReactionEventData = Static<typeof ReactionEventData>;

export const ChannelPinsUpdateData = Type.Object(
  { channelId: Id, guildId: Type.Optional(Id) },
  { additionalProperties: false },
);
export type ChannelPinsUpdateData = Static<typeof ChannelPinsUpdateData>;

/** D71: a bot's MESSAGE_EMBEDS_UPDATE: the message's new link previews. */
export const MessageEmbedsUpdateData = Type.Object(
  { id: Id, channelId: Id, guildId: Type.Optional(Id), embeds: Type.Array(Embed) },
  { additionalProperties: false },
);
export type MessageEmbedsUpdateData = Static<typeof MessageEmbedsUpdateData>;
