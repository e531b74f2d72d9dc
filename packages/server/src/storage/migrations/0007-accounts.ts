import type { Kysely, Migration } from 'kysely';

/**
 * D46 lockout: each login attempt is written before its password is checked (so parallel
 * guesses cannot all pass the count), and an attempt refused by the lockout removes its own
 * row again — which needs an id to find exactly that row.
 */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('login_failures').addColumn('attempt_id', 'bigint').execute();
  },
};
