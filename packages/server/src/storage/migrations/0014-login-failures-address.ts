import type { Kysely, Migration } from 'kysely';

/**
 * D70 (revises D46): the failed-login lock is per name AND client address, so a stranger's
 * guesses lock only the stranger out. Rows from before carry no address and lock no one.
 */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('login_failures').addColumn('address', 'text').execute();
    await db.schema
      .createIndex('login_failures_name_address')
      .on('login_failures')
      .columns(['name_key', 'address', 'at'])
      .execute();
  },
};
