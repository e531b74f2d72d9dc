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

  constructor(readonly inner: DatabaseConnection) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    await this.beforeStatement?.(query.sql);
    return this.inner.executeQuery<R>(query);
  }

  async *streamQuery<R>(
    query: CompiledQuery,
    chunkSize?: number,
  ): AsyncIterableIterator<QueryResult<R>> {
    await this.beforeStatement?.(query.sql);
    yield* this.inner.streamQuery<R>(query, chunkSize);
  }
}

/** `dialect` with every connection it hands out a HookedConnection. */
export function hookedDialect(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new HookedDriver(dialect.createDriver()),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}

const innerOf = (c: DatabaseConnection): DatabaseConnection =>
  c instanceof HookedConnection ? c.inner : c;

/** The driver's own methods get its own connection (some reach into its private fields). */
class HookedDriver implements Driver {
  constructor(private readonly driver: Driver) {}
  init(): Promise<void> {
    return this.driver.init();
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    return new HookedConnection(await this.driver.acquireConnection());
  }
  beginTransaction(c: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.driver.beginTransaction(innerOf(c), settings);
  }
  commitTransaction(c: DatabaseConnection): Promise<void> {
    return this.driver.commitTransaction(innerOf(c));
  }
  rollbackTransaction(c: DatabaseConnection): Promise<void> {
    return this.driver.rollbackTransaction(innerOf(c));
  }
  savepoint(c: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    return this.required('savepoint')(innerOf(c), name, compile);
  }
  rollbackToSavepoint(c: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    return this.required('rollbackToSavepoint')(innerOf(c), name, compile);
  }
  releaseSavepoint(c: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']) {
    return this.required('releaseSavepoint')(innerOf(c), name, compile);
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
    return (c: DatabaseConnection, savepoint: string, compile: QueryCompiler['compileQuery']) =>
      (driver[name] as NonNullable<Driver[typeof name]>).call(driver, c, savepoint, compile);
  }
}
