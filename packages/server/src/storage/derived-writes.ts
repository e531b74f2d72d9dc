import { dollars } from './raw-sql.js';

/**
 * Which statements may change what the derived cache (domain/derived-cache.ts) keeps: auth,
 * membership, roles, overwrites, channels… Every statement that is not a read, not a transaction
 * statement and not a write to one of the high-volume tables below — so a new table or a raw
 * statement invalidates by default. One rule for both databases: SQLite counts these writes
 * (storage/db.ts), PostgreSQL bumps a shared version for them (storage/pg-version.ts).
 */
const NO_DERIVED_DATA = new Set([
  'messages',
  'event_log',
  'event_log_pruned',
  'recipient_sets',
  'gateway_claims',
  'gateway_sessions',
  'webhook_deliveries',
  'upload_usage_daily',
  'upload_usage_monthly',
  'files',
  // D46/D48: nothing cached derives from login attempts or read marks (read marks are frequent).
  'login_failures',
  'read_states',
  // D66: unread mentions (written with messages) and notification settings feed no cache
  'unread_mentions',
  'notification_settings',
  // D50: written with every webhook try
  'webhook_attempts',
  // D60: nothing cached derives from the audit log
  'audit_log',
  // D63/D71: reactions, previews and proxied images feed nothing the cache keeps
  'message_reactions',
  'link_previews',
  'proxied_images',
  // D65: one row per invocation, written again by its callback
  'interactions',
  // D67: SQLite's search index, written with every message (and by FTS5's own statements)
  'messages_fts',
]);

/**
 * D47: a session's last use, written at most once a minute per session (domain/auth/
 * authenticate.ts). Cached session rows are checked against what this process wrote, so this one
 * statement leaves the version alone: otherwise every active person would drop every cache once a
 * minute. Ending a session is a DELETE and moves it as usual. Written with `?` (raw-sql.ts).
 */
export const SESSION_TOUCH_SQL =
  'update "user_sessions" set "last_used_at" = ? where "token_hash" = ? and "last_used_at" < ?';
const NO_DERIVED_STATEMENTS = new Set([SESSION_TOUCH_SQL, dollars(SESSION_TOUCH_SQL)]);
const WRITE_TARGET = /^\s*(?:insert\s+into|update|delete\s+from|replace\s+into)\s+"?(\w+)"?/i;
// Group commit (storage/group-commit.ts) opens and releases a savepoint per member; a ROLLBACK TO
// one is not neutral.
const NEUTRAL = /^\s*(?:select|begin|start\s+transaction|commit|savepoint|release)\b/i;

// A common table expression is a read unless it writes somewhere (PostgreSQL's event-log reader
// is one: events/log.ts); it writes derived data when any of its writes does, or when a write's
// target cannot be told (a group commit's end in one statement writes only messages, the event
// log and the counts: storage/group-commit.ts). ON CONFLICT's DO UPDATE names no table.
const WITH = /^\s*with\b/i;
const WRITES_ANYWHERE = /\b(?:insert\s+into|(?<!\bdo\s+)update|delete\s+from)\b(\s+"?(\w+)"?)?/gi;

/** The statement may change data the derived cache keeps (see above). */
export function writesDerivedData(text: string): boolean {
  if (NEUTRAL.test(text) || NO_DERIVED_STATEMENTS.has(text)) return false;
  if (WITH.test(text)) {
    for (const write of text.matchAll(WRITES_ANYWHERE)) {
      const table = write[2];
      if (table === undefined || !NO_DERIVED_DATA.has(table.toLowerCase())) return true;
    }
    return false;
  }
  const table = WRITE_TARGET.exec(text)?.[1];
  return table === undefined || !NO_DERIVED_DATA.has(table.toLowerCase());
}
