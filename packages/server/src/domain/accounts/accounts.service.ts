import { hash, verify } from '@node-rs/argon2';
import type { ChangePasswordBody, LoginBody, RegisterBody, User } from '@parley/protocol';
import { AppError, forbidden, notFound } from '../../errors/app-error.js';
import { nameKey } from '../../storage/name-key.js';
import { addressKey } from '../../ratelimit/policy.js';
import { unauthorized } from '../auth/authenticate.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';
import { consumeInvite } from '../invites/consume.js';
import { joinGuild } from '../members/members.service.js';
import { requireAcceptablePassword } from '../auth/password-policy.js';
import { requireFreeName } from '../users/person-name.js';
import { createSession, insertPerson } from '../users/users.service.js';
import { avatarUrl } from '../views.js';

/** D46: what register and login answer (the route also sets the session cookie, D47). */
export interface SignedIn {
  user: User;
  token: string;
}

/** D46: the lockout — this many failures for one name within the window lock that name. */
export const LOCKOUT_FAILURES = 5;
export const LOCKOUT_WINDOW_MS = 15 * 60_000;

/** D46: one message for a wrong name and a wrong password. */
const WRONG_LOGIN = 'Wrong name or password';

/**
 * D69: with PARLEY_PASSWORD_LOGIN=false, password login and registration answer 403: people
 * sign in with the OpenID provider.
 */
function requirePasswordLogin(d: Domain): void {
  if (!d.config.passwordLogin)
    throw forbidden(
      `Password login is off on this server: sign in with ${d.config.oidcName} instead`,
    );
}

/** Compared against when the name is unknown, so both failures cost the same time. */
let dummyHash: Promise<string> | undefined;

/**
 * D46: register a person. `PARLEY_REGISTRATION`: `closed` → 403; `invite` → an invite is
 * required (missing → 403; unknown, used up or expired → 404) and joins its guild; `open` → an
 * invite is optional (and joins its guild when given). The new person, the invite's use, the
 * join (GUILD_MEMBER_ADD, GUILD_CREATE) and the first session commit together.
 */
export async function register(
  d: Domain,
  body: RegisterBody,
  userAgent: string | undefined,
): Promise<SignedIn> {
  requirePasswordLogin(d);
  const mode = d.config.registration;
  if (mode === 'closed')
    throw forbidden('Registration is closed on this server: ask its operator for an account');
  if (mode === 'invite' && body.invite === undefined)
    throw forbidden('Registration on this server needs an invite code');
  // Cheap refusals first: hashing a password costs real CPU (the transaction checks again).
  // D70: the invite before the name — without a valid invite nobody learns which names exist.
  if (body.invite !== undefined) {
    const invite = await d.db
      .selectFrom('invites')
      .select(['max_uses', 'uses', 'expires_at'])
      .where('code', '=', body.invite)
      .executeTakeFirst();
    const now = d.clock.now();
    if (
      !invite ||
      (invite.max_uses !== null && invite.uses >= invite.max_uses) ||
      (invite.expires_at !== null && Number(invite.expires_at) <= now)
    )
      throw notFound('invite (or it is used up or expired)');
  }
  await requireAcceptablePassword(body.password, body.name);
  await requireFreeName(d.db, body.name);
  const passwordHash = await hash(body.password);
  return d.db.transaction().execute(async (trx) => {
    const user = await insertPerson(d, trx, { name: body.name, avatar: null, passwordHash });
    if (body.invite !== undefined) {
      const guildId = await consumeInvite(trx, body.invite, d.clock.now());
      await joinGuild(trx, d, guildId, user.id);
    }
    const { token } = await createSession(d, user.id, { userAgent, trx });
    return { user, token };
  });
}

/**
 * D46/D70: log in by name (ignoring case) and password. Wrong name or password → 401, one message
 * for both. After LOCKOUT_FAILURES failures for one name from one client address within
 * LOCKOUT_WINDOW_MS, every attempt for that name from that address → 429 with `retryAfter` until
 * the window passes — a correct password included. The lock is per name AND address (D70 revises
 * D46: a stranger's guesses lock only the stranger out, never the person everywhere); the
 * address's key is its rate-limit key (one IPv6 /64 is one client). A disabled person → 403.
 *
 * Each attempt is written as a failure before the password is checked, and counts the attempts
 * written before it (ids grow with time, D3): of parallel guesses only the first LOCKOUT_FAILURES
 * are checked, however many arrive at once. A success removes the name's failures from that
 * address; an attempt refused by the lock removes its own row (it does not extend the lock).
 */
export async function login(
  d: Domain,
  body: LoginBody,
  userAgent: string | undefined,
  clientIp: string,
): Promise<SignedIn> {
  requirePasswordLogin(d);
  const key = nameKey(body.name.trim());
  const address = addressKey(clientIp);
  const now = d.clock.now();
  const since = now - LOCKOUT_WINDOW_MS;
  await d.db.deleteFrom('login_failures').where('at', '<=', since).execute();
  const attemptId = d.ids.next();
  await d.db
    .insertInto('login_failures')
    .values({ name_key: key, at: now, attempt_id: attemptId, address })
    .execute();
  const others = (
    await d.db
      .selectFrom('login_failures')
      .select(['at', 'attempt_id'])
      .where('name_key', '=', key)
      .where('address', '=', address)
      .where('at', '>', since)
      .orderBy('at', 'desc')
      .execute()
  ).filter((r) => Number(r.attempt_id ?? 0) < attemptId); // the attempts before this one
  const dropOwn = () =>
    d.db
      .deleteFrom('login_failures')
      .where('name_key', '=', key)
      .where('attempt_id', '=', attemptId)
      .execute();
  const oldestCounted = others[LOCKOUT_FAILURES - 1];
  if (oldestCounted !== undefined) {
    await dropOwn();
    // Unlocked when fewer than LOCKOUT_FAILURES remain in the window: when this one leaves it.
    const retryAfter = Math.max(0.001, (Number(oldestCounted.at) + LOCKOUT_WINDOW_MS - now) / 1000);
    throw new AppError(
      'RATE_LIMIT_EXCEEDED',
      `Too many failed logins for this name from your address; retry after ${Math.ceil(retryAfter)} s`,
      { retryAfter, headers: { 'retry-after': String(Math.ceil(retryAfter)) } },
    );
  }
  const user = await d.db
    .selectFrom('users')
    .select(['id', 'name', 'avatar', 'password_hash', 'disabled'])
    .where('name_key', '=', key)
    .where('is_bot', '=', 0)
    .executeTakeFirst();
  if (!user?.password_hash) {
    dummyHash ??= hash('parley: no such person');
    await verify(await dummyHash, body.password).catch(() => false);
    throw unauthorized(WRONG_LOGIN);
  }
  if (!(await verify(user.password_hash, body.password).catch(() => false)))
    throw unauthorized(WRONG_LOGIN);
  if (user.disabled) {
    await dropOwn();
    throw forbidden('This account is disabled');
  }
  await d.db
    .deleteFrom('login_failures')
    .where('name_key', '=', key)
    .where('address', '=', address)
    .execute();
  const { token } = await createSession(d, user.id, { userAgent });
  return {
    user: { id: user.id, name: user.name, avatar: avatarUrl(d.urls, user.avatar), isBot: false },
    token,
  };
}

/** D47: end the session this request came with. */
export async function logout(d: Domain, p: Principal): Promise<void> {
  if (!p.session) throw unauthorized();
  await d.db.deleteFrom('user_sessions').where('token_hash', '=', p.session.hash).execute();
  d.people.sessionsChanged(d.db, p.userId);
}

/**
 * D47: change the password (the current one is asked again: a wrong one → 403) and end every
 * other session of the person, whose gateway connections then close with 4004.
 */
export async function changePassword(
  d: Domain,
  p: Principal,
  body: ChangePasswordBody,
): Promise<void> {
  if (!p.session) throw unauthorized();
  const row = await d.db
    .selectFrom('users')
    .select('password_hash')
    .where('id', '=', p.userId)
    .executeTakeFirst();
  const ok =
    row?.password_hash != null &&
    (await verify(row.password_hash, body.current).catch(() => false));
  if (!ok) throw forbidden('The current password is wrong');
  await requireAcceptablePassword(body.password, p.name);
  const passwordHash = await hash(body.password);
  const current = p.session.hash;
  await d.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('users')
      .set({ password_hash: passwordHash })
      .where('id', '=', p.userId)
      .execute();
    await trx
      .deleteFrom('user_sessions')
      .where('user_id', '=', p.userId)
      .where('token_hash', '!=', current)
      .execute();
    d.people.sessionsChanged(trx, p.userId);
  });
}
