import type { Kysely, Migration } from 'kysely';

/** The outbox (D36), the per-bot streams (D34) and gateway sessions (D31). */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('events')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    // Pruning after the resume window scans by age.
    await db.schema.createIndex('events_created').on('events').column('created_at').execute();

    await db.schema
      .createTable('event_streams')
      .addColumn('bot_id', 'bigint', (c) => c.primaryKey())
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('bot_events')
      .addColumn('bot_id', 'bigint', (c) => c.notNull())
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .addColumn('kind', 'integer', (c) => c.notNull())
      .addColumn('event_id', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      // Every read is "this bot's rows after seq n": a range scan on the primary key.
      .addPrimaryKeyConstraint('bot_events_pk', ['bot_id', 'seq'])
      .execute();
    await db.schema
      .createIndex('bot_events_created')
      .on('bot_events')
      .column('created_at')
      .execute();

    await db.schema
      .createTable('gateway_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('bot_id', 'bigint', (c) => c.notNull())
      .addColumn('ready_seq', 'bigint', (c) => c.notNull())
      .addColumn('conn_id', 'text', (c) => c.notNull())
      .addColumn('node_id', 'integer', (c) => c.notNull())
      .addColumn('connected', 'integer', (c) => c.notNull())
      .addColumn('disconnected_at', 'bigint')
      .addColumn('ended', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('gateway_sessions_bot')
      .on('gateway_sessions')
      .columns(['bot_id', 'ended'])
      .execute();
  },
};
