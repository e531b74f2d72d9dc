import type { Kysely, Migration } from 'kysely';

/** D39/D40: durable webhook deliveries (they survive restarts) and the delivery log. */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('delivery_id', 'text', (c) => c.notNull().unique())
      .addColumn('bot_id', 'bigint', (c) => c.notNull().references('bots.id'))
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', 'bigint')
      .addColumn('locked_until', 'bigint')
      .addColumn('locked_by', 'integer')
      .addColumn('last_status', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('last_latency_ms', 'integer')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    // The worker's claim: due pending deliveries in time order.
    await db.schema
      .createIndex('webhook_deliveries_due')
      .on('webhook_deliveries')
      .columns(['state', 'next_attempt_at'])
      .execute();
    // The delivery log: a bot's deliveries, newest first.
    await db.schema
      .createIndex('webhook_deliveries_bot')
      .on('webhook_deliveries')
      .columns(['bot_id', 'id'])
      .execute();
  },
};
