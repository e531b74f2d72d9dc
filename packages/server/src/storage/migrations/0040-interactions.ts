import type { Kysely, Migration } from 'kysely';

/**
 * D64–D65: bots' command declarations, interactions (their one callback, their 15-minute window).
 * A message's components and the interaction it answers live in its `extra` (D61, 0030).
 * Ephemeral replies are never stored as messages (D65): an ephemeral @original is kept on its
 * interaction only, for its edits within the window.
 */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('app_commands')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('bot_id', 'bigint', (c) => c.notNull().references('bots.id').onDelete('cascade'))
      // null: a global command
      .addColumn('guild_id', 'bigint', (c) => c.references('guilds.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      // the declaration as validated (JSON)
      .addColumn('decl', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('app_commands_bot')
      .on('app_commands')
      .columns(['bot_id', 'guild_id'])
      .execute();
    await db.schema
      .createIndex('app_commands_guild')
      .on('app_commands')
      .column('guild_id')
      .execute();

    await db.schema
      .createTable('interactions')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('bot_id', 'bigint', (c) => c.notNull().references('bots.id').onDelete('cascade'))
      .addColumn('user_id', 'bigint', (c) => c.notNull())
      .addColumn('channel_id', 'bigint', (c) => c.notNull())
      .addColumn('guild_id', 'bigint')
      .addColumn('type', 'integer', (c) => c.notNull())
      // the command's name, or the component's customId
      .addColumn('name', 'text', (c) => c.notNull())
      // SHA-256 of the interaction token (the token itself is never stored)
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      // type 3: the message whose component was used
      .addColumn('message_id', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      // set once, by the one callback that wins (D65: a second → 409)
      .addColumn('responded_at', 'bigint')
      .addColumn('response_type', 'integer')
      // the reply or the "thinking…" message (@original), and, when ephemeral, its JSON
      .addColumn('original_id', 'bigint')
      .addColumn('original_json', 'text')
      // type 4: the bot's choices (JSON)
      .addColumn('choices', 'text')
      .execute();
    await db.schema
      .createIndex('interactions_created')
      .on('interactions')
      .column('created_at')
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('interactions').execute();
    await db.schema.dropTable('app_commands').execute();
  },
};
