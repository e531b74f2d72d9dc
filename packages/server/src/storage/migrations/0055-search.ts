import { sql, PostgresAdapter, type Kysely, type Migration } from 'kysely';
import { CJK_RANGES, searchText } from '../../domain/search/search-text.js';

/**
 * D67: full-text search of messages, kept in the write's transaction.
 *
 * SQLite: `messages_fts`, a contentless FTS5 table (the text lives once, in `messages`) whose
 * rowid is the message id and whose one column is `searchText(content)`
 * (domain/search/search-text.ts). A send and an edit write it in their own transaction
 * (domain/search/search-index.ts); every delete — one message, a purge, a channel or guild, the
 * retention pruner — reaches it through the trigger below (`contentless_delete=1` lets a row go
 * by its rowid alone), so no path that removes messages can leave a hit behind.
 *
 * PostgreSQL: `search_vector`, a stored generated column
 * `to_tsvector('simple', parley_search_text(content))` with a GIN index, where
 * `parley_search_text` is searchText's SQL twin (same punctuation, same CJK ranges, built from
 * the one list). The database computes it in every insert and update of the row itself.
 *
 * Existing messages are indexed here (the backfill).
 */
export const migration: Migration = {
  async up(db: Kysely<unknown>) {
    const pg = db.getExecutor().adapter instanceof PostgresAdapter;
    if (pg) {
      await sql.raw(pgSearchTextFunction()).execute(db);
      // Stored, not only indexed: GIN keeps no word positions, so a phrase (and every hit of
      // a common word ordered by id) is checked against the row's vector — read here, instead
      // of running the regular expressions and the parser again for each candidate row.
      await sql`alter table messages add column search_vector tsvector
        generated always as (to_tsvector('simple', parley_search_text(content))) stored`.execute(
        db,
      );
      await sql`create index messages_search on messages using gin (search_vector)`.execute(db);
      return;
    }
    await sql`create virtual table messages_fts using fts5(
      text, content = '', contentless_delete = 1, tokenize = 'unicode61 remove_diacritics 0')`.execute(
      db,
    );
    await sql`create trigger messages_fts_delete after delete on messages begin
      delete from messages_fts where rowid = old.id;
    end`.execute(db);
    // The backfill, in id order and in batches (a big database is not read into memory at once).
    let after = 0;
    for (;;) {
      const rows = (
        await sql<{ id: number; content: string }>`select id, content from messages
          where id > ${after} order by id limit 2000`.execute(db)
      ).rows;
      if (rows.length === 0) break;
      for (const r of rows)
        await sql`insert into messages_fts (rowid, text) values (${r.id}, ${searchText(r.content)})`.execute(
          db,
        );
      after = Number(rows[rows.length - 1]!.id);
    }
  },
};

/** PostgreSQL's `parley_search_text(text)`: searchText in SQL (immutable, for the index). */
export function pgSearchTextFunction(): string {
  const u = (n: number): string =>
    n > 0xffff ? `\\U${n.toString(16).padStart(8, '0')}` : `\\u${n.toString(16).padStart(4, '0')}`;
  const cjk = CJK_RANGES.map(([a, b]) => `${u(a)}-${u(b)}`).join('');
  return `create or replace function parley_search_text(t text) returns text
    language sql immutable strict parallel safe as $f$
      select regexp_replace(regexp_replace(t, '[!-/:-@[-\`{-~]', ' ', 'g'), '([${cjk}])', ' \\1 ', 'g')
    $f$`;
}
