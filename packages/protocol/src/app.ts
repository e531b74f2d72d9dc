import { Type, type Static } from 'typebox';
import { Delivery, Role, RoleColor, User } from './admin.js';
import { Id } from './ids.js';
import { ALL_PERMISSIONS } from './permissions.js';
import { Bot, Channel, MemberUser, Timestamp } from './rest.js';
import { BotEvents } from './rich.js';
import { AvatarUrl, BotDescription, LabelName, PersonName } from './text.js';

/**
 * The people's API `/app/v1` (D45–D50) and the people's gateway (D51): request and response
 * bodies. Same error form (D5), ids (D3–D4) and timestamps (D18) as the bot interface.
 */

const Password = Type.String({
  minLength: 8,
  maxLength: 256,
  description: 'D46: 8–256 characters',
});
const PermissionBits = Type.Integer({ minimum: 0, maximum: ALL_PERMISSIONS });
const Topic = Type.String({ maxLength: 1024 });

// D46 accounts ---------------------------------------------------------------------------------

export const RegisterBody = Type.Object(
  {
    name: PersonName,
    password: Password,
    invite: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  },
  { title: 'RegisterBody', additionalProperties: false },
);
export type RegisterBody = Static<typeof RegisterBody>;

export const LoginBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 64 }),
    password: Type.String({ minLength: 1, maxLength: 256 }),
  },
  { title: 'LoginBody', additionalProperties: false },
);
export type LoginBody = Static<typeof LoginBody>;

/** D46: `user` is {id, name, avatar, isBot:false}; `token` is the session's bearer token. */
export const AuthResult = Type.Object(
  { user: User, token: Type.String() },
  { title: 'AuthResult', additionalProperties: false },
);
export type AuthResult = Static<typeof AuthResult>;

// D47 sessions ---------------------------------------------------------------------------------

export const SessionInfo = Type.Object(
  {
    id: Type.String(),
    createdAt: Timestamp,
    lastUsedAt: Timestamp,
    userAgent: Type.String(),
    current: Type.Boolean(),
  },
  { title: 'SessionInfo', additionalProperties: false },
);
export type SessionInfo = Static<typeof SessionInfo>;

export const SessionList = Type.Object(
  { sessions: Type.Array(SessionInfo) },
  { title: 'SessionList', additionalProperties: false },
);
export type SessionList = Static<typeof SessionList>;

export const ChangePasswordBody = Type.Object(
  { current: Type.String({ minLength: 1, maxLength: 256 }), password: Password },
  { title: 'ChangePasswordBody', additionalProperties: false },
);
export type ChangePasswordBody = Static<typeof ChangePasswordBody>;

// D48 me, read states, users -------------------------------------------------------------------

export const PatchMeBody = Type.Object(
  {
    name: Type.Optional(PersonName),
    /** D48: an http(s) URL, a {cdn_url} upload, or null for the default avatar */
    avatar: Type.Optional(Type.Union([AvatarUrl, Type.Null()])),
  },
  { title: 'PatchMeBody', additionalProperties: false },
);
export type PatchMeBody = Static<typeof PatchMeBody>;

export const GuildRef = Type.Object(
  { id: Id, name: Type.String(), ownerId: Id },
  { title: 'GuildRef', additionalProperties: false },
);
export type GuildRef = Static<typeof GuildRef>;

export const MyGuilds = Type.Object(
  { guilds: Type.Array(GuildRef) },
  { title: 'MyGuilds', additionalProperties: false },
);
export type MyGuilds = Static<typeof MyGuilds>;

export const DmSummary = Type.Object(
  {
    channelId: Id,
    recipient: User,
    /** null while the DM has no message */
    lastMessageId: Type.Union([Id, Type.Null()]),
  },
  { title: 'DmSummary', additionalProperties: false },
);
export type DmSummary = Static<typeof DmSummary>;

export const DmList = Type.Object(
  { dms: Type.Array(DmSummary) },
  { title: 'DmList', additionalProperties: false },
);
export type DmList = Static<typeof DmList>;

export const ReadBody = Type.Object(
  { messageId: Id },
  { title: 'ReadBody', additionalProperties: false },
);
export type ReadBody = Static<typeof ReadBody>;

/**
 * D48 read mark; D66 adds `mentionCount`: the messages past `lastReadId` that mention the person
 * (directly, a role of theirs, @everyone/@here) — in a DM, every message of the other party —
 * kept as messages arrive (server: domain/notifications/mention-marks.ts).
 */
export const ReadState = Type.Object(
  {
    channelId: Id,
    /** 0: no read mark yet (D66: a channel with unread mentions the person never marked) */
    lastReadId: Type.Integer({ minimum: 0 }),
    mentionCount: Type.Integer({ minimum: 0 }),
  },
  { title: 'ReadState', additionalProperties: false },
);
export type ReadState = Static<typeof ReadState>;

export const ReadStates = Type.Object(
  { readStates: Type.Array(ReadState) },
  { title: 'ReadStates', additionalProperties: false },
);
export type ReadStates = Static<typeof ReadStates>;

// D49 guilds for people ------------------------------------------------------------------------

/** D49: a guild as its members see it (also GUILD_CREATE / GUILD_UPDATE data and READY, D51). */
export const AppGuild = Type.Object(
  {
    id: Id,
    name: Type.String(),
    ownerId: Id,
    roles: Type.Array(Role),
    channels: Type.Array(Channel),
    /** user ids of its bot members */
    bots: Type.Array(Id),
    /** guild-level bits of the caller; every bit for the owner and for ADMINISTRATOR */
    myPermissions: Type.Integer({ minimum: 0 }),
  },
  { title: 'AppGuild', additionalProperties: false },
);
export type AppGuild = Static<typeof AppGuild>;

export const CreateAppGuildBody = Type.Object(
  { name: LabelName },
  { title: 'CreateAppGuildBody', additionalProperties: false },
);
export type CreateAppGuildBody = Static<typeof CreateAppGuildBody>;

export const PatchGuildBody = Type.Object(
  { name: LabelName },
  { title: 'PatchGuildBody', additionalProperties: false },
);
export type PatchGuildBody = Static<typeof PatchGuildBody>;

/** D70: an overwrite given with a new channel (a private channel in one step). */
export const ChannelOverwriteEntry = Type.Object(
  { roleId: Id, allow: PermissionBits, deny: PermissionBits },
  { title: 'ChannelOverwriteEntry', additionalProperties: false },
);
export type ChannelOverwriteEntry = Static<typeof ChannelOverwriteEntry>;

export const CreateAppChannelBody = Type.Object(
  {
    name: LabelName,
    topic: Type.Optional(Topic),
    /** D70: the channel's overwrites from the start (e.g. @everyone denied VIEW_CHANNEL) */
    overwrites: Type.Optional(
      Type.Array(ChannelOverwriteEntry, {
        maxItems: 250,
        description:
          'D70: overwrites set with the channel, in the same step (a private channel); each role of this guild at most once',
      }),
    ),
  },
  { title: 'CreateAppChannelBody', additionalProperties: false },
);
export type CreateAppChannelBody = Static<typeof CreateAppChannelBody>;

export const PatchChannelBody = Type.Object(
  { name: Type.Optional(LabelName), topic: Type.Optional(Topic) },
  { title: 'PatchChannelBody', additionalProperties: false, minProperties: 1 },
);
export type PatchChannelBody = Static<typeof PatchChannelBody>;

export const CreateAppRoleBody = Type.Object(
  {
    name: LabelName,
    permissions: PermissionBits,
    color: Type.Optional(RoleColor),
    mentionable: Type.Optional(Type.Boolean()),
  },
  { title: 'CreateAppRoleBody', additionalProperties: false },
);
export type CreateAppRoleBody = Static<typeof CreateAppRoleBody>;

export const PatchRoleBody = Type.Object(
  {
    name: Type.Optional(LabelName),
    permissions: Type.Optional(PermissionBits),
    color: Type.Optional(RoleColor),
    mentionable: Type.Optional(Type.Boolean()),
  },
  { title: 'PatchRoleBody', additionalProperties: false, minProperties: 1 },
);
export type PatchRoleBody = Static<typeof PatchRoleBody>;

export const MemberRolesBody = Type.Object(
  { roles: Type.Array(Id, { maxItems: 250, uniqueItems: true }) },
  { title: 'MemberRolesBody', additionalProperties: false },
);
export type MemberRolesBody = Static<typeof MemberRolesBody>;

/** D58: `PATCH /guilds/:guildId/roles` — new positions; the answer is the roles in order. */
export const ReorderRolesBody = Type.Array(
  Type.Object(
    { id: Id, position: Type.Integer({ minimum: 1, maximum: 1000 }) },
    { additionalProperties: false },
  ),
  { title: 'ReorderRolesBody', minItems: 1, maxItems: 250 },
);
export type ReorderRolesBody = Static<typeof ReorderRolesBody>;

export const RoleList = Type.Object(
  { roles: Type.Array(Role) },
  { title: 'RoleList', additionalProperties: false },
);
export type RoleList = Static<typeof RoleList>;

/** D58: time a member out (at most 28 days ahead) or end it (null). */
export const PatchMemberBody = Type.Object(
  { timeoutUntil: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]) },
  { title: 'PatchMemberBody', additionalProperties: false },
);
export type PatchMemberBody = Static<typeof PatchMemberBody>;

/** D60: one audit entry; `changes` lists the keys that changed. */
export const AuditEntry = Type.Object(
  {
    id: Id,
    actorId: Type.Union([Id, Type.Null()]),
    actorType: Type.Union([Type.Literal('user'), Type.Literal('bot'), Type.Literal('operator')]),
    action: Type.String(),
    targetId: Type.Union([Id, Type.Null()]),
    reason: Type.Union([Type.String(), Type.Null()]),
    changes: Type.Array(
      Type.Object(
        {
          key: Type.String(),
          old: Type.Optional(Type.Unknown()),
          new: Type.Optional(Type.Unknown()),
        },
        { additionalProperties: false },
      ),
    ),
    createdAt: Timestamp,
  },
  { title: 'AuditEntry', additionalProperties: false },
);
export type AuditEntry = Static<typeof AuditEntry>;

export const AuditLog = Type.Object(
  { entries: Type.Array(AuditEntry), hasMore: Type.Boolean() },
  { title: 'AuditLog', additionalProperties: false },
);
export type AuditLog = Static<typeof AuditLog>;

/** D49: a channel's overwrite for a role (unknown fields refused, unlike the operator's form). */
export const AppOverwriteBody = Type.Object(
  { allow: PermissionBits, deny: PermissionBits },
  { title: 'AppOverwriteBody', additionalProperties: false },
);
export type AppOverwriteBody = Static<typeof AppOverwriteBody>;

/** D51 GUILD_MEMBER_UPDATE data, and the answer of the member-roles route. */
export const MemberRoles = Type.Object(
  {
    guildId: Id,
    user: MemberUser,
    roles: Type.Array(Id),
    /** D58: present while the member is timed out */
    timeoutUntil: Type.Optional(Timestamp),
  },
  { title: 'MemberRoles', additionalProperties: false },
);
export type MemberRoles = Static<typeof MemberRoles>;

export const Ban = Type.Object(
  { user: MemberUser, createdAt: Timestamp },
  { title: 'Ban', additionalProperties: false },
);
export type Ban = Static<typeof Ban>;

export const BanList = Type.Object(
  { bans: Type.Array(Ban) },
  { title: 'BanList', additionalProperties: false },
);
export type BanList = Static<typeof BanList>;

export const CreateInviteBody = Type.Object(
  {
    maxUses: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
    expiresInS: Type.Optional(Type.Integer({ minimum: 60, maximum: 30 * 86_400 })),
  },
  { title: 'CreateInviteBody', additionalProperties: false },
);
export type CreateInviteBody = Static<typeof CreateInviteBody>;

export const Invite = Type.Object(
  {
    code: Type.String(),
    guildId: Id,
    /** `<public origin>/invite/<code>`: the web app's invite page */
    url: Type.String(),
    uses: Type.Integer({ minimum: 0 }),
    maxUses: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
    expiresAt: Type.Union([Timestamp, Type.Null()]),
  },
  { title: 'Invite', additionalProperties: false },
);
export type Invite = Static<typeof Invite>;

export const InviteList = Type.Object(
  { invites: Type.Array(Invite) },
  { title: 'InviteList', additionalProperties: false },
);
export type InviteList = Static<typeof InviteList>;

/** D49: what anyone with the code may see, without logging in. */
export const InvitePreview = Type.Object(
  {
    code: Type.String(),
    guild: Type.Object(
      { id: Id, name: Type.String(), memberCount: Type.Integer({ minimum: 0 }) },
      { additionalProperties: false },
    ),
  },
  { title: 'InvitePreview', additionalProperties: false },
);
export type InvitePreview = Static<typeof InvitePreview>;

export const AcceptedInvite = Type.Object(
  { guildId: Id },
  { title: 'AcceptedInvite', additionalProperties: false },
);
export type AcceptedInvite = Static<typeof AcceptedInvite>;

// D50 bot owners -------------------------------------------------------------------------------

export const OwnedBot = Type.Object(
  { bot: Bot, webhookUrl: Type.Union([Type.String(), Type.Null()]), guilds: Type.Array(Id) },
  { title: 'OwnedBot', additionalProperties: false },
);
export type OwnedBot = Static<typeof OwnedBot>;

export const OwnedBotList = Type.Object(
  { bots: Type.Array(OwnedBot) },
  { title: 'OwnedBotList', additionalProperties: false },
);
export type OwnedBotList = Static<typeof OwnedBotList>;

export const CreateOwnBotBody = Type.Object(
  {
    name: LabelName,
    description: Type.Optional(BotDescription),
    avatar: Type.Optional(AvatarUrl),
  },
  { title: 'CreateOwnBotBody', additionalProperties: false },
);
export type CreateOwnBotBody = Static<typeof CreateOwnBotBody>;

export const PatchBotBody = Type.Object(
  {
    name: Type.Optional(LabelName),
    description: Type.Optional(BotDescription),
    avatar: Type.Optional(Type.Union([AvatarUrl, Type.Null()])),
    /** D63: event types beyond D34's eight, for gateway and webhook alike ([] = none) */
    events: Type.Optional(BotEvents),
  },
  { title: 'PatchBotBody', additionalProperties: false, minProperties: 1 },
);
export type PatchBotBody = Static<typeof PatchBotBody>;

/** D63: PATCH /api/v1/bot/me — the bot's own subscription. */
export const PatchBotMeBody = Type.Object(
  { events: BotEvents },
  { title: 'PatchBotMeBody', additionalProperties: false },
);
export type PatchBotMeBody = Static<typeof PatchBotMeBody>;

export const DeliveryAttempt = Type.Object(
  {
    at: Timestamp,
    /** HTTP status of the answer; null when none came (refused, timed out, blocked) */
    status: Type.Union([Type.Integer(), Type.Null()]),
    latencyMs: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    /** the first 4 KiB of the answer's body */
    responseBody: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'DeliveryAttempt', additionalProperties: false },
);
export type DeliveryAttempt = Static<typeof DeliveryAttempt>;

/** D50: the delivery record, with `attempts` as the list of tries instead of their count. */
const { attempts: _count, ...deliveryFields } = Delivery.properties;
export const DeliveryDetail = Type.Object(
  { ...deliveryFields, attempts: Type.Array(DeliveryAttempt) },
  { title: 'DeliveryDetail', additionalProperties: false },
);
export type DeliveryDetail = Static<typeof DeliveryDetail>;

export const AddBotBody = Type.Object(
  { roles: Type.Optional(Type.Array(Id, { maxItems: 250, uniqueItems: true })) },
  { title: 'AddBotBody', additionalProperties: false },
);
export type AddBotBody = Static<typeof AddBotBody>;

// D51 the people's gateway ---------------------------------------------------------------------

/** Event types only people receive, beside the bots' eight (D51). */
export const PEOPLE_EVENT_TYPES = [
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
  // D66: a person marked a channel read (to their own sessions)
  'MESSAGE_ACK',
] as const;
export type PeopleEventType = (typeof PEOPLE_EVENT_TYPES)[number];

export const PresenceStatus = Type.Union([Type.Literal('online'), Type.Literal('offline')]);

/**
 * D70: GUILD_UPDATE carries the guild's own fields, never its channels; `myPermissions` (the
 * receiving member's own guild-level bits) when a change of roles may have altered them.
 */
export interface GuildUpdate {
  id: number;
  name: string;
  ownerId: number;
  myPermissions?: number;
}

export interface PeopleEventDataMap {
  GUILD_CREATE: AppGuild;
  GUILD_UPDATE: GuildUpdate;
  GUILD_DELETE: { id: number };
  CHANNEL_CREATE: Static<typeof Channel>;
  CHANNEL_UPDATE: Static<typeof Channel>;
  CHANNEL_DELETE: { id: number; guildId: number };
  GUILD_ROLES_UPDATE: { guildId: number; roles: Array<Static<typeof Role>> };
  GUILD_MEMBER_UPDATE: MemberRoles;
  TYPING_START: { channelId: number; userId: number; at: string };
  PRESENCE_UPDATE: { userId: number; status: 'online' | 'offline' };
  MESSAGE_ACK: ReadState;
}

/** D66: who is online among those the person shares a guild or a DM with (READY). */
export const Presence = Type.Object(
  { userId: Id, status: PresenceStatus },
  { title: 'Presence', additionalProperties: false },
);
export type Presence = Static<typeof Presence>;

// D66 notification settings -------------------------------------------------------------------

export const NotificationLevel = Type.Union(
  [Type.Literal('all'), Type.Literal('mentions'), Type.Literal('none')],
  { title: 'NotificationLevel' },
);
export type NotificationLevel = Static<typeof NotificationLevel>;

/** D66: exactly one of guildId and channelId. */
export const NotificationSettingBody = Type.Object(
  {
    guildId: Type.Optional(Id),
    channelId: Type.Optional(Id),
    level: NotificationLevel,
    muteUntil: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
  },
  { title: 'NotificationSettingBody', additionalProperties: false },
);
export type NotificationSettingBody = Static<typeof NotificationSettingBody>;

export const NotificationSetting = Type.Object(
  {
    guildId: Type.Optional(Id),
    channelId: Type.Optional(Id),
    level: NotificationLevel,
    muteUntil: Type.Union([Type.String(), Type.Null()]),
  },
  { title: 'NotificationSetting', additionalProperties: false },
);
export type NotificationSetting = Static<typeof NotificationSetting>;

export const NotificationSettings = Type.Object(
  { settings: Type.Array(NotificationSetting) },
  { title: 'NotificationSettings', additionalProperties: false },
);
export type NotificationSettings = Static<typeof NotificationSettings>;

/** D51: READY for a person. */
export const PersonReady = Type.Object(
  {
    sessionId: Type.String(),
    user: User,
    guilds: Type.Array(AppGuild),
    readStates: Type.Array(ReadState),
    resumeWindowS: Type.Integer(),
    /** D66: the online among those sharing a guild or a DM with the person */
    presences: Type.Array(Presence),
    /** D66: the person's DMs with their `lastMessageId` (as GET /app/v1/users/@me/dms) */
    dms: Type.Array(DmSummary),
  },
  { title: 'PersonReady', additionalProperties: false },
);
export type PersonReady = Static<typeof PersonReady>;
