/**
 * A SQLite database's statements run straight on its better-sqlite3 connection, without Kysely's
 * asynchronous executor around each one (its connection provider, mutex and result promises).
 * Only for code that already holds the connection inside a transaction — a group commit's
 * members (storage/group-commit.ts `directIn`) — where Kysely would run the same statement on
 * the same connection at once: SQLite's calls are synchronous, so nothing can run between.
 * Issue 24/29: a send runs about ten statements; their executor cost more CPU than SQLite took.
 */
export type DirectRun = (text: string, params: readonly unknown[]) => unknown[];

const direct = new WeakMap<object, DirectRun>();

export function registerDirect(db: object, run: DirectRun): void {
  direct.set(db, run);
}

/** The direct runner of a SQLite database (undefined on PostgreSQL). */
export function directFor(db: object): DirectRun | undefined {
  return direct.get(db);
}
