/**
 * What the CLI prints: JSON for scripts (`--json`, and every command that hands out a secret),
 * aligned tables for people. Results go to stdout; what the CLI tells the operator about itself
 * (the database it opened, errors) goes to stderr, so `--json` output stays parseable.
 */
export function printJson(v: unknown): void {
  process.stdout.write(JSON.stringify(v, null, 2) + '\n');
}

type Cell = string | number | boolean | null | undefined;

const text = (v: Cell): string => (v === null || v === undefined ? '-' : String(v));

/** Columns from the rows' keys (or the given ones), padded to the widest cell. */
export function printTable(rows: Array<Record<string, Cell>>, columns?: string[]): void {
  const cols = columns ?? Object.keys(rows[0] ?? {});
  if (rows.length === 0) {
    process.stdout.write('(none)\n');
    return;
  }
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => text(r[c]).length)));
  const line = (cells: string[]): string =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd() + '\n';
  process.stdout.write(line(cols.map((c) => c.toUpperCase())));
  for (const r of rows) process.stdout.write(line(cols.map((c) => text(r[c]))));
}

/** One object as `key  value` lines (nested values as JSON). */
export function printRecord(v: Record<string, unknown>): void {
  const width = Math.max(...Object.keys(v).map((k) => k.length));
  for (const [k, x] of Object.entries(v))
    process.stdout.write(
      `${k.padEnd(width)}  ${typeof x === 'object' && x !== null ? JSON.stringify(x) : text(x as Cell)}\n`,
    );
}
