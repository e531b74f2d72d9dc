import type { Generated } from 'kysely';
import type { EventsTables } from './schema-events.js';
import type { FilesTables } from './schema-files.js';
import type { InteractionsTables } from './schema-interactions.js';
import type { PushTables } from './schema-push.js';
import type { PeopleTables } from './schema-people.js';
import type { OidcTables } from './schema-oidc.js';
import type { WebhooksTables } from './schema-webhooks.js';

/**
 * Kysely table types. Ids are snowflakes (numbers ≤ 2^53−1), times are Unix milliseconds,
 * booleans are 0/1 integers: the same on SQLite and PostgreSQL.
 */
export interface UsersTable {
  id: number;
  name: string;
  avatar: string | null;
  is_bot: number;
  password_hash: string | null;
  /** D41: at most 3 bots per owner, enforced by a guarded increment (atomic on both dialects) */
  bot_count: number;
  created_at: number;
  /** D52: 1 = may not log in; their sessions were ended when it was set */
  disabled: Generated<number>;
  /** D46: storage/name-key.ts of a person's name (unique); null for bot users */
  name_key: string | null;
  /** D70: storage/name-key.ts confusableKey of a person's name (unique); null for bot users */
  skeleton_key: string | null;
}

export interface BotsTable {
  id: number;
  user_id: number;
  owner_id: number;
  description: string;
  token_generation: number;
  webhook_url: string | null;
  webhook_secret: string;
  created_at: number;
  /** D63: JSON array of event types subscribed beyond D34's eight; null: none */
  events: string | null;
}

export interface UserSessionsTable {
  /** SHA-256 of the bearer token: the token itself is never stored */
  token_hash: string;
  user_id: number;
  created_at: number;
  /** D47: public id (listing and ending a session never shows the token) */
  id: string;
  /** D47: idle expiry counts from here (updated at most once a minute) */
  last_used_at: number;
  user_agent: string;
}

export interface GuildsTable {
  id: number;
  name: string;
  owner_id: number;
  created_at: number;
}

export interface RolesTable {
  id: number;
  guild_id: number;
  name: string;
  permissions: number;
  created_at: number;
  /** D58: rank; @everyone 0, higher outranks */
  position: Generated<number>;
  /** D58: 0xRRGGBB or null */
  color: Generated<number | null>;
  /** D58: 0/1 */
  mentionable: Generated<number>;
}

export interface MembersTable {
  guild_id: number;
  user_id: number;
  joined_at: number;
  /** D58: Unix ms until which the member can only read; null (or past) when not timed out */
  timeout_until: Generated<number | null>;
}

/** D60: a guild's audit log and the operator's own (operator_log = 1). */
export interface AuditLogTable {
  id: number;
  guild_id: number | null;
  actor_id: number | null;
  actor_type: 'user' | 'bot' | 'operator';
  action: string;
  target_id: number | null;
  reason: string | null;
  /** JSON [{key, old, new}] */
  changes: string;
  operator_log: number;
  created_at: number;
}

export interface MemberRolesTable {
  guild_id: number;
  user_id: number;
  role_id: number;
}

export interface ChannelsTable {
  id: number;
  /** null for DM channels */
  guild_id: number | null;
  type: number;
  name: string;
  topic: string;
  /** DM parties, lower id first; unique together so opening a DM is idempotent (D21) */
  dm_user_low: number | null;
  dm_user_high: number | null;
  created_at: number;
}

export interface ChannelOverwritesTable {
  channel_id: number;
  role_id: number;
  allow: number;
  deny: number;
}

export interface MessagesTable {
  id: number;
  channel_id: number;
  guild_id: number | null;
  author_id: number;
  content: string;
  msg_type: number;
  created_at: number;
  edited_at: number | null;
  /** D61: JSON of storage/… MessageExtra (reference, mentions, attachments, embeds); null: none */
  extra: string | null;
  /** D63: when it was pinned; null when not */
  pinned_at: number | null;
}

/** D63: one person's (or bot's) reaction with one emoji. */
export interface MessageReactionsTable {
  message_id: number;
  emoji: string;
  user_id: number;
  created_at: number;
}

/** D71: a URL's preview, fetched at most once a day. */
export interface LinkPreviewsTable {
  url: string;
  /** the link embed as JSON; null when the page gave nothing to show */
  embed: string | null;
  fetched_at: number;
}

/** D71: a preview image, fetched once, served by the CDN's proxy. */
export interface ProxiedImagesTable {
  id: number;
  url: string;
  storage_key: string;
  mime: string;
  size: number;
  width: number | null;
  height: number | null;
  created_at: number;
}

export interface SettingsTable {
  key: string;
  value: string;
}

/** Every table; each area adds its own in schema-<area>.ts. */
export interface Database
  extends
    EventsTables,
    FilesTables,
    WebhooksTables,
    PeopleTables,
    InteractionsTables,
    PushTables,
    OidcTables {
  users: UsersTable;
  bots: BotsTable;
  user_sessions: UserSessionsTable;
  guilds: GuildsTable;
  roles: RolesTable;
  members: MembersTable;
  member_roles: MemberRolesTable;
  channels: ChannelsTable;
  channel_overwrites: ChannelOverwritesTable;
  messages: MessagesTable;
  message_reactions: MessageReactionsTable;
  link_previews: LinkPreviewsTable;
  proxied_images: ProxiedImagesTable;
  settings: SettingsTable;
  audit_log: AuditLogTable;
}
