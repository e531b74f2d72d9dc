import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';

/**
 * A running server's mark on its SQLite database: `<database file>.lock` holding its process id.
 * `parley restore` refuses to replace a database whose lock names a live process (D53), and so
 * does a second `parley serve` (issue 21); a lock left by a crashed server names a dead one and
 * is ignored. PostgreSQL needs none (restore is
 * the operator's pg_restore there).
 */
export function sqliteFile(databaseUrl: string): string | undefined {
  if (!databaseUrl.startsWith('sqlite:')) return undefined;
  const file = databaseUrl.slice('sqlite:'.length);
  return file === ':memory:' ? undefined : file;
}

const lockPath = (file: string): string => `${file}.lock`;

/**
 * Issue 21: a second server on the same SQLite database refuses to start, in one line naming the
 * running server's process id (two servers on one file would each believe they own its gateway
 * sessions and webhook queue). Thrown before anything is opened when the lock names a live
 * process, and again if another server took the lock meanwhile.
 */
export class ServerRunningError extends Error {
  constructor(
    readonly pid: number,
    file: string,
  ) {
    super(
      `another Parley server (process ${pid}) is already running on ${file}: stop it first, or start this one with its own PARLEY_DATA_DIR or PARLEY_DATABASE_URL`,
    );
    this.name = 'ServerRunningError';
  }
}

/** Refuse (ServerRunningError) when a live server holds this SQLite database's lock. */
export function refuseIfRunning(databaseUrl: string): void {
  const file = sqliteFile(databaseUrl);
  const pid = liveServerPid(databaseUrl);
  if (file !== undefined && pid !== undefined) throw new ServerRunningError(pid, file);
}

export function claimServerLock(databaseUrl: string): { release(): void } {
  const file = sqliteFile(databaseUrl);
  if (file === undefined) return { release: () => {} };
  const path = lockPath(file);
  for (let attempt = 0; ; attempt++) {
    try {
      // Created only when absent: of two servers starting at once, one gets it.
      writeFileSync(path, `${process.pid}\n`, { mode: 0o600, flag: 'wx' });
      break;
    } catch (err) {
      if ((err as { code?: string }).code !== 'EEXIST' || attempt > 0)
        // The directory does not exist yet or is read-only: best effort, as before.
        return { release: () => {} };
      refuseIfRunning(databaseUrl);
      // A lock left by a crashed server names a dead process: replace it.
      try {
        unlinkSync(path);
      } catch {
        // gone meanwhile
      }
    }
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
