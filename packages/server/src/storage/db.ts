import SQLite from 'better-sqlite3';
import type { CustomTypesConfig } from 'pg';
import {
  Kysely,
  PostgresDialect,
  SqliteDialect,
  sql,
  type SqliteDatabase,
  type SqliteStatement,
} from 'kysely';
import type { CacheVersion } from '../domain/derived-cache.js';
import type { Database } from './schema.js';
import { PgCacheVersion } from './pg-version.js';
import { secureSqliteFiles, type Tightened } from './file-modes.js';
import { writesDerivedData } from './derived-writes.js';
import type { DatabaseHealth } from '../health/health.js';
import { connectFailed } from './unreachable.js';
import { hookedDialect } from './hooked-driver.js';
import { registerDirect } from './sqlite-direct.js';
import { searchText } from '../domain/search/search-text.js';
import { IdleCheckpoints } from './sqlite-checkpoints.js';

export type Dialect = 'sqlite' | 'postgres';
export type Db = Kysely<Database>;

export interface DatabaseHandle {
  readonly db: Db;
  readonly dialect: Dialect;
  /**
   * A token that changes whenever data that in-memory caches derive from may have changed —
   * written by this process or any other (domain/derived-cache.ts).
   */
  readonly version: CacheVersion;
  /** D54: database files whose looser modes were tightened on opening (the caller logs them) */
  readonly tightened: readonly Tightened[];
  close(): Promise<void>;
}

export interface OpenOptions {
  /** PostgreSQL only: a schema to work in (tests use a fresh one per run). */
  schema?: string;
  poolSize?: number;
  /** SQLite only: page cache size in MiB (PARLEY_SQLITE_CACHE_MIB) */
  cacheMib?: number;
  /** PostgreSQL only: told when connections fail and come back (D72) */
  health?: DatabaseHealth;
}

/**
 * D72: how long a request waits for a connection — a new one to open, or a busy pool's to free
 * up — before it fails (503), instead of hanging while the database cannot be reached.
 */
const CONNECT_TIMEOUT_MS = 5_000;

// int8 (OID 20) as a JS number: all our ids and times are ≤ 2^53−1 (D3), so this is exact.
const INT8_OID = 20;
const pgTypes = (types: CustomTypesConfig): CustomTypesConfig => ({
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID
      ? (v: string) => Number(v)
      : types.getTypeParser(oid, format)) as CustomTypesConfig['getTypeParser'],
});

export function openDatabase(url: string, opts: OpenOptions = {}): DatabaseHandle {
  if (url.startsWith('sqlite:')) {
    const file = url.slice('sqlite:'.length);
    // D54: created 0600 (its -wal/-shm follow), looser modes tightened.
    const tightened = file === ':memory:' ? [] : secureSqliteFiles(file);
    const sqlite = new SQLite(file);
    sqlite.pragma('journal_mode = WAL');
    // WAL + NORMAL: a commit survives a crash of the server process (SIGKILL included), which
    // is the durability an acknowledged write promises (docs/deploy.md); only an OS crash or power
    // loss may drop the last commits. FULL would fsync every commit and cap sends at the disk's
    // sync rate.
    sqlite.pragma('synchronous = NORMAL');
    sqlite.pragma('foreign_keys = ON');
    sqlite.pragma('busy_timeout = 5000');
    // better-sqlite3 builds SQLite with a 16 MiB page cache; it filled under load and stayed
    // (bench idle: +15 MiB RSS after 30,000 messages). The file's pages stay in the OS cache.
    sqlite.pragma(`cache_size = -${Math.floor((opts.cacheMib ?? 2) * 1024)}`);
    // D67: the search index's text normalization, callable in SQL as PostgreSQL's index
    // expression is (migrations/0055-search.ts has its SQL twin there): the index's rows are
    // written by one INSERT … SELECT (domain/search/search-index.ts).
    sqlite.function('parley_search_text', { deterministic: true }, (text: unknown) =>
      typeof text === 'string' ? searchText(text) : text,
    );
    const writes = new WriteCounter();
    const checkpoints = new IdleCheckpoints(sqlite, writes, file);
    // Changes when another connection (the CLI, a bulk seed) commits to the file. Read at most
    // once per turn of the event loop: what another process commits while this turn runs is
    // seen at the next one, as if this turn had run a moment earlier.
    const dataVersion = sqlite.prepare('PRAGMA data_version').pluck();
    let external = 0;
    let fresh = false;
    const statements = cachedStatements(sqlite, writes);
    const db = new Kysely<Database>({
      dialect: hookedDialect(new SqliteDialect({ database: statements })),
    });
    registerDirect(db, (text, params) => {
      const stmt = statements.prepare(text);
      if (stmt.reader) return stmt.all(params);
      stmt.run(params);
      return [];
    });
    return {
      db,
      dialect: 'sqlite',
      tightened,
      version: {
        // Both counters only grow, so their sum changes whenever either does.
        read: () => {
          if (!fresh) {
            external = Number(dataVersion.get());
            fresh = true;
            setImmediate(() => {
              fresh = false;
            }).unref();
          }
          return writes.count + external;
        },
        // One connection: what a transaction wrote is what every reader of it sees.
        storable: () => true,
      },
      close: async () => {
        // The checkpoint thread's connection first: the last connection to close checkpoints
        // the whole WAL and removes it.
        await checkpoints.stop();
        await db.destroy();
      },
    };
  }
  // pg is loaded only when PostgreSQL is configured: a SQLite server never pays its memory.
  const version = new PgCacheVersion();
  const pool = async () => {
    const pg = (await import('pg')).default;
    const settings = {
      connectionString: url,
      types: pgTypes(pg.types),
      ...(opts.schema ? { options: `-c search_path=${opts.schema}` } : {}),
    };
    const p = new pg.Pool({
      ...settings,
      max: opts.poolSize ?? 10,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    });
    // D72: a lost connection never ends the process. pg-pool emits 'error' for an idle client
    // whose connection dies (a terminated backend, a restart, a proxy's idle timeout), and a
    // checked-out client emits it itself: without listeners either is an uncaught exception.
    // The pool drops the broken client (it is no longer queryable) and opens a new one on demand.
    const epochs = new WeakMap<object, number>();
    const lost = (err: Error, client: object): void =>
      opts.health?.lost(err, epochs.get(client) ?? 0);
    p.on('error', lost);
    p.on('connect', (client) => {
      epochs.set(client, opts.health?.connected() ?? 0);
      client.on('error', (err) => lost(err, client));
    });
    version.attach(p, () => new pg.Client(settings));
    // What Kysely sees: the pool, with a failed connection attempt reported and marked as a
    // connection failure (a 503 whatever its code, storage/unreachable.ts).
    return {
      connect: async () => {
        try {
          return await p.connect();
        } catch (err) {
          opts.health?.connectFailed(err);
          throw connectFailed(err);
        }
      },
      end: () => p.end(),
    };
  };
  const db = new Kysely<Database>({
    dialect: hookedDialect(new PostgresDialect({ pool }), { lazyBegin: true }),
  });
  return {
    db,
    dialect: 'postgres',
    version,
    tightened: [],
    close: async () => {
      await version.close();
      await db.destroy();
    },
  };
}

/**
 * Kysely's SQLite driver prepares every statement anew on each query; preparing was a tenth of
 * the server's CPU under load (bench/README.md, send profile). The same SQL text always compiles
 * to the same statement, so prepared statements are kept by text (bounded). Safe because Kysely
 * runs one statement at a time on this connection and never leaves one iterating.
 */
const STATEMENT_CACHE = 500;

function cachedStatements(sqlite: SQLite.Database, writes: WriteCounter): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => {
      sqlite.close();
    },
    prepare: (sqlText: string) => {
      // A deferred BEGIN starts as a reader; if another process (the CLI, a second server) commits
      // before its first write, the upgrade fails with "database is locked" at once — the busy
      // timeout is never consulted for a stale snapshot. IMMEDIATE takes the write lock at BEGIN,
      // where the busy timeout waits for it.
      const text = /^\s*begin\s*$/i.test(sqlText) ? 'begin immediate' : sqlText;
      let stmt = cache.get(text);
      if (stmt === undefined) {
        stmt = writes.watch(text, sqlite.prepare(text));
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

/**
 * Counts this connection's writes that may change what caches derive from (derived-writes.ts).
 * The count moves before the statement runs, and a ROLLBACK moves it too, so a value read inside
 * a transaction that is then rolled back is never served afterwards.
 */
class WriteCounter {
  count = 0;
  /** when this connection last committed (ms, monotonic), for IdleCheckpoints */
  lastCommit = 0;
  committedSinceCheckpoint = false;

  watch(text: string, stmt: SQLite.Statement): SqliteStatement {
    if (/^\s*commit\b/i.test(text)) return this.commits(stmt);
    if (!writesDerivedData(text)) return stmt;
    const bump = () => {
      this.count++;
    };
    return {
      reader: stmt.reader,
      all: (params) => {
        bump();
        return stmt.all(params);
      },
      run: (params) => {
        bump();
        return stmt.run(params);
      },
      iterate: (params) => {
        bump();
        return stmt.iterate(params);
      },
    };
  }

  private commits(stmt: SQLite.Statement): SqliteStatement {
    const done = () => {
      this.lastCommit = performance.now();
      this.committedSinceCheckpoint = true;
    };
    return {
      reader: stmt.reader,
      all: (params) => {
        const out = stmt.all(params);
        done();
        return out;
      },
      run: (params) => {
        const out = stmt.run(params);
        done();
        return out;
      },
      iterate: (params) => stmt.iterate(params),
    };
  }
}

/** Runs pending migrations, refusing a database a newer release wrote (storage/schema-version.ts). */
export { migrate } from './schema-version.js';

/** True when the error is a unique-constraint violation on either dialect. */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string } | null;
  return (
    e?.code === '23505' ||
    e?.code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

/** True when the error is a foreign-key violation on either dialect (a row it names is gone). */
export function isForeignKeyViolation(err: unknown): boolean {
  const e = err as { code?: string } | null;
  return e?.code === '23503' || e?.code === 'SQLITE_CONSTRAINT_FOREIGNKEY';
}

export { sql };
