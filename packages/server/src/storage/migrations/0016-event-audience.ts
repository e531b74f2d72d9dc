import type { Kysely, Migration } from 'kysely';

/**
 * D72: people's events read from the event log, like bots' — Redis only wakes the readers up.
 * Each row keeps the people who may see it (a D51 audience, JSON); people-only events
 * (GUILD_CREATE, CHANNEL_UPDATE, …) are logged too, with no recipient bots. Rows written before
 * this migration have none and reach bots only.
 */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('event_log').addColumn('audience', 'text').execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('event_log').dropColumn('audience').execute();
  },
};
