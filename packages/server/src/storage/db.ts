import { mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql, type SqliteDatabase } from 'kysely';
import type { Database } from './schema.js';
import { migrationProvider } from './migrations/index.js';

export type Dialect = 'sqlite' | 'postgres';
export type Db = Kysely<Database>;

export interface DatabaseHandle {
  readonly db: Db;
  readonly dialect: Dialect;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** PostgreSQL only: a schema to work in (tests use a fresh one per run). */
  schema?: string;
  poolSize?: number;
}

// int8 (OID 20) as a JS number: all our ids and times are ≤ 2^53−1 (D3), so this is exact.
const INT8_OID = 20;
const pgTypes = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID
      ? (v: string) => Number(v)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

export function openDatabase(url: string, opts: OpenOptions = {}): DatabaseHandle {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    const sqlite = new SQLite(file);
    sqlite.pragma('journal_mode = WAL');
    // WAL + NORMAL: a commit survives a crash of the server process (SIGKILL included), which
    // is the durability DEVELOPERS.md asks of an acknowledged write; only an OS crash or power
    // loss may drop the last commits. FULL would fsync every commit and cap sends at the disk's
    // sync rate.
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    const db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: cachedStatements(sqlite) }),
    });
    return { db, dialect: 'sqlite', close: () => db.destroy() };
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: opts.poolSize ?? 10,
    types: pgTypes,
    ...(opts.schema ? { options: `-c search_path=${opts.schema}` } : {}),
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', close: () => db.destroy() };
}

/**
 * Kysely's SQLite driver prepares every statement anew on each query; preparing was a tenth of
 * the server's CPU under load (bench/README.md, send profile). The same SQL text always compiles
 * to the same statement, so prepared statements are kept by text (bounded). Safe because Kysely
 * runs one statement at a time on this connection and never leaves one iterating.
 */
const STATEMENT_CACHE = 500;

function cachedStatements(sqlite: SQLite.Database): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => {
      sqlite.close();
    },
    prepare: (text: string) => {
      let stmt = cache.get(text);
      if (stmt === undefined) {
        stmt = sqlite.prepare(text);
        if (cache.size >= STATEMENT_CACHE) {
          const oldest = cache.keys().next().value;
          if (oldest !== undefined) cache.delete(oldest);
        }
        cache.set(text, stmt);
      }
      return stmt;
    },
  };
}

export async function migrate(db: Db, dialect: Dialect): Promise<void> {
  // Kysely looks for its bookkeeping tables in every schema it can see; on a PostgreSQL database
  // with several schemas (tests, or operators sharing a database) it must look only in ours.
  const schema =
    dialect === 'postgres'
      ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s
      : undefined;
  const migrator = new Migrator({
    db,
    provider: migrationProvider,
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const why =
      error instanceof Error
        ? error.message
        : `migration ${failed?.migrationName ?? '(unknown)'} failed`;
    throw new Error(`database migration failed: ${why}`);
  }
}

/** True when the error is a unique-constraint violation on either dialect. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string } | null;
  return (
    e?.code === '23505' ||
    e?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

export { sql };
