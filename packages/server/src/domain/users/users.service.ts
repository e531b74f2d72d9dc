import { hashPassword } from '../auth/password.js';
import type { CreateUserBody, User } from '@parley/protocol';
import { forbidden, invalid, notFound } from '../../errors/app-error.js';
import { isUniqueViolation, type Db } from '../../storage/db.js';
import { requireAcceptablePassword } from '../auth/password-policy.js';
import type { Domain } from '../context.js';
import { newSessionId, newSessionToken, hashSessionToken } from '../auth/session-token.js';
import { avatarUrl } from '../views.js';

import { nameTaken, personNameKeys, requireFreeName } from './person-name.js';

export { nameTaken };

/** D46: what is kept of a client's User-Agent in the session list. */
const USER_AGENT_MAX = 256;

/**
 * D41/D46: a human user (bots get their user through createBot). Their name is their login,
 * unique among people ignoring case: a taken name → 409.
 */
export async function createUser(d: Domain, body: CreateUserBody): Promise<User> {
  await requireFreeName(d.db, body.name);
  // D70: the operator's people too get no common password, nor their name as one.
  if (body.password !== undefined) await requireAcceptablePassword(body.password, body.name);
  const passwordHash = body.password === undefined ? null : await hashPassword(body.password);
  return insertPerson(d, d.db, { name: body.name, avatar: body.avatar ?? null, passwordHash });
}

/**
 * The row of a new person, inside `trx` when given (register joins a guild in the same
 * transaction). The password is hashed before: never while a transaction holds the database.
 * A name taken (ignoring case) or confusable with another person's (D70) → 409.
 */
export async function insertPerson(
  d: Domain,
  trx: Db,
  p: { name: string; avatar: string | null; passwordHash: string | null },
): Promise<User> {
  const id = d.ids.next();
  await requireFreeName(trx, p.name);
  try {
    await trx
      .insertInto('users')
      .values({
        id,
        name: p.name,
        avatar: p.avatar,
        is_bot: 0,
        password_hash: p.passwordHash,
        bot_count: 0,
        created_at: d.clock.now(),
        ...personNameKeys(p.name),
      })
      .execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw nameTaken();
    throw err;
  }
  return { id, name: p.name, avatar: avatarUrl(d.urls, p.avatar), isBot: false };
}

/**
 * D41/D47: a new session of a human user: its bearer token (shown once; only its hash is kept)
 * and its public id.
 */
export async function createSession(
  d: Domain,
  userId: number,
  opts: { userAgent?: string | undefined; trx?: Db } = {},
): Promise<{ token: string; id: string }> {
  const db = opts.trx ?? d.db;
  const user = await db
    .selectFrom('users')
    .select(['id', 'is_bot', 'disabled'])
    .where('id', '=', userId)
    .executeTakeFirst();
  if (!user) throw notFound('user');
  if (user.is_bot) throw invalid('userId', 'is a bot user: bots authenticate with their bot token');
  // D52: a disabled person gets no session, not even through the operator.
  if (user.disabled === 1) throw forbidden('This user is disabled');
  const token = newSessionToken();
  const id = newSessionId();
  const now = d.clock.now();
  await db
    .insertInto('user_sessions')
    .values({
      token_hash: hashSessionToken(token),
      user_id: user.id,
      created_at: now,
      id,
      last_used_at: now,
      user_agent: [...(opts.userAgent ?? '')].slice(0, USER_AGENT_MAX).join(''),
    })
    .execute();
  return { token, id };
}
