import type { SessionList } from '@parley/protocol';
import { notFound } from '../../errors/app-error.js';
import { iso } from '../../ids/clock.js';
import type { Principal } from '../auth/principal.js';
import type { Domain } from '../context.js';

/** D47: the person's sessions, newest first; `current` marks the one this request came with. */
export async function listSessions(d: Domain, p: Principal): Promise<SessionList> {
  const rows = await d.db
    .selectFrom('user_sessions')
    .select(['id', 'created_at', 'last_used_at', 'user_agent'])
    .where('user_id', '=', p.userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'asc')
    .execute();
  return {
    sessions: rows.map((r) => ({
      id: r.id,
      createdAt: iso(Number(r.created_at)),
      lastUsedAt: iso(Number(r.last_used_at)),
      userAgent: r.user_agent,
      current: r.id === p.session?.id,
    })),
  };
}

/**
 * D47: end one of the person's own sessions (its token gets 401 at once, its gateway connections
 * close with 4004). Another person's session, or none, → 404.
 */
export async function endSession(d: Domain, p: Principal, sessionId: string): Promise<void> {
  const res = await d.db
    .deleteFrom('user_sessions')
    .where('id', '=', sessionId)
    .where('user_id', '=', p.userId)
    .executeTakeFirst();
  if (res.numDeletedRows === 0n) throw notFound('session');
  d.people.sessionsChanged(d.db, p.userId);
}
