import { Type, type Static, type TSchema } from 'typebox';
import { ALL_PERMISSIONS } from './permissions.js';
import { Id } from './ids.js';
import { Bot, BotUser, Channel, Member } from './rest.js';
import { AvatarUrl, BotDescription, LabelName, PersonName } from './text.js';

/**
 * D41: the operator API's request and response bodies. D54: names are safe text (no control,
 * format or bidi characters) and avatars http(s) URLs only — the shared schemas of text.ts.
 */
const Name = LabelName;
const Url = AvatarUrl;
const PermissionBits = Type.Integer({ minimum: 0, maximum: ALL_PERMISSIONS });

export const CreateUserBody = Type.Object(
  {
    name: Name,
    password: Type.Optional(Type.String({ minLength: 8, maxLength: 256 })),
    avatar: Type.Optional(Url),
  },
  { title: 'CreateUserBody' },
);
export type CreateUserBody = Static<typeof CreateUserBody>;

export const User = Type.Object(
  { id: Id, name: Type.String(), avatar: Type.String(), isBot: Type.Boolean() },
  { title: 'User', additionalProperties: false },
);
export type User = Static<typeof User>;

export const SessionToken = Type.Object(
  { token: Type.String() },
  { title: 'SessionToken', additionalProperties: false },
);

export const CreateGuildBody = Type.Object(
  { name: Name, ownerId: Id },
  { title: 'CreateGuildBody' },
);
export type CreateGuildBody = Static<typeof CreateGuildBody>;

export const Guild = Type.Object(
  { id: Id, name: Type.String(), ownerId: Id },
  { title: 'Guild', additionalProperties: false },
);
export type Guild = Static<typeof Guild>;

export const CreateChannelBody = Type.Object(
  {
    name: Name,
    type: Type.Optional(Type.Literal(0, { description: 'D19: 0 = text channel' })),
    topic: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { title: 'CreateChannelBody' },
);
export type CreateChannelBody = Static<typeof CreateChannelBody>;

export const CreateRoleBody = Type.Object(
  { name: Name, permissions: PermissionBits },
  { title: 'CreateRoleBody' },
);
export type CreateRoleBody = Static<typeof CreateRoleBody>;

/** D58: a role's rank, colour and whether anyone may mention it. */
export const RoleColor = Type.Union(
  [Type.Integer({ minimum: 0, maximum: 0xffffff }), Type.Null()],
  {
    description: 'D58: 0xRRGGBB, or null (no colour)',
  },
);
const rankFields = {
  position: Type.Integer({ minimum: 0, description: 'D58: @everyone 0; higher outranks' }),
  color: RoleColor,
  mentionable: Type.Boolean(),
};

export const Role = Type.Object(
  { id: Id, name: Type.String(), permissions: Type.Integer(), ...rankFields },
  { title: 'Role', additionalProperties: false },
);
export type Role = Static<typeof Role>;

export const PutMemberBody = Type.Object(
  { roles: Type.Optional(Type.Array(Id, { maxItems: 250, uniqueItems: true })) },
  { title: 'PutMemberBody' },
);
export type PutMemberBody = Static<typeof PutMemberBody>;
export const AdminMember = Member;

export const OverwriteBody = Type.Object(
  { allow: PermissionBits, deny: PermissionBits },
  { title: 'OverwriteBody' },
);
export type OverwriteBody = Static<typeof OverwriteBody>;

export const Overwrite = Type.Object(
  { channelId: Id, roleId: Id, allow: Type.Integer(), deny: Type.Integer() },
  { title: 'Overwrite', additionalProperties: false },
);
export type Overwrite = Static<typeof Overwrite>;

/** D57/D59: a channel's overwrites, one per role that has one (role id ascending). */
export const OverwriteList = Type.Object(
  { overwrites: Type.Array(Overwrite) },
  { title: 'OverwriteList', additionalProperties: false },
);
export type OverwriteList = Static<typeof OverwriteList>;

export const CreateBotBody = Type.Object(
  {
    ownerId: Id,
    name: Name,
    description: Type.Optional(BotDescription),
    avatar: Type.Optional(Url),
  },
  { title: 'CreateBotBody' },
);
export type CreateBotBody = Static<typeof CreateBotBody>;

export const CreatedBot = Type.Object(
  { bot: Bot, token: Type.String(), webhookSecret: Type.String() },
  { title: 'CreatedBot', additionalProperties: false },
);
export type CreatedBot = Static<typeof CreatedBot>;

export const BotToken = Type.Object(
  { token: Type.String() },
  { title: 'BotToken', additionalProperties: false },
);

/** D41 webhook settings and the delivery log (D40). */
export const SetWebhookBody = Type.Object(
  { url: Type.String({ minLength: 1, maxLength: 2048 }) },
  { title: 'SetWebhookBody' },
);
export type SetWebhookBody = Static<typeof SetWebhookBody>;

export const WebhookSettings = Type.Object(
  { url: Type.String(), secret: Type.String() },
  { title: 'WebhookSettings', additionalProperties: false },
);

export const WebhookSecret = Type.Object(
  { secret: Type.String() },
  { title: 'WebhookSecret', additionalProperties: false },
);

export const Delivery = Type.Object(
  {
    id: Id,
    deliveryId: Type.String({ description: 'X-Service-Delivery: the same on every retry' }),
    type: Type.String(),
    state: Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')]),
    attempts: Type.Integer({ minimum: 0 }),
    lastStatus: Type.Union([Type.Integer(), Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
    lastLatencyMs: Type.Union([Type.Integer(), Type.Null()]),
    nextAttemptAt: Type.Union([Type.String(), Type.Null()]),
    createdAt: Type.String(),
  },
  { title: 'Delivery', additionalProperties: false },
);
export type Delivery = Static<typeof Delivery>;

export const DeliveryList = Type.Object(
  { deliveries: Type.Array(Delivery) },
  { title: 'DeliveryList', additionalProperties: false },
);

/**
 * D52: operator completeness — reading, changing and deleting what the operator API creates.
 * Lists are cursor-paged by id ascending (`after`, `limit` 1–1000, default 100), `q` filters by
 * name (contains, case-insensitive).
 */
export const ADMIN_PAGE = { default: 100, max: 1000 } as const;

const Iso = Type.String({ format: 'date-time' });

export const AdminUser = Type.Object(
  {
    id: Id,
    name: Type.String(),
    avatar: Type.String(),
    isBot: Type.Boolean(),
    disabled: Type.Boolean(),
    createdAt: Iso,
  },
  { title: 'AdminUser', additionalProperties: false },
);
export type AdminUser = Static<typeof AdminUser>;

/** The single read adds what hangs on the user. */
export const AdminUserDetail = Type.Object(
  {
    ...AdminUser.properties,
    guilds: Type.Array(Id, { description: 'guilds the user is a member of' }),
    ownedGuilds: Type.Array(Id),
    bots: Type.Array(Id, { description: 'bots the user owns' }),
    sessions: Type.Integer({ minimum: 0, description: 'open sessions' }),
  },
  { title: 'AdminUserDetail', additionalProperties: false },
);
export type AdminUserDetail = Static<typeof AdminUserDetail>;

export const AdminUserPatch = Type.Object(
  {
    name: Type.Optional(PersonName),
    password: Type.Optional(Type.String({ minLength: 8, maxLength: 256 })),
    avatar: Type.Optional(Type.Union([AvatarUrl, Type.Null()])),
    disabled: Type.Optional(
      Type.Boolean({ description: 'D52: disabling ends every session and closes connections' }),
    ),
  },
  { title: 'AdminUserPatch', additionalProperties: false, minProperties: 1 },
);
export type AdminUserPatch = Static<typeof AdminUserPatch>;

export const AdminGuild = Type.Object(
  {
    id: Id,
    name: Type.String(),
    ownerId: Id,
    memberCount: Type.Integer({ minimum: 0 }),
    createdAt: Iso,
  },
  { title: 'AdminGuild', additionalProperties: false },
);
export type AdminGuild = Static<typeof AdminGuild>;

export const AdminGuildDetail = Type.Object(
  {
    ...AdminGuild.properties,
    channels: Type.Array(Channel),
    roles: Type.Array(Role),
    bots: Type.Array(Id, { description: 'bot ids of its bot members' }),
  },
  { title: 'AdminGuildDetail', additionalProperties: false },
);
export type AdminGuildDetail = Static<typeof AdminGuildDetail>;

export const AdminGuildPatch = Type.Object(
  { name: Type.Optional(LabelName), ownerId: Type.Optional(Id) },
  { title: 'AdminGuildPatch', additionalProperties: false, minProperties: 1 },
);
export type AdminGuildPatch = Static<typeof AdminGuildPatch>;

export const AdminChannelPatch = Type.Object(
  { name: Type.Optional(LabelName), topic: Type.Optional(Type.String({ maxLength: 1024 })) },
  { title: 'AdminChannelPatch', additionalProperties: false, minProperties: 1 },
);
export type AdminChannelPatch = Static<typeof AdminChannelPatch>;

export const AdminRole = Type.Object(
  { id: Id, guildId: Id, name: Type.String(), permissions: Type.Integer(), ...rankFields },
  { title: 'AdminRole', additionalProperties: false },
);
export type AdminRole = Static<typeof AdminRole>;

export const AdminRolePatch = Type.Object(
  {
    name: Type.Optional(LabelName),
    permissions: Type.Optional(PermissionBits),
    color: Type.Optional(RoleColor),
    mentionable: Type.Optional(Type.Boolean()),
  },
  { title: 'AdminRolePatch', additionalProperties: false, minProperties: 1 },
);
export type AdminRolePatch = Static<typeof AdminRolePatch>;

export const AdminBot = Type.Object(
  {
    id: Id,
    name: Type.String(),
    avatar: Type.String(),
    description: Type.String(),
    botUser: BotUser,
    ownerId: Id,
    webhookUrl: Type.Union([Type.String(), Type.Null()]),
    createdAt: Iso,
  },
  { title: 'AdminBot', additionalProperties: false },
);
export type AdminBot = Static<typeof AdminBot>;

export const AdminBotDetail = Type.Object(
  {
    ...AdminBot.properties,
    guilds: Type.Array(Id),
    connected: Type.Boolean({ description: 'a gateway connection holds its session' }),
  },
  { title: 'AdminBotDetail', additionalProperties: false },
);
export type AdminBotDetail = Static<typeof AdminBotDetail>;

export const AdminBotPatch = Type.Object(
  {
    name: Type.Optional(LabelName),
    description: Type.Optional(BotDescription),
    avatar: Type.Optional(Type.Union([AvatarUrl, Type.Null()])),
  },
  { title: 'AdminBotPatch', additionalProperties: false, minProperties: 1 },
);
export type AdminBotPatch = Static<typeof AdminBotPatch>;

const page = <T extends TSchema>(item: T, title: string) =>
  Type.Object(
    { items: Type.Array(item), hasMore: Type.Boolean() },
    { title, additionalProperties: false },
  );
export const AdminUserList = page(AdminUser, 'AdminUserList');
export const AdminGuildList = page(AdminGuild, 'AdminGuildList');
export const AdminBotList = page(AdminBot, 'AdminBotList');
export interface Page<T> {
  items: T[];
  hasMore: boolean;
}

export const AdminStats = Type.Object(
  {
    users: Type.Integer({ minimum: 0, description: 'every user, people and bot users' }),
    people: Type.Integer({ minimum: 0 }),
    bots: Type.Integer({ minimum: 0 }),
    guilds: Type.Integer({ minimum: 0 }),
    channels: Type.Integer({ minimum: 0, description: 'guild channels and DM channels' }),
    messages: Type.Integer({ minimum: 0 }),
    connections: Type.Object(
      {
        people: Type.Integer({ minimum: 0 }),
        bots: Type.Integer({ minimum: 0 }),
      },
      { additionalProperties: false, description: 'gateway connections, across all nodes' },
    ),
    webhookBacklog: Type.Integer({ minimum: 0, description: 'pending webhook deliveries' }),
  },
  { title: 'AdminStats', additionalProperties: false },
);
export type AdminStats = Static<typeof AdminStats>;

/** D52: an invite's limits, changed by the operator (null: unlimited uses / never expires). */
export const AdminInvitePatch = Type.Object(
  {
    maxUses: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: 10_000 }), Type.Null()]),
    ),
    expiresInS: Type.Optional(
      Type.Union([Type.Integer({ minimum: 60, maximum: 30 * 86_400 }), Type.Null()]),
    ),
  },
  { title: 'AdminInvitePatch', additionalProperties: false, minProperties: 1 },
);
export type AdminInvitePatch = Static<typeof AdminInvitePatch>;

/** An invite code in a path: what newInviteCode makes, and a little room. */
export const InviteCodeParam = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[A-Za-z0-9_-]+$',
});
