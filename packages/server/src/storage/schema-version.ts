import { Migrator, sql, type MigrationResult } from 'kysely';
import type { Db, Dialect } from './db.js';
import { MIGRATIONS, migrationProvider } from './migrations/index.js';

/**
 * Issue 28: the database's schema version, as the operator sees it (`parley migrate`).
 *
 * A database's version is the last migration it has run (Kysely's `kysely_migration` table);
 * this release's version is the last one it knows. A database that has run a migration this
 * release does not know was written by a newer release: it is refused (a start would read tables
 * whose meaning changed), with one line saying which version and what to do.
 */
export const CURRENT_SCHEMA: string = Object.keys(MIGRATIONS).at(-1) ?? '';

export class DatabaseNewerError extends Error {
  override name = 'DatabaseNewerError';
  constructor(readonly unknown: readonly string[]) {
    super(
      `the database has schema ${unknown.at(-1) ?? '?'}, newer than this release knows (${CURRENT_SCHEMA}): ` +
        'it was upgraded by a newer Parley — run that release, or restore the backup taken before the upgrade (docs/deploy.md "Upgrading")',
    );
  }
}

export interface SchemaStatus {
  /** migrations this database has run, oldest first */
  readonly applied: ReadonlyArray<{ name: string; executedAt: Date }>;
  /** migrations this release would run, in order */
  readonly pending: readonly string[];
  /** migrations the database has run that this release does not know (a newer release's) */
  readonly unknown: readonly string[];
  /** the database's version: its last migration (undefined: an empty database) */
  readonly version: string | undefined;
}

async function migrator(db: Db, dialect: Dialect): Promise<Migrator> {
  // Kysely looks for its bookkeeping tables in every schema it can see; on a PostgreSQL database
  // with several schemas (tests, or operators sharing a database) it must look only in ours.
  const schema =
    dialect === 'postgres'
      ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s
      : undefined;
  return new Migrator({
    db,
    provider: migrationProvider,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
}

/** The names the database has run, read directly (Kysely's own listing hides unknown ones). */
async function executed(db: Db): Promise<Array<{ name: string; executedAt: Date }>> {
  try {
    const r = await sql<{
      name: string;
      timestamp: string;
    }>`select name, timestamp from kysely_migration order by name`.execute(db);
    return r.rows.map((row) => ({ name: row.name, executedAt: new Date(row.timestamp) }));
  } catch (err) {
    // No bookkeeping table yet: a new, empty database. Anything else is a real failure.
    if (/kysely_migration/.test(String((err as Error)?.message))) return [];
    throw err;
  }
}

export async function schemaStatus(db: Db): Promise<SchemaStatus> {
  const done = await executed(db);
  const known = new Set(Object.keys(MIGRATIONS));
  const ran = new Set(done.map((d) => d.name));
  return {
    applied: done.filter((d) => known.has(d.name)),
    pending: Object.keys(MIGRATIONS).filter((n) => !ran.has(n)),
    unknown: done.filter((d) => !known.has(d.name)).map((d) => d.name),
    version: done.at(-1)?.name,
  };
}

/** Refuse a database written by a newer release (DatabaseNewerError). */
export async function refuseNewer(db: Db): Promise<SchemaStatus> {
  const status = await schemaStatus(db);
  if (status.unknown.length > 0) throw new DatabaseNewerError(status.unknown);
  return status;
}

/**
 * Runs every pending migration (each in its own transaction, under Kysely's migration lock, so
 * nodes starting together run each once). Returns the names run.
 */
export async function migrate(db: Db, dialect: Dialect): Promise<string[]> {
  await refuseNewer(db);
  const m = await migrator(db, dialect);
  const { error, results } = await m.migrateToLatest();
  const failed = results?.find((r: MigrationResult) => r.status === 'Error');
  if (error || failed) {
    const why =
      error instanceof Error
        ? error.message
        : `migration ${failed?.migrationName ?? '(unknown)'} failed`;
    throw new Error(`database migration failed: ${why}`);
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
