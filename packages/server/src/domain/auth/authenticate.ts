import { AppError } from '../../errors/app-error.js';
import type { Domain } from '../context.js';
import type { BotTokenClaims, BotTokenCodec } from './bot-token.js';
import type { Principal } from './principal.js';
import { SESSION_TOUCH_SQL } from '../../storage/derived-writes.js';
import { rawQuery } from '../../storage/raw-sql.js';
import { SESSION_PREFIX, hashSessionToken } from './session-token.js';

export const unauthorized = (why = 'Missing or invalid token'): AppError =>
  new AppError('UNAUTHORIZED', why, { headers: { 'www-authenticate': 'Bearer' } });

/** D9: extract the token from `Authorization: Bearer <token>`; anything else is a 401. */
export function bearerToken(header: string | undefined): string {
  if (header === undefined || header === '') throw unauthorized('Missing Authorization header');
  const m = /^Bearer +([^\s]+) *$/i.exec(header);
  if (!m?.[1]) throw unauthorized('Authorization must be "Bearer <token>"');
  return m[1];
}

/** D47: last use is written at most this often per session. */
export const SESSION_TOUCH_MS = 60_000;
const DAY_MS = 86_400_000;

/**
 * What this process last wrote as each session's last use (the cached row may predate it: the
 * touch leaves the cache's version alone, storage/derived-writes.ts SESSION_TOUCH_SQL). Per database handle;
 * bounded (dropping it costs at most one extra write per session).
 */
const touchedBy = new WeakMap<object, Map<string, number>>();
const TOUCHED_MAX = 100_000;

function touchedMap(d: Pick<Domain, 'db'>): Map<string, number> {
  let m = touchedBy.get(d.db);
  if (!m) touchedBy.set(d.db, (m = new Map()));
  return m;
}

/**
 * D46/D47: a person's session token. Unknown, ended (row deleted), expired (unused for
 * PARLEY_SESSION_IDLE_DAYS) or disabled → 401. The row is cached (derived cache: every end of a
 * session is a DELETE, which drops it); its last use is written at most once a minute.
 */
async function personSession(
  d: Pick<Domain, 'db' | 'cache' | 'clock' | 'config' | 'people'>,
  token: string,
  pinned: number | undefined,
): Promise<Principal> {
  const hash = hashSessionToken(token);
  const row = await d.cache.get(
    `session:${hash}`,
    () =>
      d.db
        .selectFrom('user_sessions as s')
        .innerJoin('users as u', 'u.id', 's.user_id')
        .select(['u.id', 'u.name', 'u.is_bot', 'u.disabled', 's.id as sessionId', 's.last_used_at'])
        .where('s.token_hash', '=', hash)
        .executeTakeFirst(),
    pinned,
  );
  if (!row || row.is_bot) throw unauthorized('Unknown or ended session');
  if (row.disabled) throw unauthorized('This account is disabled');
  const touched = touchedMap(d);
  const now = d.clock.now();
  const idleMs = d.config.sessionIdleDays * DAY_MS;
  let last = Math.max(Number(row.last_used_at), touched.get(hash) ?? 0);
  if (now - last > idleMs) {
    // The cached row's last use may be older than the database's: another node's touches leave
    // the cache's version alone. Before ending a session, its last use is read afresh.
    const current = await d.db
      .selectFrom('user_sessions')
      .select('last_used_at')
      .where('token_hash', '=', hash)
      .executeTakeFirst();
    if (!current) throw unauthorized('Unknown or ended session');
    last = Math.max(last, Number(current.last_used_at));
  }
  if (now - last > idleMs) {
    // D47: expired. Remove it, so its gateway connections close too (4004).
    await d.db.deleteFrom('user_sessions').where('token_hash', '=', hash).execute();
    d.people.sessionsChanged(d.db, row.id);
    touched.delete(hash);
    throw unauthorized('Session expired');
  }
  let didTouch = false;
  if (now - last >= SESSION_TOUCH_MS) {
    if (touched.size >= TOUCHED_MAX) touched.clear();
    touched.set(hash, now);
    await rawQuery(d.db, SESSION_TOUCH_SQL, [now, hash, now]);
    didTouch = true;
  }
  return {
    userId: row.id,
    name: row.name,
    isBot: false,
    botId: undefined,
    session: { id: row.sessionId, hash, touched: didTouch },
    // The touch above writes only the session's own row, which no access check reads.
    pinned,
  };
}

/**
 * Resolve a token to its principal: a bot token (JWT) or a human session token. `pin`: read the
 * cache's version once for this lookup and keep it on the principal (Principal.pinned: an HTTP
 * request on PostgreSQL, where each read is a round trip).
 *
 * A bot whose token and row are cached (every request after its first, on SQLite) is answered
 * without a promise: this runs before every bot request (issue 29, the send path's promises).
 * Failures may be thrown or rejected: callers await it.
 */
export function authenticate(
  d: Pick<Domain, 'db' | 'cache' | 'clock' | 'config' | 'people'>,
  codec: BotTokenCodec,
  token: string,
  pin = false,
): Principal | Promise<Principal> {
  if (pin && d.cache.enabled) {
    const now = d.cache.now();
    if (typeof now !== 'number') return now.then((v) => principalOf(d, codec, token, v));
    return principalOf(d, codec, token, now);
  }
  return principalOf(d, codec, token, undefined);
}

function principalOf(
  d: Pick<Domain, 'db' | 'cache' | 'clock' | 'config' | 'people'>,
  codec: BotTokenCodec,
  token: string,
  pinned: number | undefined,
): Principal | Promise<Principal> {
  if (token.startsWith(SESSION_PREFIX)) return personSession(d, token, pinned);
  const claims = codec.verify(token);
  return claims instanceof Promise
    ? claims.then((c) => botPrincipal(d, c, pinned))
    : botPrincipal(d, claims, pinned);
}

function botPrincipal(
  d: Pick<Domain, 'db' | 'cache'>,
  claims: BotTokenClaims | null,
  pinned: number | undefined,
): Principal | Promise<Principal> {
  if (!claims) throw unauthorized('Invalid token');
  // D8: an old generation (the token was reset) is refused from the very next request — the
  // reset writes `bots`, which drops the cached row (domain/derived-cache.ts).
  const row = d.cache.get(
    `bot:${claims.botId}`,
    () =>
      d.db
        .selectFrom('bots as b')
        .innerJoin('users as u', 'u.id', 'b.user_id')
        .select(['b.id', 'b.token_generation', 'u.id as userId', 'u.name'])
        .where('b.id', '=', claims.botId)
        .executeTakeFirst(),
    pinned,
  );
  const principal = (r: Awaited<typeof row>): Principal => {
    if (!r || r.token_generation !== claims.generation) throw unauthorized('Invalid token');
    return { userId: r.userId, name: r.name, isBot: true, botId: r.id, pinned };
  };
  return row instanceof Promise ? row.then(principal) : principal(row);
}
