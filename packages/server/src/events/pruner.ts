import type { Db } from '../storage/db.js';
import { pruneLog } from './log.js';

/**
 * Old rows of the event log are deleted once no resumable session can need them. A session
 * stays resumable for the window after its connection drops (D31), and what it may need is what
 * it had not processed at that moment — events sent shortly before the drop. Entries are kept for
 * twice the window: anything a client received less than one window before its connection dropped
 * is still there when it resumes at the very end of the window. Ended sessions and sessions past
 * their window are deleted with them.
 */
export async function pruneEvents(db: Db, now: number, resumeWindowMs: number): Promise<void> {
  await pruneLog(db, now - 2 * resumeWindowMs);
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
