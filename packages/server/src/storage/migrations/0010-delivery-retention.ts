import { sql, type Kysely, type Migration } from 'kysely';

/**
 * D53: finished deliveries are deleted after their retention (webhooks/retention.ts). One
 * partial index over finished rows, `(state, updated_at) where state <> 'pending'`, makes that
 * hourly delete an index range per state on SQLite and PostgreSQL instead of a scan of the whole
 * log; pending rows (the worker's hot path) never enter it. The delete spells the index's
 * condition literally so both planners can use it.
 */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createIndex('webhook_deliveries_finished')
      .on('webhook_deliveries')
      .columns(['state', 'updated_at'])
      .where(sql.ref('state'), '<>', sql.lit('pending'))
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('webhook_deliveries_finished').execute();
  },
};
