import { Type, type Static } from 'typebox';
import { Id } from './ids.js';
import { Message, MemberUser, Timestamp } from './rest.js';
import type { PeopleEventDataMap } from './app.js';
import type { Interaction } from './interactions.js';
import type { ChannelPinsUpdateData, MessageEmbedsUpdateData, ReactionEventData } from './rich.js';

/** docs/interface.md#event-types: exactly these eight. */
export const EVENT_TYPES = [
  'MESSAGE_CREATE',
  'MESSAGE_UPDATE',
  'MESSAGE_DELETE',
  'DM_MESSAGE_CREATE',
  'DM_MESSAGE_UPDATE',
  'DM_MESSAGE_DELETE',
  'GUILD_MEMBER_ADD',
  'GUILD_MEMBER_REMOVE',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** D35 data shapes. */
export const MessageDeleteData = Type.Object(
  { id: Id, channelId: Id, guildId: Id },
  { additionalProperties: false },
);
export const DmMessageDeleteData = Type.Object(
  { id: Id, channelId: Id },
  { additionalProperties: false },
);
export const GuildMemberAddData = Type.Object(
  { guildId: Id, user: MemberUser, roles: Type.Array(Id), joinedAt: Timestamp },
  { additionalProperties: false },
);
export const GuildMemberRemoveData = Type.Object(
  { guildId: Id, user: MemberUser },
  { additionalProperties: false },
);

export interface EventDataMap {
  MESSAGE_CREATE: Message;
  MESSAGE_UPDATE: Message;
  MESSAGE_DELETE: Static<typeof MessageDeleteData>;
  DM_MESSAGE_CREATE: Message;
  DM_MESSAGE_UPDATE: Message;
  DM_MESSAGE_DELETE: Static<typeof DmMessageDeleteData>;
  GUILD_MEMBER_ADD: Static<typeof GuildMemberAddData>;
  GUILD_MEMBER_REMOVE: Static<typeof GuildMemberRemoveData>;
}

/**
 * D63/D71: events beyond D34's eight. People receive them (D51); a bot only when it subscribed
 * (`events` of GET|PATCH /bot/me), on its gateway and its webhook alike.
 */
export interface RichEventDataMap {
  MESSAGE_REACTION_ADD: ReactionEventData;
  MESSAGE_REACTION_REMOVE: ReactionEventData;
  CHANNEL_PINS_UPDATE: ChannelPinsUpdateData;
  MESSAGE_EMBEDS_UPDATE: MessageEmbedsUpdateData;
}
export type RichEventType = keyof RichEventDataMap;

/** docs/interface.md#event-envelope: the webhook body, and the gateway's t/d (D30). */
export type EventEnvelope = {
  [K in EventType]: { type: K; data: EventDataMap[K] };
}[EventType];

/** D63, D65: INTERACTION_CREATE always reaches the one bot it is for, whatever it subscribed to. */
export interface InteractionEventDataMap {
  INTERACTION_CREATE: Interaction;
}

/**
 * Every type a bot can receive: D34's eight and D65's INTERACTION_CREATE always; D63/D71's and
 * D51's people's types when it subscribed to them (GET|PATCH /bot/me `events`).
 */
export type BotEventDataMap = EventDataMap &
  RichEventDataMap &
  PeopleEventDataMap &
  InteractionEventDataMap;
export type BotEventType = keyof BotEventDataMap;
export type BotEventEnvelope = {
  [K in BotEventType]: { type: K; data: BotEventDataMap[K] };
}[BotEventType];

/** Any envelope the server records: the eight, and D63/D71's for subscribers. */
export type AnyEventEnvelope =
  EventEnvelope | { [K in RichEventType]: { type: K; data: RichEventDataMap[K] } }[RichEventType];
