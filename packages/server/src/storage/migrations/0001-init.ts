import type { Kysely, Migration } from 'kysely';

/** The base schema. Written with Kysely's schema builder so one migration serves both dialects. */
export const init: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('users')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('avatar', 'text')
      .addColumn('is_bot', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('password_hash', 'text')
      .addColumn('bot_count', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('bots')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('user_id', 'bigint', (c) => c.notNull().unique().references('users.id'))
      .addColumn('owner_id', 'bigint', (c) => c.notNull().references('users.id'))
      .addColumn('description', 'text', (c) => c.notNull())
      .addColumn('token_generation', 'integer', (c) => c.notNull())
      .addColumn('webhook_url', 'text')
      .addColumn('webhook_secret', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('bots_owner').on('bots').column('owner_id').execute();

    await db.schema
      .createTable('user_sessions')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('guilds')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('owner_id', 'bigint', (c) => c.notNull().references('users.id'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('roles')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('guild_id', 'bigint', (c) => c.notNull().references('guilds.id'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('permissions', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('roles_guild').on('roles').column('guild_id').execute();

    await db.schema
      .createTable('members')
      .addColumn('guild_id', 'bigint', (c) => c.notNull().references('guilds.id'))
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id'))
      .addColumn('joined_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('members_pk', ['guild_id', 'user_id'])
      .execute();
    // "Which guilds is this user in" (DM shared-guild check, READY guild list).
    await db.schema
      .createIndex('members_user')
      .on('members')
      .columns(['user_id', 'guild_id'])
      .execute();

    await db.schema
      .createTable('member_roles')
      .addColumn('guild_id', 'bigint', (c) => c.notNull())
      .addColumn('user_id', 'bigint', (c) => c.notNull())
      .addColumn('role_id', 'bigint', (c) => c.notNull().references('roles.id'))
      .addPrimaryKeyConstraint('member_roles_pk', ['guild_id', 'user_id', 'role_id'])
      .execute();

    await db.schema
      .createTable('channels')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('guild_id', 'bigint', (c) => c.references('guilds.id'))
      .addColumn('type', 'integer', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('topic', 'text', (c) => c.notNull())
      .addColumn('dm_user_low', 'bigint')
      .addColumn('dm_user_high', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('channels_guild')
      .on('channels')
      .columns(['guild_id', 'id'])
      .execute();
    // D21: one DM channel per pair of users, also under concurrent opens.
    await db.schema
      .createIndex('channels_dm_pair')
      .on('channels')
      .columns(['dm_user_low', 'dm_user_high'])
      .unique()
      .execute();

    await db.schema
      .createTable('channel_overwrites')
      .addColumn('channel_id', 'bigint', (c) => c.notNull().references('channels.id'))
      .addColumn('role_id', 'bigint', (c) => c.notNull())
      .addColumn('allow', 'integer', (c) => c.notNull())
      .addColumn('deny', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('channel_overwrites_pk', ['channel_id', 'role_id'])
      .execute();

    await db.schema
      .createTable('messages')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('channel_id', 'bigint', (c) => c.notNull().references('channels.id'))
      .addColumn('guild_id', 'bigint')
      .addColumn('author_id', 'bigint', (c) => c.notNull().references('users.id'))
      .addColumn('content', 'text', (c) => c.notNull())
      .addColumn('msg_type', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('edited_at', 'bigint')
      .execute();
    // D16: every page is a range scan on (channel_id, id): cost independent of history length.
    await db.schema
      .createIndex('messages_channel')
      .on('messages')
      .columns(['channel_id', 'id'])
      .execute();

    await db.schema
      .createTable('settings')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('value', 'text', (c) => c.notNull())
      .execute();
  },
};
