import type { Kysely, Migration } from 'kysely';

/**
 * D66: unread mentions and notification settings.
 *
 * `unread_mentions`: one row per person and message that mentions them (directly, through a role
 * of theirs, or with @everyone/@here) and that they have not read yet — written in the send's
 * transaction as the message arrives (domain/notifications/mention-marks.ts), removed when they
 * mark the channel read past it, when an edit drops the mention, and with the message itself
 * (ON DELETE CASCADE, both dialects). A read state's `mentionCount` is the number of these rows
 * past its `lastReadId`: an index range per person, never a scan of the history.
 *
 * `notification_settings`: a person's level and mute for one guild or one channel (exactly one
 * of the two ids is set; `target_id` is that id, so one row per person and target).
 */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('unread_mentions')
      .addColumn('message_id', 'bigint', (c) =>
        c.notNull().references('messages.id').onDelete('cascade'),
      )
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('channel_id', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('unread_mentions_pk', ['message_id', 'user_id'])
      .execute();
    await db.schema
      .createIndex('unread_mentions_user')
      .on('unread_mentions')
      .columns(['user_id', 'channel_id', 'message_id'])
      .execute();

    // D66: READY looks up a person's DM partners (and presence announces to them): the pair
    // index (channels_dm_pair) serves the lower party, this one the higher.
    await db.schema.createIndex('channels_dm_high').on('channels').column('dm_user_high').execute();

    await db.schema
      .createTable('notification_settings')
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('target_id', 'bigint', (c) => c.notNull())
      .addColumn('guild_id', 'bigint')
      .addColumn('channel_id', 'bigint')
      // 'all' | 'mentions' | 'none'
      .addColumn('level', 'text', (c) => c.notNull())
      .addColumn('mute_until', 'bigint')
      .addPrimaryKeyConstraint('notification_settings_pk', ['user_id', 'target_id'])
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('notification_settings').execute();
    await db.schema.dropIndex('channels_dm_high').execute();
    await db.schema.dropTable('unread_mentions').execute();
  },
};
