import type { Db } from '../../storage/db.js';
import { atGroupEnd } from '../../storage/group-commit.js';
import { isPostgres, rawQuery } from '../../storage/raw-sql.js';
import { searchText } from './search-text.js';

/**
 * D67: the search index's writes, in the transaction of the message's own write
 * (storage/migrations/0055-search.ts). On PostgreSQL the generated column and its GIN index
 * follow the row by themselves, so these do nothing there; on SQLite they write the FTS5 row
 * (deletes go by trigger).
 *
 * Under group commit the FTS5 row is written once the group's last member has run, just before
 * its COMMIT (storage/group-commit.ts atGroupEnd): FTS5 writes its pending data out at every
 * SAVEPOINT, and a row written inside each send's savepoint made one index segment per send —
 * and the merges of thousands of tiny segments (bench/README.md#search: 3× the CPU of a send).
 * Written then, a group's rows make one segment. Only a message that is still there is indexed
 * (its send may have been rolled back, or the message deleted later in the same group), and with
 * its text as it is at that moment (an edit rolled back to its savepoint leaves the old text).
 */
/** The row of message `id` as its text is now (none when it is gone or has no text). */
async function write(t: Db, id: number, replace: boolean): Promise<void> {
  if (replace) await rawQuery(t, 'delete from "messages_fts" where "rowid" = ?', [id]);
  const [row] = await rawQuery<{ content: string }>(
    t,
    'select "content" from "messages" where "id" = ?',
    [id],
  );
  if (row && row.content !== '')
    await rawQuery(t, 'insert into "messages_fts" ("rowid", "text") values (?, ?)', [
      id,
      searchText(row.content),
    ]);
}

/** A new message. */
export async function indexMessage(trx: Db, id: number, content: string): Promise<void> {
  if (isPostgres(trx) || content === '') return;
  if (!atGroupEnd(trx, (t) => write(t, id, false))) await write(trx, id, false);
}

/** An edit: the old text's row goes, the message's text as it is then comes. */
export async function reindexMessage(trx: Db, id: number): Promise<void> {
  if (isPostgres(trx)) return;
  if (!atGroupEnd(trx, (t) => write(t, id, true))) await write(trx, id, true);
}
