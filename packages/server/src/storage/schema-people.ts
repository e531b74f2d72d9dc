/**
 * Tables of the people's platform (D46–D50); migration 0006-people. Times are Unix ms.
 */

/** D46: failed logins per name key, for the lockout (5 within 15 minutes). */
export interface LoginFailuresTable {
  name_key: string;
  at: number;
  /** 0007: the attempt's own id (an attempt refused by the lockout deletes its row) */
  attempt_id: number | null;
  /** 0014 (D70): the client address's key (ratelimit/policy.ts addressKey); the lock is per both */
  address: string | null;
}

/** D49: invite codes of a guild. */
export interface InvitesTable {
  code: string;
  guild_id: number;
  creator_id: number | null;
  /** null: unlimited */
  max_uses: number | null;
  uses: number;
  /** null: never expires */
  expires_at: number | null;
  created_at: number;
}

/** D49: a ban removes the member and refuses rejoining. */
export interface BansTable {
  guild_id: number;
  user_id: number;
  created_at: number;
}

/** D48: the newest message a person has read in a channel (DMs included). */
export interface ReadStatesTable {
  user_id: number;
  channel_id: number;
  last_read_id: number;
}

/** D50: each try of a webhook delivery, with the first 4 KiB of the answer. */
export interface WebhookAttemptsTable {
  delivery_row_id: number;
  /** 1, 2, … as X-Service-Attempt */
  attempt: number;
  at: number;
  status: number | null;
  latency_ms: number | null;
  error: string | null;
  response_body: string | null;
}

/** D66: a message that mentions a person who has not read it yet (migrations/0050). */
export interface UnreadMentionsTable {
  message_id: number;
  user_id: number;
  channel_id: number;
}

/** D66: a person's notification level and mute for one guild or one channel. */
export interface NotificationSettingsTable {
  user_id: number;
  /** the guild's or the channel's id (one row per person and target) */
  target_id: number;
  guild_id: number | null;
  channel_id: number | null;
  level: 'all' | 'mentions' | 'none';
  /** Unix ms; null: not muted */
  mute_until: number | null;
}

export interface PeopleTables {
  login_failures: LoginFailuresTable;
  invites: InvitesTable;
  bans: BansTable;
  read_states: ReadStatesTable;
  unread_mentions: UnreadMentionsTable;
  notification_settings: NotificationSettingsTable;
  webhook_attempts: WebhookAttemptsTable;
}
