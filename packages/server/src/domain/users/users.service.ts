import { hash } from '@node-rs/argon2';
import type { CreateUserBody, User } from '@parley/protocol';
import { invalid, notFound } from '../../errors/app-error.js';
import type { Domain } from '../context.js';
import { newSessionId, newSessionToken, hashSessionToken } from '../auth/session-token.js';
import { avatarUrl } from '../views.js';

/** D41: a human user (bots get their user through createBot). */
export async function createUser(d: Domain, body: CreateUserBody): Promise<User> {
  const id = d.ids.next();
  const passwordHash = body.password === undefined ? null : await hash(body.password);
  await d.db
    .insertInto('users')
    .values({
      id,
      name: body.name,
      avatar: body.avatar ?? null,
      is_bot: 0,
      password_hash: passwordHash,
      bot_count: 0,
      created_at: d.clock.now(),
    })
    .execute();
  return { id, name: body.name, avatar: avatarUrl(d.urls, body.avatar ?? null), isBot: false };
}

/** D41: a session token with which a human user calls /api/v1. */
export async function createSession(d: Domain, userId: number): Promise<{ token: string }> {
  const user = await d.db
    .selectFrom('users')
    .select(['id', 'is_bot'])
    .where('id', '=', userId)
    .executeTakeFirst();
  if (!user) throw notFound('user');
  if (user.is_bot) throw invalid('userId', 'is a bot user: bots authenticate with their bot token');
  const token = newSessionToken();
  const now = d.clock.now();
  await d.db
    .insertInto('user_sessions')
    .values({
      token_hash: hashSessionToken(token),
      user_id: user.id,
      created_at: now,
      id: newSessionId(),
      last_used_at: now,
      user_agent: '',
    })
    .execute();
  return { token };
}
