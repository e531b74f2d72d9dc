import type { Kysely, Migration } from 'kysely';

/** Files and upload quota (D22–D24). Kysely's schema builder: one migration for both dialects. */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('files')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('owner_id', 'bigint', (c) => c.notNull().references('users.id'))
      .addColumn('storage_key', 'text', (c) => c.notNull().unique())
      .addColumn('filename', 'text', (c) => c.notNull())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('kind', 'integer', (c) => c.notNull())
      .addColumn('mime', 'text', (c) => c.notNull())
      .addColumn('quota_day', 'integer', (c) => c.notNull())
      .addColumn('quota_month', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('files_owner').on('files').columns(['owner_id', 'id']).execute();

    // D24: durable counters; the primary key is the row every reservation locks (PostgreSQL) or
    // serializes on (SQLite), so concurrent uploads can never pass a limit together.
    await db.schema
      .createTable('upload_usage_daily')
      .addColumn('user_id', 'bigint', (c) => c.notNull())
      .addColumn('day', 'integer', (c) => c.notNull())
      .addColumn('bytes_used', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('messages_sent', 'bigint', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('upload_usage_daily_pk', ['user_id', 'day'])
      .execute();

    await db.schema
      .createTable('upload_usage_monthly')
      .addColumn('user_id', 'bigint', (c) => c.notNull())
      .addColumn('month', 'integer', (c) => c.notNull())
      .addColumn('bytes_used', 'bigint', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('upload_usage_monthly_pk', ['user_id', 'month'])
      .execute();
  },
};
