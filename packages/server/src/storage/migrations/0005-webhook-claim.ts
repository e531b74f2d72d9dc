import { sql, type Kysely, type Migration } from 'kysely';

/**
 * D39: the worker claims per bot (bench/README.md, webhooks: a window over the whole pending
 * backlog on every claim was the bottleneck). One partial index over the pending deliveries,
 * `(bot_id, next_attempt_at) where state = 'pending'`, serves both of its statements as index
 * seeks on SQLite and PostgreSQL: the walk over bots with due deliveries (`min(bot_id) … where
 * state = 'pending' and bot_id > ? and next_attempt_at <= ?`, one seek per bot) and each bot's
 * oldest due tries (`… bot_id = ? and next_attempt_at <= ? order by next_attempt_at limit ?`).
 * Partial, because delivered and failed rows (the log, which only grows) are never read through
 * it: the index stays the size of the backlog and a finished try removes its entry instead of
 * moving it. The queries spell `state = 'pending'` as a literal so both planners can use it.
 * The old `(state, next_attempt_at)` index has no reader left; dropping it saves an index write
 * on every enqueue and outcome.
 */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex('webhook_deliveries_pending')
      .on('webhook_deliveries')
      .columns(['bot_id', 'next_attempt_at'])
      .where(sql.ref('state'), '=', sql.lit('pending'))
      .execute();
    await db.schema.dropIndex('webhook_deliveries_due').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema
      .createIndex('webhook_deliveries_due')
      .on('webhook_deliveries')
      .columns(['state', 'next_attempt_at'])
      .execute();
    await db.schema.dropIndex('webhook_deliveries_pending').execute();
  },
};
