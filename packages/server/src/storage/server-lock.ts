import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';

/**
 * A running server's mark on its SQLite database: `<database file>.lock` holding its process id.
 * `parley restore` refuses to replace a database whose lock names a live process (D53); a lock
 * left by a crashed server names a dead one and is ignored. PostgreSQL needs none (restore is
 * the operator's pg_restore there).
 */
export function sqliteFile(databaseUrl: string): string | undefined {
  if (!databaseUrl.startsWith('sqlite:')) return undefined;
  const file = databaseUrl.slice('sqlite:'.length);
  return file === ':memory:' ? undefined : file;
}

const lockPath = (file: string): string => `${file}.lock`;

export function claimServerLock(databaseUrl: string): { release(): void } {
  const file = sqliteFile(databaseUrl);
  if (file === undefined) return { release: () => {} };
  const path = lockPath(file);
  try {
    writeFileSync(path, `${process.pid}\n`, { mode: 0o600 });
  } catch {
    // The directory does not exist yet (the database opens it) or is read-only: best effort.
    return { release: () => {} };
  }
  const release = (): void => {
    try {
      if (readFileSync(path, 'utf8').trim() === String(process.pid)) unlinkSync(path);
    } catch {
      // already gone
    }
  };
  process.once('exit', release);
  return { release };
}

/** The process id of a live server using this SQLite database, if any. */
export function liveServerPid(databaseUrl: string): number | undefined {
  const file = sqliteFile(databaseUrl);
  if (file === undefined) return undefined;
  let pid: number;
  try {
    pid = Number(readFileSync(lockPath(file), 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!Number.isSafeInteger(pid) || pid <= 0 || pid === process.pid) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    // EPERM: it exists but belongs to someone else — still a live server.
    return (err as { code?: string }).code === 'EPERM' ? pid : undefined;
  }
}
