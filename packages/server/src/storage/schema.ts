import type { EventsTables } from './schema-events.js';
import type { FilesTables } from './schema-files.js';
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
}

export interface UserSessionsTable {
  token_hash: string;
  user_id: number;
  created_at: number;
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
}

export interface MembersTable {
  guild_id: number;
  user_id: number;
  joined_at: number;
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
}

export interface SettingsTable {
  key: string;
  value: string;
}

/** Every table; each area adds its own in schema-<area>.ts. */
export interface Database extends EventsTables, FilesTables, WebhooksTables {
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
  settings: SettingsTable;
}
