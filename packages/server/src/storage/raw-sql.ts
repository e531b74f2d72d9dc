import { CompiledQuery, PostgresAdapter } from 'kysely';
import type { Db } from './db.js';

/**
 * Fixed SQL for the few statements every message send runs: the message row, its quota count,
 * its event and the per-recipient stream rows (events/stream.ts). Building them through Kysely's
 * query builder cost more CPU than SQLite took to run them (bench/README.md, send profile: value
 * parsing, node freezing and compiling — for 5 × recipients parameters on the stream rows).
 * Their text is constant (or depends only on the row count, built once per count) and the
 * parameters are bound as they are: still parameterized SQL, never values in the text.
 * Everything else stays on the query builder. Written with `?`; PostgreSQL gets `$1…$n`.
 */
export async function rawQuery<R>(db: Db, text: string, params: readonly unknown[]): Promise<R[]> {
  const dialectText = isPostgres(db) ? dollars(text) : text;
  return (await db.executeQuery<R>(CompiledQuery.raw(dialectText, [...params]))).rows;
}

/** The handle talks to PostgreSQL (else SQLite). */
export const isPostgres = (db: Db): boolean => db.getExecutor().adapter instanceof PostgresAdapter;

const dollarCache = new Map<string, string>();

/** `?` placeholders as PostgreSQL's `$1…$n` (cached by text). */
export function dollars(text: string): string {
  let out = dollarCache.get(text);
  if (out === undefined) {
    let n = 0;
    out = text.replace(/\?/g, () => `$${++n}`);
    if (dollarCache.size > 1000) dollarCache.clear();
    dollarCache.set(text, out);
  }
  return out;
}

/** `(?, ?), (?, ?), …`: `count` tuples of `width` placeholders, built once per shape. */
export function tuples(count: number, tuple: string): string {
  const key = `${count}:${tuple}`;
  let out = tupleCache.get(key);
  if (out === undefined) {
    out = Array.from({ length: count }, () => tuple).join(', ');
    if (tupleCache.size > 1000) tupleCache.clear();
    tupleCache.set(key, out);
  }
  return out;
}

const tupleCache = new Map<string, string>();
