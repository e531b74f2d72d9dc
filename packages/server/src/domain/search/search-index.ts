import type { Db } from '../../storage/db.js';
import { atGroupEnd } from '../../storage/group-commit.js';
import { isPostgres, rawQuery, tuples } from '../../storage/raw-sql.js';

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
/** What a running group has queued for its end: the message ids to index, and those to replace. */
interface Pending {
  ids: Set<number>;
  replace: Set<number>;
}
const pendingByGroup = new WeakMap<object, Pending>();
/** ids per statement (SQLite's limit on parameters is far above; a group holds at most 32 sends) */
const CHUNK = 200;

/**
 * The rows of messages `ids` as their text is now (none for a message that is gone or has no
 * text), `replace` ones first removed — in two statements for the whole list (issue 29's
 * multi-row statements: a statement per message cost more than the index itself). The text is
 * read and normalized inside SQLite (`parley_search_text`, storage/db.ts: `searchText` itself,
 * as PostgreSQL's index has its SQL twin), so the rows never come out to be sent back in.
 */
async function write(t: Db, ids: readonly number[], replace: readonly number[]): Promise<void> {
  for (let i = 0; i < replace.length; i += CHUNK) {
    const part = replace.slice(i, i + CHUNK);
    await rawQuery(
      t,
      `delete from "messages_fts" where "rowid" in (${part.map(() => '?').join(', ')})`,
      part,
    );
  }
  for (let i = 0; i < ids.length; i += CHUNK) {
    const part = ids.slice(i, i + CHUNK);
    await rawQuery(
      t,
      'insert into "messages_fts" ("rowid", "text") select "id", parley_search_text("content") ' +
        `from "messages" where "id" in (${tuples(part.length, '?')}) and "content" <> ''`,
      part,
    );
  }
}

/** Queue message `id` for the group's end (one batch per group), or write it now outside one. */
function queue(trx: Db, id: number, replace: boolean): void | Promise<void> {
  const key = trx.getExecutor();
  let pending = pendingByGroup.get(key);
  if (!pending) {
    const fresh: Pending = { ids: new Set(), replace: new Set() };
    const queued = atGroupEnd(trx, async (t) => {
      pendingByGroup.delete(key);
      await write(t, [...fresh.ids], [...fresh.replace]);
    });
    if (!queued) return write(trx, [id], replace ? [id] : []);
    pendingByGroup.set(key, fresh);
    pending = fresh;
  }
  pending.ids.add(id);
  if (replace) pending.replace.add(id);
}

/** A new message. In a group commit it is queued for the group's end: no promise (issue 29). */
export function indexMessage(trx: Db, id: number, content: string): void | Promise<void> {
  if (isPostgres(trx) || content === '') return;
  return queue(trx, id, false);
}

/** An edit: the old text's row goes, the message's text as it is then comes. */
export async function reindexMessage(trx: Db, id: number): Promise<void> {
  if (isPostgres(trx)) return;
  await queue(trx, id, true);
}
