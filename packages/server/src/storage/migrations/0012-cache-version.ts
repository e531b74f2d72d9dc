import { PostgresAdapter, sql, type Kysely, type Migration } from 'kysely';

/**
 * Issue 15: on PostgreSQL the derived cache's version is a sequence every node bumps after a
 * commit that wrote cached data (storage/pg-version.ts). SQLite keeps its version in the
 * connection (a write count and the file's data_version): nothing to create there.
 */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
    await sql`create sequence "parley_cache_version"`.execute(db);
  },
  async down(db: Kysely<unknown>) {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
    await sql`drop sequence "parley_cache_version"`.execute(db);
  },
};
