import type { AdminUserDetail, User } from '@parley/protocol';
import { notFound } from '../../errors/app-error.js';
import type { Domain } from '../context.js';
import type { Actor, CallerActor, OperatorActor } from '../guilds/actor.js';
import { loadUser } from '../me/me.service.js';
import { userDetail } from './users.admin.js';

/**
 * Reading one user — one action, one function (issue 23: it existed twice, the person's checked
 * in me.service and the operator's unchecked in users.admin). It takes the actor and checks
 * access itself (D59's rule for every action):
 * - a person or a bot sees a user it shares a guild or a DM with (itself included), as
 *   `{id, name, avatar, isBot}`; anyone else is 404 exactly as an unknown id (D48: existence is
 *   not revealed);
 * - the operator passes the check explicitly and sees the detail of D52 (guilds, owned guilds,
 *   bots, sessions): `GET /admin/v1/users/:userId` and `parley admin users get`.
 */
export function getUser(d: Domain, actor: OperatorActor, userId: number): Promise<AdminUserDetail>;
export function getUser(d: Domain, actor: CallerActor, userId: number): Promise<User>;
export async function getUser(
  d: Domain,
  actor: Actor,
  userId: number,
): Promise<User | AdminUserDetail> {
  if (actor.kind === 'operator') return userDetail(d, userId);
  const me = actor.principal.userId;
  if (userId !== me) {
    const low = Math.min(userId, me);
    const high = Math.max(userId, me);
    const [guild, dm] = await Promise.all([
      d.db
        .selectFrom('members as a')
        .innerJoin('members as b', 'b.guild_id', 'a.guild_id')
        .select('a.guild_id')
        .where('a.user_id', '=', me)
        .where('b.user_id', '=', userId)
        .limit(1)
        .executeTakeFirst(),
      d.db
        .selectFrom('channels')
        .select('id')
        .where('dm_user_low', '=', low)
        .where('dm_user_high', '=', high)
        .executeTakeFirst(),
    ]);
    if (!guild && !dm) throw notFound('user');
  }
  const user = await loadUser(d, userId);
  if (!user) throw notFound('user');
  return user;
}
