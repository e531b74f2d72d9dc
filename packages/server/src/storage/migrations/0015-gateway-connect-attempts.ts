import type { Kysely, Migration } from 'kysely';

/**
 * D72: while Redis cannot be reached, D28's "one connection attempt per bot per second, across
 * nodes" is kept through the database: each bot's last accepted attempt during the outage. A row
 * is written only while the shared limiter is down (gateway/connect-attempts.ts).
 */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('gateway_connect_attempts')
      .addColumn('bot_id', 'bigint', (c) => c.primaryKey())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('gateway_connect_attempts').execute();
  },
};
