import { ConfigError } from '../config/config.js';
import { chmodSync, closeSync, mkdirSync, openSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * D54: the data directory is 0700 and the database files 0600 — `parley.db` holds the
 * token-signing key and the webhook secrets, so any local account that can read it can forge
 * any bot's token. What is created is created so; what an older version (or an operator) left
 * looser is tightened at start, and the caller logs each change.
 */
export interface Tightened {
  readonly path: string;
  /** the mode found, e.g. 0o755 */
  readonly from: number;
  readonly to: number;
}

const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

const modeOf = (p: string): number | undefined => {
  try {
    return statSync(p).mode & 0o777;
  } catch (err) {
    if ((err as { code?: string }).code === 'ENOENT') return undefined;
    throw err;
  }
};

/** Tighten `p` to `want` if group or others have any access to it. */
function tighten(p: string, want: number, out: Tightened[]): void {
  const from = modeOf(p);
  if (from === undefined || (from & 0o077) === 0) return;
  chmodSync(p, want);
  out.push({ path: p, from, to: want });
}

/** Create `dir` (and missing parents) 0700; an existing one with looser modes is tightened. */
function secureDir(dir: string, out: Tightened[]): void {
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  tighten(dir, DIR_MODE, out);
}

/**
 * The data directory and the upload store's directories (`files`, `files/blobs/<shard>`,
 * `files/tmp/<staging>`); blobs themselves are written 0600 (local-blob-store.ts).
 */
export function secureDataDir(dataDir: string): Tightened[] {
  const out: Tightened[] = [];
  // Issue 28: a data directory that is a file is the data directory's fault, said so (it was
  // blamed on PARLEY_DATABASE_URL).
  let found: ReturnType<typeof statSync> | undefined;
  try {
    found = statSync(dataDir);
  } catch {
    found = undefined;
  }
  if (found !== undefined && !found.isDirectory())
    throw new ConfigError(
      'PARLEY_DATA_DIR',
      `${dataDir} is a file, not a directory: point PARLEY_DATA_DIR (or --data-dir) at a directory`,
    );
  secureDir(dataDir, out);
  const files = path.join(dataDir, 'files');
  tighten(files, DIR_MODE, out);
  for (const sub of ['blobs', 'tmp']) {
    const d = path.join(files, sub);
    tighten(d, DIR_MODE, out);
    let entries: string[] = [];
    try {
      entries = readdirSync(d);
    } catch {
      continue;
    }
    for (const e of entries) tighten(path.join(d, e), DIR_MODE, out);
  }
  return out;
}

/**
 * A SQLite database file: its directory is created 0700 when missing (an existing directory the
 * operator chose is left alone, unless it is the data directory: secureDataDir), and the file is
 * created 0600 before SQLite opens it — SQLite gives `-wal` and `-shm` the main file's mode.
 * Existing files with looser modes are tightened.
 */
export function secureSqliteFiles(file: string): Tightened[] {
  const out: Tightened[] = [];
  const dir = path.dirname(path.resolve(file));
  if (modeOf(dir) === undefined) mkdirSync(dir, { recursive: true, mode: DIR_MODE });
  if (modeOf(file) === undefined) closeSync(openSync(file, 'a', FILE_MODE));
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`])
    tighten(f, FILE_MODE, out);
  return out;
}
