/**
 * The wire shapes the app uses, from @parley/protocol (no hand-copied shapes). Types only: the
 * schemas themselves stay out of the bundle.
 */
export type {
  Bot,
  Channel,
  ErrorBody,
  EventDataMap,
  Member,
  MemberSummary,
  MemberUser,
  Message,
  MessageList,
  UploadedFile,
  UploadQuota,
  DmChannelRef,
} from '@parley/protocol';
import type { Bot, Channel } from '@parley/protocol';

// ---- D45–D51 (people's API). Placeholders until packages/protocol/src/app.ts lands. ----
export interface User {
  id: number;
  name: string;
  avatar: string;
  isBot: boolean;
}
export interface AuthResult {
  user: User;
  token: string;
}
export interface Role {
  id: number;
  name: string;
  permissions: number;
}
export interface Guild {
  id: number;
  name: string;
  ownerId: number;
  roles: Role[];
  channels: Channel[];
  bots: number[];
  myPermissions: number;
}
export interface GuildSummary {
  id: number;
  name: string;
  ownerId: number;
}
export interface DmSummary {
  channelId: number;
  recipient: User;
  lastMessageId: number | null;
}
export interface ReadState {
  channelId: number;
  lastReadId: number;
}
export interface Session {
  id: number | string;
  createdAt: string;
  lastUsedAt: string;
  userAgent: string | null;
  current: boolean;
}
export interface Invite {
  code: string;
  guildId: number;
  url: string;
  uses: number;
  maxUses: number | null;
  expiresAt: string | null;
}
export interface InvitePreview {
  code: string;
  guild: { id: number; name: string; memberCount: number };
}
export interface Ban {
  user: User;
  createdAt: string;
}
export interface OwnedBot {
  bot: Bot;
  webhookUrl: string | null;
  guilds: number[];
}
export interface CreatedBot {
  bot: Bot;
  token: string;
  webhookSecret: string;
}
export type DeliveryState = 'pending' | 'delivered' | 'failed';
export interface Delivery {
  id: number;
  deliveryId: string;
  type: string;
  state: DeliveryState;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  lastLatencyMs?: number | null;
}
export interface DeliveryAttempt {
  at: string;
  status: number | null;
  latencyMs: number | null;
  error: string | null;
  responseBody: string | null;
}
export interface DeliveryDetail extends Omit<Delivery, 'attempts'> {
  attempts: DeliveryAttempt[];
}
export interface ReadyPerson {
  sessionId: string;
  user: User;
  guilds: Guild[];
  readStates: ReadState[];
  resumeWindowS: number;
}
