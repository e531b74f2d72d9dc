import type { Db } from '../storage/db.js';

/**
 * Old stream entries and events are deleted once no resumable session can need them. A session
 * stays resumable for the window after its connection drops (D31), and what it may need is what
 * it had not processed at that moment — events sent shortly before the drop. Entries are kept for
 * twice the window: anything a client received less than one window before its connection dropped
 * is still there when it resumes at the very end of the window. Ended sessions and sessions past
 * their window are deleted with them.
 */
export async function pruneEvents(db: Db, now: number, resumeWindowMs: number): Promise<void> {
  const cutoff = now - 2 * resumeWindowMs;
  await db.deleteFrom('bot_events').where('created_at', '<', cutoff).execute();
  await db.deleteFrom('events').where('created_at', '<', cutoff).execute();
  await db
    .deleteFrom('gateway_sessions')
    .where((eb) =>
      eb.or([
        eb('ended', '=', 1),
        eb.and([eb('connected', '=', 0), eb('disconnected_at', '<', now - resumeWindowMs)]),
      ]),
    )
    .execute();
}
