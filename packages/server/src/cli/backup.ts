import { chmodSync, copyFileSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.js';
import { liveServerPid, sqliteFile } from '../storage/server-lock.js';
import { CliError, describeDatabase, requireExistingDatabase } from './open.js';

/**
 * D53 backups of the SQLite database.
 *
 * `parley backup <file>` uses SQLite's online backup (better-sqlite3's `backup()`): the pages are
 * copied inside one read transaction (the whole database in one step after the first), so the
 * copy is the database as of one commit even while the server keeps writing (WAL: readers and
 * the writer do not block each other). Written to a temporary file, checked, then renamed.
 *
 * `parley restore <file>` refuses while a server uses the database (its lock file names a live
 * process), checks the backup, keeps a copy of the database it replaces, and swaps the backup in
 * atomically, mode 0600, removing the old WAL.
 */
function sqliteOnly(config: Config, what: string): string {
  const file = sqliteFile(config.databaseUrl);
  if (file === undefined)
    throw new CliError(
      `${what} works on SQLite; this is ${describeDatabase(config)}: use pg_dump / pg_restore`,
    );
  return path.resolve(file);
}

async function integrity(file: string): Promise<void> {
  const { default: SQLite } = await import('better-sqlite3');
  const db = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    const r = db.pragma('integrity_check', { simple: true });
    if (r !== 'ok') throw new CliError(`${file} fails SQLite's integrity check: ${String(r)}`);
    const t = db
      .prepare("select count(*) as n from sqlite_master where type = 'table' and name = 'messages'")
      .get() as { n: number };
    if (t.n !== 1) throw new CliError(`${file} is not a Parley database`);
  } finally {
    db.close();
  }
}

export async function backup(config: Config, target: string): Promise<void> {
  const file = sqliteOnly(config, 'parley backup');
  requireExistingDatabase(config);
  const out = path.resolve(target);
  if (existsSync(out)) throw new CliError(`${out} exists; choose a new file name`);
  if (!existsSync(path.dirname(out)))
    throw new CliError(`directory ${path.dirname(out)} does not exist`);
  process.stderr.write(`parley: database ${describeDatabase(config)}\n`);
  const { default: SQLite } = await import('better-sqlite3');
  const db = new SQLite(file, { fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  const tmp = `${out}.${process.pid}.tmp`;
  try {
    const result = await db.backup(tmp, { progress: () => 0x7fffffff });
    chmodSync(tmp, 0o600);
    await integrity(tmp);
    renameSync(tmp, out);
    process.stdout.write(
      `backup written: ${out} (${result.totalPages} pages, ${statSync(out).size} bytes)\n`,
    );
  } finally {
    db.close();
    rmSync(tmp, { force: true });
  }
}

/**
 * A copy of the database about to be replaced, beside it: `<file>.before-restore-<time>`, 0600.
 * VACUUM INTO writes one file that includes what its WAL still held (a server that stopped
 * without a final checkpoint left commits there).
 */
async function keepCopy(file: string): Promise<string> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const kept = `${file}.before-restore-${stamp}`;
  const { default: SQLite } = await import('better-sqlite3');
  const db = new SQLite(file, { fileMustExist: true });
  try {
    db.prepare('vacuum into ?').run(kept);
  } finally {
    db.close();
  }
  chmodSync(kept, 0o600);
  return kept;
}

export async function restore(config: Config, source: string): Promise<void> {
  const file = sqliteOnly(config, 'parley restore');
  const src = path.resolve(source);
  if (!existsSync(src)) throw new CliError(`no backup at ${src}`);
  const pid = liveServerPid(config.databaseUrl);
  if (pid !== undefined)
    throw new CliError(`a server (process ${pid}) is using ${file}; stop it first, then restore`);
  await integrity(src);
  if (!existsSync(path.dirname(file)))
    throw new CliError(
      `data directory ${path.dirname(file)} does not exist; create it or point elsewhere with --data-dir <dir>, PARLEY_DATA_DIR or PARLEY_DATABASE_URL`,
    );
  process.stderr.write(`parley: database ${describeDatabase(config)}\n`);
  // Issue 28: what is replaced is kept, so a restore of the wrong file can be undone.
  const kept = existsSync(file) ? await keepCopy(file) : undefined;
  const tmp = `${file}.restore-${process.pid}.tmp`;
  copyFileSync(src, tmp);
  chmodSync(tmp, 0o600);
  // The old database's WAL and shared memory belong to the old file: they must not be applied
  // to the restored one.
  for (const extra of ['-wal', '-shm']) rmSync(`${file}${extra}`, { force: true });
  renameSync(tmp, file);
  process.stdout.write(
    `restored ${file} from ${src}\n` +
      (kept
        ? `the database it replaced is kept at ${kept} (restore it the same way to undo)\n`
        : ''),
  );
}
