import { writeFileSync } from 'node:fs';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { openServices } from '../../src/services.js';
import {
  freePort,
  runParley,
  startParley,
  stopParley,
  tempDir,
  type Running,
} from '../helpers/process.js';

// Issue 28, item 5: the operator's first hour, as tried — each rough edge found, with its fix.

describe("the operator's first hour (issue 28)", () => {
  const tmp = tempDir('parley-first-hour-');
  let server: Running | undefined;
  afterAll(async () => {
    await stopParley(server);
    tmp.remove();
  });

  it('parley config shows every value in its own syntax, --json for scripts; unknown PARLEY_* names are warned about with the nearest one', async () => {
    const env = {
      PARLEY_DATA_DIR: path.join(tmp.path, 'cfg'),
      PARLEY_DELIVERY_RETENTION_DAYS: '3,9',
      PARLEY_ADMIN_TOKEN: 'first-hour-admin-token-0123',
      PARLEY_PROT: '9000',
      PARLEY_QWERTYUIOPASDFGH: 'x',
    };
    const [plain, json] = await Promise.all([
      runParley(['config'], env),
      runParley(['config', '--json'], env),
    ]);
    expect(plain.code, plain.stderr).toBe(0);
    // It was shown as a rate: "undefined/undefined".
    expect(plain.stdout).toMatch(/^PARLEY_DELIVERY_RETENTION_DAYS\s+3,9\s+set$/m);
    expect(plain.stdout).toMatch(/^PARLEY_RATE_GLOBAL\s+5\/10\s+default$/m);
    expect(plain.stdout).not.toContain('undefined');
    expect(plain.stdout).not.toContain('first-hour-admin-token');
    const body = JSON.parse(json.stdout);
    expect(body.PARLEY_DELIVERY_RETENTION_DAYS).toEqual({ value: '3,9', from: 'set' });
    expect(body.PARLEY_PORT).toEqual({ value: '8080', from: 'default' });
    expect(body.PARLEY_ADMIN_TOKEN).toEqual({ value: '********', from: 'set' });
    expect(body.PARLEY_REDIS_URL).toEqual({ value: null, from: 'default' });
    for (const r of [plain, json]) {
      expect(r.stderr).toMatch(
        /warning: PARLEY_PROT is not a Parley setting and is ignored — did you mean PARLEY_PORT\?/,
      );
      // Nothing near: no guess, still the warning.
      expect(r.stderr).toMatch(
        /warning: PARLEY_QWERTYUIOPASDFGH is not a Parley setting and is ignored \(/,
      );
    }
  }, 90_000);

  it('a data directory that is a file is blamed on PARLEY_DATA_DIR, in one line', async () => {
    const file = path.join(tmp.path, 'not-a-dir');
    writeFileSync(file, 'x');
    const r = await runParley(['serve'], { PARLEY_DATA_DIR: file, PARLEY_PORT: '0' }, 90_000);
    expect(r.code).toBe(1);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(`PARLEY_DATA_DIR: ${file} is a file, not a directory`);
    expect(r.stderr).not.toContain('PARLEY_DATABASE_URL');
  }, 120_000);

  it('restore keeps a copy of the database it replaces', async () => {
    const mark = async (dir: string, which: string): Promise<string> => {
      const s = await openServices(loadConfig({ PARLEY_DATA_DIR: dir }));
      await s.domain.db.insertInto('settings').values({ key: 'which', value: which }).execute();
      await s.close();
      return path.join(dir, 'parley.db');
    };
    const live = await mark(path.join(tmp.path, 'live'), 'the one in use');
    const backup = await mark(path.join(tmp.path, 'backup'), 'the backup');
    const r = await runParley(['restore', backup], { PARLEY_DATA_DIR: path.dirname(live) }, 90_000);
    expect(r.code, r.stderr).toBe(0);
    const kept = /the database it replaced is kept at (\S+)/.exec(r.stdout)?.[1];
    expect(kept).toMatch(/parley\.db\.before-restore-/);
    const which = (file: string): string => {
      const db = new SQLite(file, { readonly: true });
      try {
        return (
          db.prepare("select value from settings where key = 'which'").get() as { value: string }
        ).value;
      } finally {
        db.close();
      }
    };
    expect(which(live)).toBe('the backup');
    expect(which(kept!)).toBe('the one in use');
    expect(
      readdirSync(path.dirname(live)).filter((f) => f.includes('before-restore')),
    ).toHaveLength(1);
  }, 120_000);

  it('seed --demo, run beside a server on another port, links to that port', async () => {
    const dataDir = path.join(tmp.path, 'seed');
    const port = await freePort();
    server = await startParley({ PARLEY_DATA_DIR: dataDir, PARLEY_PORT: String(port) });
    // The operator's second terminal: no PARLEY_PORT there.
    const r = await runParley(['seed', '--demo'], { PARLEY_DATA_DIR: dataDir }, 90_000);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`http://127.0.0.1:${port}/api/v1/bot/me`);
    expect(r.stdout).toContain(`Log in at http://127.0.0.1:${port}/`);
    expect(r.stdout).not.toContain(':8080');
  }, 180_000);
});
