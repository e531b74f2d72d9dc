import type { Kysely, Migration } from 'kysely';

/**
 * D66: Web Push subscriptions, one per device: each belongs to the session it was made with, so
 * it goes when that session ends (logout, expiry, password change, the person deleted). An
 * endpoint is unique: the same browser subscribing again (or for someone else) replaces its row.
 */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('push_subscriptions')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('session_hash', 'text', (c) =>
        c.notNull().references('user_sessions.token_hash').onDelete('cascade'),
      )
      .addColumn('endpoint', 'text', (c) => c.notNull().unique())
      // RFC 8291: the browser's P-256 public key (65 bytes) and auth secret (16), base64url
      .addColumn('p256dh', 'text', (c) => c.notNull())
      .addColumn('auth', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('push_subscriptions_user')
      .on('push_subscriptions')
      .column('user_id')
      .execute();
    await db.schema
      .createIndex('push_subscriptions_session')
      .on('push_subscriptions')
      .column('session_hash')
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('push_subscriptions').execute();
  },
};
