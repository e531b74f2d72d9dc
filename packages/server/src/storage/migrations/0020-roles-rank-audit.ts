import { sql, type Kysely, type Migration } from 'kysely';

/**
 * D57 + D58 + D60: roles gain a rank (`position`), a colour and `mentionable`; members a
 * time-out; the audit log (a guild's, and the operator's own) is new.
 *
 * An upgrade keeps every guild's behaviour (D57): wherever a role or an overwrite allowed
 * (denied) SEND_MESSAGES it now also allows (denies) ATTACH_FILES, ADD_REACTIONS and
 * USE_APPLICATION_COMMANDS — those bits were part of sending before they were split out.
 * Existing roles are ranked in the order they were made (the oldest lowest, above @everyone at
 * 0), the order peers show roles that were never reordered.
 */
const SEND_MESSAGES = 2;
// ATTACH_FILES | ADD_REACTIONS | USE_APPLICATION_COMMANDS, as of D57 (never to change)
const SEND_IMPLIES = 4096 | 2048 | 32768;

export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('roles')
      .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('roles').addColumn('color', 'integer').execute();
    await db.schema
      .alterTable('roles')
      .addColumn('mentionable', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('members').addColumn('timeout_until', 'bigint').execute();

    const k = db as Kysely<Record<string, Record<string, unknown>>>;
    const roles = await k
      .selectFrom('roles')
      .select(['id', 'guild_id'])
      .orderBy('guild_id')
      .orderBy('id')
      .execute();
    const next = new Map<string, number>();
    for (const r of roles) {
      // @everyone (id = guild id, D11) stays at 0
      if (String(r['id']) === String(r['guild_id'])) continue;
      const g = String(r['guild_id']);
      const position = (next.get(g) ?? 0) + 1;
      next.set(g, position);
      await k.updateTable('roles').set({ position }).where('id', '=', r['id']).execute();
    }
    await sql`update roles set permissions = permissions | ${sql.lit(SEND_IMPLIES)}
      where (permissions & ${sql.lit(SEND_MESSAGES)}) <> 0`.execute(db);
    await sql`update channel_overwrites set allow = allow | ${sql.lit(SEND_IMPLIES)}
      where (allow & ${sql.lit(SEND_MESSAGES)}) <> 0`.execute(db);
    await sql`update channel_overwrites set deny = deny | ${sql.lit(SEND_IMPLIES)}
      where (deny & ${sql.lit(SEND_MESSAGES)}) <> 0`.execute(db);

    // D60: one table for a guild's log and the operator's own. A guild's entries carry its id;
    // the operator's own log is every row with actor_type 'operator' and `operator_log` = 1
    // (an operator's change of a guild is in both).
    await db.schema
      .createTable('audit_log')
      .addColumn('id', 'bigint', (c) => c.primaryKey())
      .addColumn('guild_id', 'bigint')
      .addColumn('actor_id', 'bigint')
      .addColumn('actor_type', 'text', (c) => c.notNull())
      .addColumn('action', 'text', (c) => c.notNull())
      .addColumn('target_id', 'bigint')
      .addColumn('reason', 'text')
      .addColumn('changes', 'text', (c) => c.notNull())
      .addColumn('operator_log', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('audit_log_guild')
      .on('audit_log')
      .columns(['guild_id', 'id'])
      .execute();
    await db.schema
      .createIndex('audit_log_operator')
      .on('audit_log')
      .columns(['operator_log', 'id'])
      .execute();
    await db.schema.createIndex('audit_log_created').on('audit_log').column('created_at').execute();
  },
};
