import { Type, type Static } from 'typebox';
import { ALL_PERMISSIONS } from './permissions.js';
import { Id } from './ids.js';
import { Bot, Member } from './rest.js';
import { AvatarUrl, LabelName } from './text.js';

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

export const Role = Type.Object(
  { id: Id, name: Type.String(), permissions: Type.Integer() },
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

export const CreateBotBody = Type.Object(
  {
    ownerId: Id,
    name: Name,
    description: Type.Optional(Type.String({ maxLength: 1000 })),
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
