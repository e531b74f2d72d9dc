import type { ExpressionBuilder } from 'kysely';
import { sql } from 'kysely';
import type { Page } from '@parley/protocol';

/** D52: operator lists are id-ascending pages: `after` is an id, `limit` 1–1000. */
export interface PageQuery {
  after?: number | undefined;
  limit: number;
  /** name contains this text, case-insensitively */
  q?: string | undefined;
}

/**
 * `q` as a LIKE pattern: `%`, `_` and the escape character itself are matched literally
 * (a search for `50%` finds "50%" and not "500"). Compared lower-cased on both dialects
 * (SQLite's LIKE ignores ASCII case by itself, PostgreSQL's does not; lower() on both sides
 * makes them agree; SQLite folds ASCII only).
 */
export function containsPattern(q: string): string {
  return `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** `lower(<column>) LIKE lower(pattern) ESCAPE '\'` for a `q` filter. */
export const nameContains =
  (column: string, q: string) =>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- used on several tables
  (eb: ExpressionBuilder<any, any>) =>
    eb(sql`lower(${sql.ref(column)})`, 'like', sql<string>`${containsPattern(q)} escape '\\'`);

/** Rows fetched with `limit + 1`: the page and whether more follow. */
export function toPage<R, T>(rows: R[], limit: number, view: (r: R) => T): Page<T> {
  return { items: rows.slice(0, limit).map(view), hasMore: rows.length > limit };
}
