/**
 * Values derived from rows that rarely change and are read on every request — a bot's token
 * generation, a channel and its overwrites, a member's roles, who receives a channel's events —
 * kept in memory while the database's version (storage/db.ts `version`) stays the same.
 *
 * Exact, not eventually consistent: any write that could change such a row, by this process or
 * another, changes the version, and the whole cache is dropped at the next lookup. A value
 * loaded while the version moved is returned but not kept, so a read that raced a write is never
 * served later. Where the database cannot tell (PostgreSQL, with other nodes writing), nothing is
 * kept and every lookup loads.
 *
 * Values are shared between callers: they are frozen and must be treated as read-only.
 */
export class DerivedCache {
  private readonly values = new Map<string, unknown>();
  private at: number | undefined;

  constructor(
    private readonly version: (() => number) | null,
    /** entries before the cache starts over (a bound on memory, not a tuning knob) */
    private readonly max = 50_000,
  ) {}

  get enabled(): boolean {
    return this.version !== null;
  }

  async get<T>(key: string, load: () => Promise<T>): Promise<T> {
    if (this.version === null) return load();
    const before = this.version();
    if (before !== this.at) {
      this.values.clear();
      this.at = before;
    } else if (this.values.has(key)) {
      return this.values.get(key) as T;
    }
    const value = await load();
    if (this.version() === before && this.at === before) {
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
