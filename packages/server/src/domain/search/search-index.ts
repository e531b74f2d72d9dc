import type { Db } from '../../storage/db.js';
import { isPostgres, rawQuery } from '../../storage/raw-sql.js';
import { searchText } from './search-text.js';

/**
 * D67: the search index's writes, inside the transaction of the message's own write
 * (storage/migrations/0055-search.ts). On PostgreSQL the generated column and its GIN index
 * follow the row by themselves, so these do nothing there; on SQLite they write the FTS5 row (deletes go by trigger).
 */
export async function indexMessage(trx: Db, id: number, content: string): Promise<void> {
  if (isPostgres(trx) || content === '') return;
  await rawQuery(trx, 'insert into "messages_fts" ("rowid", "text") values (?, ?)', [
    id,
    searchText(content),
  ]);
}

/** An edit: the old text's row goes, the new one comes. */
export async function reindexMessage(trx: Db, id: number, content: string): Promise<void> {
  if (isPostgres(trx)) return;
  await rawQuery(trx, 'delete from "messages_fts" where "rowid" = ?', [id]);
  await indexMessage(trx, id, content);
}
