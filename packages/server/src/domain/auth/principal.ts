/** Who is calling: a bot (through its bot user) or a human user (D10: permissions decide). */
export interface Principal {
  readonly userId: number;
  readonly name: string;
  readonly isBot: boolean;
  /** set when the caller is a bot */
  readonly botId: number | undefined;
  /** D47: set when a person authenticated with a session token */
  readonly session?: SessionRef;
  /**
   * An HTTP request on PostgreSQL: the derived cache's version read to authenticate it, after the
   * request arrived — so every commit its caller saw answered before sending it is counted. The
   * request's lookups before it writes anything (its access check) use it instead of asking the
   * database again (domain/derived-cache.ts: a version read after the lookup's request began).
   */
  readonly pinned?: number | undefined;
}

/** D47: the session a person's request came with. */
export interface SessionRef {
  /** the public id (GET /app/v1/sessions) */
  readonly id: string;
  /** SHA-256 of the token, the row's key */
  readonly hash: string;
  /** last_used_at was written by this request (the cookie may be renewed) */
  readonly touched: boolean;
}
