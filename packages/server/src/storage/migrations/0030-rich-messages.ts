import { sql, type Kysely, type Migration } from 'kysely';

/**
 * D61–D63, D71: what a message carries beyond D17–D18, reactions, pins, bots' subscriptions,
 * image dimensions and link previews. A message's replies, mentions, attachments and embeds
 * live in one JSON column written with the message (no extra row per send); reactions are rows
 * of their own, gone with their message.
 */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('messages').addColumn('extra', 'text').execute();
    await db.schema.alterTable('messages').addColumn('pinned_at', 'bigint').execute();
    // D63: a channel's pins, newest first; only pinned messages are in it (nothing per send).
    await db.schema
      .createIndex('messages_pins')
      .on('messages')
      .columns(['channel_id', 'pinned_at'])
      .where(sql.ref('pinned_at'), 'is not', null)
      .execute();

    await db.schema
      .createTable('message_reactions')
      .addColumn('message_id', 'bigint', (c) =>
        c.notNull().references('messages.id').onDelete('cascade'),
      )
      .addColumn('emoji', 'text', (c) => c.notNull())
      .addColumn('user_id', 'bigint', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('message_reactions_pk', ['message_id', 'emoji', 'user_id'])
      .execute();

    // D61: read from the file at upload, never from the client
    await db.schema.alterTable('files').addColumn('width', 'integer').execute();
    await db.schema.alterTable('files').addColumn('height', 'integer').execute();

    // D63: JSON array of subscribed event types; null = D34's eight only
    await db.schema.alterTable('bots').addColumn('events', 'text').execute();

    // D71: one fetch per URL a day; `embed` null when the page had nothing to show
    await db.schema
      .createTable('link_previews')
      .addColumn('url', 'text', (c) => c.primaryKey())
      .addColumn('embed', 'text')
      .addColumn('fetched_at', 'bigint', (c) => c.notNull())
      .execute();
    // D71: preview images, fetched once and served from `{cdn_url}/proxy/<id>`
    await db.schema
      .createTable('proxied_images')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('url', 'text', (c) => c.notNull().unique())
      .addColumn('storage_key', 'text', (c) => c.notNull())
      .addColumn('mime', 'text', (c) => c.notNull())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('width', 'integer')
      .addColumn('height', 'integer')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
