import { AppError } from '../../errors/app-error.js';
import type { Domain } from '../context.js';
import type { BotTokenCodec } from './bot-token.js';
import type { Principal } from './principal.js';
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

/** Resolve a token to its principal: a bot token (JWT) or a human session token. */
export async function authenticate(
  d: Pick<Domain, 'db' | 'cache'>,
  codec: BotTokenCodec,
  token: string,
): Promise<Principal> {
  if (token.startsWith(SESSION_PREFIX)) {
    const hash = hashSessionToken(token);
    const row = await d.cache.get(`session:${hash}`, () =>
      d.db
        .selectFrom('user_sessions as s')
        .innerJoin('users as u', 'u.id', 's.user_id')
        .select(['u.id', 'u.name', 'u.is_bot'])
        .where('s.token_hash', '=', hash)
        .executeTakeFirst(),
    );
    if (!row || row.is_bot) throw unauthorized('Unknown session token');
    return { userId: row.id, name: row.name, isBot: false, botId: undefined };
  }
  const claims = await codec.verify(token);
  if (!claims) throw unauthorized('Invalid token');
  // D8: an old generation (the token was reset) is refused from the very next request — the
  // reset writes `bots`, which drops the cached row (domain/derived-cache.ts).
  const row = await d.cache.get(`bot:${claims.botId}`, () =>
    d.db
      .selectFrom('bots as b')
      .innerJoin('users as u', 'u.id', 'b.user_id')
      .select(['b.id', 'b.token_generation', 'u.id as userId', 'u.name'])
      .where('b.id', '=', claims.botId)
      .executeTakeFirst(),
  );
  if (!row || row.token_generation !== claims.generation) throw unauthorized('Invalid token');
  return { userId: row.userId, name: row.name, isBot: true, botId: row.id };
}
