/**
 * Values derived from rows that rarely change and are read on every request — a bot's token
 * generation, a channel and its overwrites, a member's roles, who receives a channel's events —
 * kept in memory while the database's version (storage/db.ts `version`) stays the same.
 *
 * Exact, not eventually consistent: any write that could change such a row, by this process or
 * another, changes the version, and the whole cache is dropped at the next lookup. A value
 * loaded while the version moved is returned but not kept, so a read that raced a write is never
 * served later. SQLite's version is this process's write count plus the file's data_version
 * (storage/db.ts); PostgreSQL's is a sequence every node bumps after such a commit, read once
 * per lookup (storage/pg-version.ts).
 *
 * Values are shared between callers: they are frozen and must be treated as read-only.
 */
export interface CacheVersion {
  /** the database's version now (NaN: it cannot tell — load, and keep nothing) */
  read(): number | Promise<number>;
  /**
   * false while a transaction of this process has written such data and not ended: nothing is
   * served from memory or kept then (a value loaded now might include its uncommitted writes, and
   * its own lookups must see them)
   */
  storable(): boolean;
}

export class DerivedCache {
  private readonly values = new Map<string, unknown>();
  private at: number | undefined;
  /** values loaded from the database (not served from memory): tests and metrics */
  loads = 0;
  /** versions asked of the database (on PostgreSQL each is a query): tests and metrics */
  reads = 0;

  constructor(
    private readonly version: CacheVersion | null,
    /** entries before the cache starts over (a bound on memory, not a tuning knob) */
    private readonly max = 50_000,
  ) {}

  get enabled(): boolean {
    return this.version !== null;
  }

  /**
   * The version now, read once for the lookups of one step (an access check's channel, member and
   * overwrites): pass it to `get`. Exact as long as it was read after the step began.
   */
  now(): number | Promise<number> {
    if (this.version === null) return NaN;
    this.reads++;
    return this.version.read();
  }

  /**
   * `pinned`: a version from `now()` (one read for several lookups); else it is read here.
   * A value already in memory at a version known at once (SQLite's, or a pinned one) is returned
   * as it is, not as a promise: the lookups of every request hit, and an async call allocates a
   * promise and its frame each time (issue 29: the send's garbage, bench/README.md).
   */
  get<T>(key: string, load: () => Promise<T>, pinned?: number): T | Promise<T> {
    const version = this.version;
    // PostgreSQL: while a transaction of this node has written cached data, the version has not
    // moved yet (it moves after the commit): that transaction's own lookups — recipients read
    // after it added a member — must see its writes, and the cache cannot tell whose lookup this
    // is. So every lookup loads until it ends (such writes are administrative, and rare).
    if (version === null || !version.storable()) {
      this.loads++;
      return load();
    }
    // SQLite answers at once; PostgreSQL's read is a query (awaited only then).
    if (pinned === undefined) this.reads++;
    const read = pinned ?? version.read();
    if (typeof read === 'number' && read === this.at) {
      // one lookup for a value that is there (a stored `undefined` — no such row — needs two)
      const value = this.values.get(key);
      if (value !== undefined || this.values.has(key)) return value as T;
    }
    return this.miss(key, load, pinned, version, read);
  }

  private async miss<T>(
    key: string,
    load: () => Promise<T>,
    pinned: number | undefined,
    version: CacheVersion,
    read: number | Promise<number>,
  ): Promise<T> {
    const before = typeof read === 'number' ? read : await read;
    // A pinned version older than the cache's (a concurrent lookup read a newer one since; both
    // databases' versions only grow): load, keep nothing, leave the cache at the newer version.
    if (pinned !== undefined && this.at !== undefined && before < this.at) {
      this.loads++;
      return load();
    }
    if (before !== this.at) {
      this.values.clear();
      this.at = before;
    } else if (this.values.has(key)) {
      return this.values.get(key) as T;
    }
    this.loads++;
    const value = await load();
    // Pinned: no second read. The value was loaded after the pin was read, so it is at least as
    // new; a commit since moves the version, and the next unpinned lookup drops it.
    if (pinned === undefined) this.reads++;
    const again = pinned ?? version.read();
    const after = typeof again === 'number' ? again : await again;
    // NaN (cannot tell) never equals itself: nothing is kept then.
    if (after === before && this.at === before && version.storable()) {
      if (this.values.size >= this.max) this.values.clear();
      this.values.set(key, typeof value === 'object' && value !== null ? deepFreeze(value) : value);
    }
    return value;
  }
}

function deepFreeze<T extends object>(value: T): T {
  for (const v of Object.values(value))
    if (typeof v === 'object' && v !== null && !Object.isFrozen(v)) deepFreeze(v as object);
  return Object.freeze(value);
}
