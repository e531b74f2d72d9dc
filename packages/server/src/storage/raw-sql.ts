import { CompiledQuery, PostgresAdapter, type Compilable } from 'kysely';
import type { Db } from './db.js';
import { directIn, runnerIn } from './group-commit.js';

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
  const run = runnerIn(db);
  if (run) return run(text, params) as R[] | Promise<R[]>;
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

/**
 * The parameters of a multi-row statement: each row's values, one row after another. A loop,
 * not `rows.flat()` / `flatMap`: V8 runs those through a generic path that costs 12–20 µs for a
 * group commit's 33 rows against ~1 µs here (issue 29, bench/README.md) — on every send.
 */
export function flatRows<R>(
  rows: readonly R[],
  values: (row: R, out: unknown[]) => void,
): unknown[] {
  const out: unknown[] = [];
  for (const row of rows) values(row, out);
  return out;
}

const builtCache = new Map<string, string>();

/**
 * A query written with the query builder but compiled once per dialect and shape (`key`), then
 * run with `params` bound in the order the builder placed its values (issue 24: a reply's read
 * of the message it answers and the mention checks cost more to build and compile than SQLite
 * took to run them). `build` is called with placeholder values only the first time; a shape
 * whose value count differs from `params` is a programming error and throws.
 */
export async function builtOnce<R>(
  db: Db,
  key: string,
  build: () => Compilable<R>,
  params: readonly unknown[],
): Promise<R[]> {
  const k = `${isPostgres(db) ? 'pg' : 'sqlite'}:${key}`;
  let text = builtCache.get(k);
  if (text === undefined) {
    const compiled = build().compile();
    if (compiled.parameters.length !== params.length)
      throw new Error(
        `builtOnce(${key}): ${compiled.parameters.length} values, ${params.length} given`,
      );
    text = compiled.sql;
    if (builtCache.size > 1000) builtCache.clear();
    builtCache.set(k, text);
  }
  // SQLite's direct runner only (the text is in the dialect's own placeholders)
  const direct = directIn(db);
  if (direct) return direct(text, params) as R[];
  return (await db.executeQuery<R>(CompiledQuery.raw(text, [...params]))).rows;
}
