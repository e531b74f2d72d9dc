import type { Kysely, Migration } from 'kysely';

/**
 * D69: sign-in with an OpenID provider. `oidc_links` ties a provider's subject (`sub`, unique per
 * issuer) to one person, and a person to at most one subject of an issuer. `oidc_flows` keeps a
 * started sign-in (or link) until its callback: state (as its SHA-256), nonce and PKCE verifier
 * live on the server, in the shared database, so any node of a cluster can finish the flow, and
 * each flow is used at most once (a replayed callback finds nothing).
 */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('oidc_links')
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('user_id', 'bigint', (c) => c.notNull().references('users.id').onDelete('cascade'))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('oidc_links_pk', ['issuer', 'subject'])
      .execute();
    await db.schema
      .createIndex('oidc_links_user')
      .on('oidc_links')
      .columns(['user_id', 'issuer'])
      .unique()
      .execute();

    await db.schema
      .createTable('oidc_flows')
      .addColumn('state_hash', 'text', (c) => c.primaryKey())
      .addColumn('nonce', 'text', (c) => c.notNull())
      .addColumn('code_verifier', 'text', (c) => c.notNull())
      // null: a sign-in; a person's id: that person links their account
      .addColumn('link_user_id', 'bigint')
      .addColumn('invite', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('oidc_flows_created')
      .on('oidc_flows')
      .column('created_at')
      .execute();
  },
  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('oidc_flows').ifExists().execute();
    await db.schema.dropTable('oidc_links').ifExists().execute();
  },
};
