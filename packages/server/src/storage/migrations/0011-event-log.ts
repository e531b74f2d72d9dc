import { PostgresAdapter, sql, type Kysely, type Migration } from 'kysely';

/**
 * Issue 15: one commit-ordered event log replaces the per-bot streams (events/log.ts).
 * `event_log` holds each event once with its recipients (a reference to a `recipient_sets` row:
 * the same few sets recur, and a list of 100 bot ids would be 1.7 KB on every event); per-session numbering is derived at
 * dispatch and checkpointed in `gateway_sessions.marks`, so recording an event costs one row
 * whatever the number of recipients. `gateway_claims` keeps D29's "newest connection wins" order
 * (one row per bot, written only when a connection takes a session, never per event).
 *
 * Sessions of the old layout cannot be resumed in the new one: they are ended (their clients get
 * op 9 and a fresh READY, D31).
 */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    const pg = db.getExecutor().adapter instanceof PostgresAdapter;
    // SQLite: AUTOINCREMENT so a position is never reused, even after pruning the newest rows.
    // PostgreSQL: a sequence; positions there are allocated out of commit order, which is why
    // each row also carries its transaction id (events/log.ts: the horizon).
    await sql`create table "event_log" (
        "pos" ${sql.raw(pg ? 'bigserial primary key' : 'integer primary key autoincrement')},
        "xid" bigint not null,
        "type" text not null,
        "data" text not null,
        "recipients" bigint not null,
        "created_at" bigint not null
      )`.execute(db);
    // Sets never change once written; `hash` (SHA-256 of `bots`) is the unique key, since a long
    // list would exceed an index entry's size on PostgreSQL.
    await sql`create table "recipient_sets" (
        "id" ${sql.raw(pg ? 'bigserial primary key' : 'integer primary key autoincrement')},
        "hash" text not null unique,
        "bots" text not null
      )`.execute(db);
    if (pg)
      await db.schema
        .createIndex('event_log_order')
        .on('event_log')
        .columns(['xid', 'pos'])
        .execute();
    await db.schema.createIndex('event_log_created').on('event_log').column('created_at').execute();
    // The prune watermark: rows below this key may be gone (a resume from below it gets op 9).
    await db.schema
      .createTable('event_log_pruned')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('xid', 'bigint', (c) => c.notNull())
      .addColumn('pos', 'bigint', (c) => c.notNull())
      .execute();
    await db
      .insertInto('event_log_pruned' as never)
      .values({ id: 1, xid: 0, pos: 0 })
      .execute();

    await db.schema
      .createTable('gateway_claims')
      .addColumn('bot_id', 'bigint', (c) => c.primaryKey())
      .addColumn('n', 'bigint', (c) => c.notNull())
      .execute();
    await sql`insert into "gateway_claims" ("bot_id", "n") select "bot_id", "seq" from "event_streams"`.execute(
      db,
    );

    await db.schema.dropTable('bot_events').execute();
    await db.schema.dropTable('event_streams').execute();
    await db.schema.dropTable('events').execute();

    await db
      .updateTable('gateway_sessions' as never)
      .set({ ended: 1, connected: 0 } as never)
      .execute();
    await db.schema.alterTable('gateway_sessions').dropColumn('ready_seq').execute();
    await db.schema
      .alterTable('gateway_sessions')
      .addColumn('claim_n', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    // JSON: the session's marks (events/session-marks.ts), READY first.
    await db.schema
      .alterTable('gateway_sessions')
      .addColumn('marks', 'text', (c) => c.notNull().defaultTo('[]'))
      .execute();
    // PostgreSQL: READY's snapshot (xmin:xmax:xip,…), null on SQLite.
    await db.schema.alterTable('gateway_sessions').addColumn('ready_snapshot', 'text').execute();
  },
};
