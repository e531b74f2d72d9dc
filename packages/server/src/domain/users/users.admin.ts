import { hashPassword } from '../auth/password.js';
import type { AdminUser, AdminUserDetail, AdminUserPatch, Page } from '@parley/protocol';
import { conflict, invalid, notFound } from '../../errors/app-error.js';
import { iso } from '../../ids/clock.js';
import { isUniqueViolation, type Db } from '../../storage/db.js';
import { requireAcceptablePassword } from '../auth/password-policy.js';
import { personNameKeys, requireFreeName } from './person-name.js';
import { nameContains, toPage, type PageQuery } from '../admin/paging.js';
import { purgeBot, purgeGuild, purgeUserRows } from '../admin/purge.js';
import type { Domain } from '../context.js';
import { avatarUrl } from '../views.js';

/** D52: the operator's view of users (people and bot users). */
interface UserRow {
  id: number;
  name: string;
  avatar: string | null;
  is_bot: number;
  disabled: number;
  created_at: number;
}

const columns = ['id', 'name', 'avatar', 'is_bot', 'disabled', 'created_at'] as const;

const view = (d: Domain, r: UserRow): AdminUser => ({
  id: r.id,
  name: r.name,
  avatar: avatarUrl(d.urls, r.avatar),
  isBot: r.is_bot === 1,
  disabled: r.disabled === 1,
  createdAt: iso(r.created_at),
});

export async function listUsers(d: Domain, q: PageQuery): Promise<Page<AdminUser>> {
  let query = d.db.selectFrom('users').select(columns);
  if (q.after !== undefined) query = query.where('id', '>', q.after);
  if (q.q !== undefined && q.q !== '') query = query.where(nameContains('name', q.q));
  const rows = await query
    .orderBy('id', 'asc')
    .limit(q.limit + 1)
    .execute();
  return toPage(rows, q.limit, (r) => view(d, r));
}

async function loadUser(db: Db, userId: number): Promise<UserRow> {
  const row = await db
    .selectFrom('users')
    .select(columns)
    .where('id', '=', userId)
    .executeTakeFirst();
  if (!row) throw notFound('user');
  return row;
}

/** The operator's view of one user (read through getUser, get-user.ts). */
export async function userDetail(d: Domain, userId: number): Promise<AdminUserDetail> {
  const row = await loadUser(d.db, userId);
  const [guilds, owned, bots, sessions] = await Promise.all([
    d.db
      .selectFrom('members')
      .select('guild_id')
      .where('user_id', '=', userId)
      .orderBy('guild_id')
      .execute(),
    d.db.selectFrom('guilds').select('id').where('owner_id', '=', userId).orderBy('id').execute(),
    d.db.selectFrom('bots').select('id').where('owner_id', '=', userId).orderBy('id').execute(),
    d.db
      .selectFrom('user_sessions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('user_id', '=', userId)
      .executeTakeFirstOrThrow(),
  ]);
  return {
    ...view(d, row),
    guilds: guilds.map((g) => g.guild_id),
    ownedGuilds: owned.map((g) => g.id),
    bots: bots.map((b) => b.id),
    sessions: Number(sessions.n),
  };
}

/**
 * PATCH: name, password, avatar, disabled. A new password or disabling ends every session of
 * the person (D47, D52).
 */
export async function updateUser(
  d: Domain,
  userId: number,
  body: AdminUserPatch,
): Promise<AdminUserDetail> {
  const row = await loadUser(d.db, userId);
  if (row.is_bot === 1 && (body.password !== undefined || body.disabled !== undefined))
    throw invalid('userId', 'is a bot user: change its bot instead (/admin/v1/bots)');
  const set: {
    name?: string;
    name_key?: string;
    skeleton_key?: string;
    avatar?: string | null;
    password_hash?: string;
    disabled?: number;
  } = {};
  if (body.name !== undefined) {
    set.name = body.name;
    // D46/D70: a person's name is their login, unique ignoring case and not confusable with
    // another person's (bot users' names are not logins).
    if (row.is_bot === 0) {
      await requireFreeName(d.db, body.name, userId);
      Object.assign(set, personNameKeys(body.name));
    }
  }
  if (body.password !== undefined)
    await requireAcceptablePassword(body.password, body.name ?? row.name);
  if (body.disabled !== undefined) set.disabled = body.disabled ? 1 : 0;
  if (body.avatar !== undefined) set.avatar = body.avatar;
  if (body.password !== undefined) set.password_hash = await hashPassword(body.password);
  try {
    await d.db.transaction().execute(async (trx) => {
      if (Object.keys(set).length > 0)
        await trx.updateTable('users').set(set).where('id', '=', userId).execute();
      // D47/D52: a new password or disabling ends every session; connections close with 4004.
      if (body.password !== undefined || body.disabled === true)
        await endSessionsIn(d, trx, userId);
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw conflict('That name is taken (names ignore case, D46)');
    throw err;
  }
  return userDetail(d, userId);
}

async function endSessionsIn(d: Domain, trx: Db, userId: number): Promise<void> {
  await trx.deleteFrom('user_sessions').where('user_id', '=', userId).execute();
  // After commit every node closes the gateway connections of the ended sessions (4004).
  d.people.sessionsChanged(trx, userId);
}

/** DELETE /admin/v1/users/:userId/sessions: every session of the person ends (D47: 401 next). */
export async function endUserSessions(d: Domain, userId: number): Promise<void> {
  await loadUser(d.db, userId);
  await d.db.transaction().execute((trx) => endSessionsIn(d, trx, userId));
}

/**
 * D52: a person and everything that hangs on them, in one transaction: the guilds they own (each
 * bot in them gets its GUILD_MEMBER_REMOVE), the bots they own (gone as DELETE /bots/:id), their
 * memberships (GUILD_MEMBER_REMOVE), messages (MESSAGE_DELETE), DMs, files and sessions.
 * A bot user is deleted through its bot.
 */
export async function deleteUser(d: Domain, userId: number): Promise<void> {
  const row = await loadUser(d.db, userId);
  if (row.is_bot === 1)
    throw invalid('userId', 'is a bot user: delete its bot instead (/admin/v1/bots)');
  await d.db.transaction().execute(async (trx) => {
    const guilds = await trx
      .selectFrom('guilds')
      .select('id')
      .where('owner_id', '=', userId)
      .orderBy('id')
      .execute();
    for (const g of guilds) await purgeGuild(d, trx, g.id);
    const bots = await trx
      .selectFrom('bots')
      .select('id')
      .where('owner_id', '=', userId)
      .orderBy('id')
      .execute();
    for (const b of bots) await purgeBot(d, trx, b.id);
    await purgeUserRows(d, trx, userId);
    d.people.sessionsChanged(trx, userId);
    const res = await trx.deleteFrom('users').where('id', '=', userId).executeTakeFirst();
    if (res.numDeletedRows === 0n) throw notFound('user');
  });
}
