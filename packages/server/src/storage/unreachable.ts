/**
 * D72: the one place that decides whether an error means "the database cannot be reached right
 * now" — a connection refused, reset, terminated by the server (a failover, a restart,
 * `pg_terminate_backend`, a proxy's idle timeout) or not accepted yet — as opposed to a fault of
 * the statement itself. Such an error is temporary: a request answers 503 SERVICE_UNAVAILABLE
 * with Retry-After (never 500), background loops keep going, and nothing is logged per request
 * (health/health.ts logs the outage once).
 */

/** Set on errors from opening a connection (storage/db.ts): whatever their code, a 503. */
const CONNECT_FAILED = Symbol.for('parley.connectFailed');

/** Node's socket errors: the server is gone or cannot be reached. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * PostgreSQL SQLSTATEs of a lost or refused connection: 57P01 admin_shutdown (terminated by an
 * administrator, a restart), 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up,
 * shutting down, in recovery), 53300 too_many_connections; class 08 (connection exception) is
 * matched by its prefix.
 */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** node-postgres and pg-pool say these in words, without a code. */
const MESSAGES = [
  /^Connection terminated/i, // "Connection terminated", "… unexpectedly", "… due to connection timeout"
  /is not queryable/i, // a Client after its connection failed, or after end()
  /timeout exceeded when trying to connect/i, // pg-pool's connectionTimeoutMillis
  /is not currently accepting connections/i, // ALLOW_CONNECTIONS false (SQLSTATE 55000)
  /the database system is (?:starting up|shutting down|in recovery mode)/i,
];

export function isDatabaseUnreachable(err: unknown, depth = 0): boolean {
  if (typeof err !== 'object' || err === null || depth > 4) return false;
  const e = err as {
    code?: unknown;
    message?: unknown;
    errors?: unknown;
    [CONNECT_FAILED]?: unknown;
  };
  if (e[CONNECT_FAILED] === true) return true;
  const code = typeof e.code === 'string' ? e.code : undefined;
  if (code !== undefined) {
    if (SOCKET_CODES.has(code) || SQLSTATES.has(code)) return true;
    if (/^08[0-9A-Z]{3}$/.test(code)) return true;
  }
  if (typeof e.message === 'string' && MESSAGES.some((m) => m.test(e.message as string)))
    return true;
  // Node's happy-eyeballs connect fails with an AggregateError of one error per address.
  // (Not `cause`: an outbound request's "fetch failed" wraps ECONNREFUSED too, and is no 503.)
  return Array.isArray(e.errors) && e.errors.some((x) => isDatabaseUnreachable(x, depth + 1));
}

/**
 * A refusal that waiting will not cure: wrong credentials (SQLSTATE class 28) or a database that
 * does not exist (3D000). A request still answers 503 (the database cannot be used now), but a
 * node starting with such a setting stops and says so instead of waiting (main.ts, D42).
 */
export function isDatabaseMisconfigured(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (code.startsWith('28') || code === '3D000');
}

/** Mark an error from opening a connection: it is a 503 whatever it says (auth included). */
export function connectFailed<T>(err: T): T {
  if (typeof err === 'object' && err !== null)
    (err as { [CONNECT_FAILED]?: boolean })[CONNECT_FAILED] = true;
  return err;
}

/**
 * ioredis's rejections when Redis cannot be reached (offline queue off, retries used up, the
 * connection closed under a command, a command timeout). Redis is a hint (D72): callers fall
 * back, and these are not logged one by one.
 */
const REDIS_MESSAGES = [
  /Stream isn't writeable/i,
  /Connection is closed/i,
  /Command timed out/i,
  /max retries per request/i,
  /Reached the max retries/i,
  /connect ETIMEDOUT/i,
];

export function isRedisUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: unknown; message?: unknown; code?: unknown };
  if (e.name === 'MaxRetriesPerRequestError') return true;
  if (typeof e.code === 'string' && SOCKET_CODES.has(e.code)) return true;
  return typeof e.message === 'string' && REDIS_MESSAGES.some((m) => m.test(e.message as string));
}
