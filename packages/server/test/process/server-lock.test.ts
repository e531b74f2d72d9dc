import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  freePort,
  runParley,
  startParley,
  stopParley,
  tempDir,
  type Running,
} from '../helpers/process.js';

// Issue 21, found as a new user would: a second `npm start` on the same SQLite database used to
// start silently (the lock file was simply overwritten) and then two servers shared one file.
// Now it refuses with one line naming the running server's process id; a lock left behind by a
// server that was killed names a dead process and does not stand in the way.

describe('a second server on the same SQLite database (issue 21)', () => {
  const tmp = tempDir('parley-lock-');
  const dataDir = path.join(tmp.path, 'data');
  let first: Running | undefined;
  let third: Running | undefined;

  afterAll(async () => {
    await stopParley(first, 'SIGKILL');
    await stopParley(third, 'SIGKILL');
    tmp.remove();
  });

  it('refuses in one line naming the running one; after a kill -9 the next one starts', async () => {
    first = await startParley({
      PARLEY_DATA_DIR: dataDir,
      PARLEY_PORT: String(await freePort()),
      PARLEY_LOG_LEVEL: 'warn',
    });
    const pid = first.proc.pid as number;
    const lock = path.join(dataDir, 'parley.db.lock');
    expect(readFileSync(lock, 'utf8').trim()).toBe(String(pid));

    const second = await runParley(['serve'], {
      PARLEY_DATA_DIR: dataDir,
      PARLEY_PORT: String(await freePort()),
      PARLEY_LOG_LEVEL: 'warn',
    });
    expect(second.code).toBe(1);
    expect(second.stdout).not.toContain('Parley is running');
    const lines = second.stderr.trim().split('\n');
    expect(lines, second.stderr).toHaveLength(1);
    expect(lines[0]).toMatch(/^parley: another Parley server \(process \d+\) is already running/);
    expect(lines[0]).toContain(`(process ${pid})`);
    expect(lines[0]).toContain(path.join(dataDir, 'parley.db'));
    // The running server's lock is untouched, and it still serves.
    expect(readFileSync(lock, 'utf8').trim()).toBe(String(pid));
    expect((await fetch(`${first.origin}/healthz`)).status).toBe(200);

    // Killed without a chance to remove its lock: the lock names a dead process.
    await stopParley(first, 'SIGKILL');
    first = undefined;
    expect(existsSync(lock)).toBe(true);
    third = await startParley({
      PARLEY_DATA_DIR: dataDir,
      PARLEY_PORT: String(await freePort()),
      PARLEY_LOG_LEVEL: 'warn',
    });
    expect(readFileSync(lock, 'utf8').trim()).toBe(String(third.proc.pid));
  }, 120_000);
});
