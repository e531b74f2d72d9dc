import { randomBytes } from 'node:crypto';
import { type Kysely, type Migration } from 'kysely';
import { nameKey } from '../name-key.js';

/**
 * People (D46–D50): login names unique ignoring case, disabled accounts, session metadata,
 * login failures (lockout per name), invites, bans, read states, and each webhook try's detail.
 * Child rows of guilds, channels, users and deliveries go with their parent (ON DELETE CASCADE;
 * SQLite runs with foreign_keys = ON).
 */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    const k = db as Kysely<Record<string, Record<string, unknown>>>;
    await db.schema
      .alterTable('users')
      .addColumn('disabled', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    // D46: the login is the name, unique among people ignoring case. Bots have no key.
    await db.schema.alterTable('users').addColumn('name_key', 'text').execute();
    const people = await k
      .selectFrom('users')
      .select(['id', 'name'])
      .where('is_bot', '=', 0)
      .orderBy('id', 'asc')
      .execute();
    const taken = new Set<string>();
    for (const p of people) {
      const key = nameKey(String(p['name']));
      // Older databases may hold people whose names differ only by case: the oldest keeps the
      // login, the others must be renamed by the operator before they can log in.
      if (taken.has(key)) continue;
      taken.add(key);
      await k.updateTable('users').set({ name_key: key }).where('id', '=', p['id']).execute();
    }
    await db.schema.createIndex('users_name_key').on('users').column('name_key').unique().execute();

    // D47: sessions get a public id (listing, ending one), last use (idle expiry), user agent.
    await db.schema.alterTable('user_sessions').addColumn('id', 'text').execute();
    await db.schema.alterTable('user_sessions').addColumn('last_used_at', 'bigint').execute();
    await db.schema.alterTable('user_sessions').addColumn('user_agent', 'text').execute();
    const sessions = await k
      .selectFrom('user_sessions')
      .select(['token_hash', 'created_at'])
      .execute();
    for (const s of sessions)
      await k
        .updateTable('user_sessions')
        .set({
          id: randomBytes(12).toString('base64url'),
          last_used_at: s['created_at'],
          user_agent: '',
        })
        .where('token_hash', '=', s['token_hash'])
        .execute();
    await db.schema
      .createIndex('user_sessions_id')
      .on('user_sessions')
      .column('id')
      .unique()
      .execute();
    await db.schema
      .createIndex('user_sessions_user')
      .on('user_sessions')
      .column('user_id')
      .execute();

    // D46: failed logins per name, for the lockout (5 in 15 minutes).
    await db.schema
      .createTable('login_failures')
      .addColumn('name_key', 'text', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('login_failures_name')
      .on('login_failures')
      .columns(['name_key', 'at'])
      .execute();

    // D49 invites, bans.
    await db.schema
      .createTable('invites')
      .addColumn('code', 'text', (c) => c.primaryKey())
      .addColumn('guild_id', 'bigint', (c) =>
        c.notNull().references('guilds.id').onDelete('cascade'),
      )
      .addColumn('creator_id', 'bigint')
      .addColumn('max_uses', 'integer')
      .addColumn('uses', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('expires_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('invites_guild').on('invites').column('guild_id').execute();

    await db.schema
      .createTable('bans')
      .addColumn('guild_id', 'bigint', (c) =>
        c.notNull().references('guilds.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('bans_pk', ['guild_id', 'user_id'])
      .execute();

    // D48 read states (DMs included).
    await db.schema
      .createTable('read_states')
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('channel_id', 'bigint', (c) =>
        c.notNull().references('channels.id').onDelete('cascade'),
      )
      .addColumn('last_read_id', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('read_states_pk', ['user_id', 'channel_id'])
      .execute();

    // D50: every try of a delivery, with the first 4 KiB of the answer.
    await db.schema
      .createTable('webhook_attempts')
      .addColumn('delivery_row_id', 'bigint', (c) =>
        c.notNull().references('webhook_deliveries.id').onDelete('cascade'),
      )
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('at', 'bigint', (c) => c.notNull())
      .addColumn('status', 'integer')
      .addColumn('latency_ms', 'integer')
      .addColumn('error', 'text')
      .addColumn('response_body', 'text')
      .addPrimaryKeyConstraint('webhook_attempts_pk', ['delivery_row_id', 'attempt'])
      .execute();
  },
};
