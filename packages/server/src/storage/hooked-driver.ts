import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely';

/**
 * A connection that can run work before its statements, whoever sends them. Group commit (storage/group-commit.ts) uses it to take a member's savepoint only
 * when the member runs its first statement (issue 29: a send whose writes all join the group's
 * batches runs none, so on PostgreSQL it costs no round trip of its own): Kysely's query
 * builders reach the connection through its executor, which nothing outside Kysely can wrap,
 * so the hook sits on the connection the driver hands out.
 */
export class HookedConnection implements DatabaseConnection {
  /** run before each statement (given its SQL) until it clears itself */
  beforeStatement: ((sql: string) => Promise<void> | void) | undefined;
  /** a transaction's BEGIN not sent yet (lazy: sent before its first statement) */
  private beginDue: (() => Promise<void>) | undefined;

  constructor(readonly inner: DatabaseConnection) {}

  /** The deferred BEGIN, if one is due: before any statement that belongs to the transaction. */
  begin(): Promise<void> | undefined {
    const due = this.beginDue;
    if (!due) return undefined;
    this.beginDue = undefined;
    return due();
  }

  /** The transaction's BEGIN waits for its first statement (see `hookedDialect`). */
  deferBegin(send: () => Promise<void>): void {
    this.beginDue = send;
  }

  /** The transaction has sent nothing yet (its BEGIN is still due). */
  beginPending(): boolean {
    return this.beginDue !== undefined;
  }

  /** True (and no longer due) when the transaction never sent its BEGIN: nothing to end. */
  neverBegan(): boolean {
    const never = this.beginDue !== undefined;
    this.beginDue = undefined;
    return never;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (this.beginDue) await this.begin();
    await this.beforeStatement?.(query.sql);
    return this.inner.executeQuery<R>(query);
  }

  async *streamQuery<R>(
    query: CompiledQuery,
    chunkSize?: number,
  ): AsyncIterableIterator<QueryResult<R>> {
    if (this.beginDue) await this.begin();
    await this.beforeStatement?.(query.sql);
    yield* this.inner.streamQuery<R>(query, chunkSize);
  }
}

/**
 * `dialect` with every connection it hands out a HookedConnection. `lazyBegin` (PostgreSQL):
 * a transaction's BEGIN is sent before its first statement, not when it opens, and a transaction
 * that ran no statement sends neither BEGIN nor COMMIT. PostgreSQL takes nothing at BEGIN (a
 * transaction's snapshot and id come with its first statement), so nothing else changes — but a
 * group commit whose members ran no statement of their own can write the group's rows in one
 * statement that commits by itself (issue 29: one round trip for the group instead of six).
 */
export function hookedDialect(dialect: Dialect, opts: { lazyBegin?: boolean } = {}): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new HookedDriver(dialect.createDriver(), opts.lazyBegin === true),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}

const innerOf = (c: DatabaseConnection): DatabaseConnection =>
  c instanceof HookedConnection ? c.inner : c;

/** The driver's own methods get its own connection (some reach into its private fields). */
class HookedDriver implements Driver {
  constructor(
    private readonly driver: Driver,
    private readonly lazyBegin: boolean,
  ) {}
  init(): Promise<void> {
    return this.driver.init();
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    return new HookedConnection(await this.driver.acquireConnection());
  }
  beginTransaction(c: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    if (this.lazyBegin && c instanceof HookedConnection) {
      c.deferBegin(() => this.driver.beginTransaction(c.inner, settings));
      return Promise.resolve();
    }
    return this.driver.beginTransaction(innerOf(c), settings);
  }
  commitTransaction(c: DatabaseConnection): Promise<void> {
    if (c instanceof HookedConnection && c.neverBegan()) return Promise.resolve();
    return this.driver.commitTransaction(innerOf(c));
  }
  rollbackTransaction(c: DatabaseConnection): Promise<void> {
    if (c instanceof HookedConnection && c.neverBegan()) return Promise.resolve();
    return this.driver.rollbackTransaction(innerOf(c));
  }
  savepoint(c: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    return this.required('savepoint')(c, name, compile);
  }
  rollbackToSavepoint(c: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    return this.required('rollbackToSavepoint')(c, name, compile);
  }
  releaseSavepoint(c: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    return this.required('releaseSavepoint')(c, name, compile);
  }
  releaseConnection(c: DatabaseConnection): Promise<void> {
    return this.driver.releaseConnection(innerOf(c));
  }
  destroy(): Promise<void> {
    return this.driver.destroy();
  }

  private required(name: 'savepoint' | 'rollbackToSavepoint' | 'releaseSavepoint') {
    const driver = this.driver;
    if (!driver[name]) throw new Error(`the database driver has no ${name}`);
    return async (
      c: DatabaseConnection,
      savepoint: string,
      compile: QueryCompiler['compileQuery'],
    ) => {
      // a savepoint belongs to the transaction: its deferred BEGIN goes first
      if (c instanceof HookedConnection) await c.begin();
      return (driver[name] as NonNullable<Driver[typeof name]>).call(
        driver,
        innerOf(c),
        savepoint,
        compile,
      );
    };
  }
}
