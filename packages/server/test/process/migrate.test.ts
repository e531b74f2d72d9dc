import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { openServices } from '../../src/services.js';
import { CURRENT_SCHEMA } from '../../src/storage/schema-version.js';
import { MIGRATIONS } from '../../src/storage/migrations/index.js';
import { openDatabase } from '../../src/storage/db.js';
import { runParley, tempDir } from '../helpers/process.js';

// Issue 28: `parley migrate status | up [--dry-run]`, and a server (or the CLI) that refuses a
// database written by a newer release, in one line: which version, what to do.

describe('parley migrate (SQLite)', () => {
  const data = tempDir('parley-migrate-');
  const file = path.join(data.path, 'parley.db');
  const env = { PARLEY_DATA_DIR: data.path };

  beforeAll(async () => {
    const s = await openServices(loadConfig(env));
    await s.close();
  });
  afterAll(() => data.remove());

  it('status of an up-to-date database: its version and this release’s, nothing pending', async () => {
    const r = await runParley(['migrate', 'status'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`database schema  ${CURRENT_SCHEMA}`);
    expect(r.stdout).toContain(`this release     ${CURRENT_SCHEMA}`);
    expect(r.stdout).toMatch(/up to date\n$/);
    expect(r.stderr).toContain(`database SQLite ${file}`);
    const j = await runParley(['migrate', 'status', '--json'], env);
    const body = JSON.parse(j.stdout);
    expect(body.database).toBe(CURRENT_SCHEMA);
    expect(body.pending).toEqual([]);
    expect(body.applied.map((a: { name: string }) => a.name)).toEqual(Object.keys(MIGRATIONS));
  }, 90_000);

  it('a pending migration: status lists it, --dry-run changes nothing, up runs it', async () => {
    // Take the last migration back, as if this database were made by the release before.
    const last = MIGRATIONS[CURRENT_SCHEMA];
    const h = openDatabase(`sqlite:${file}`);
    await last?.down?.(h.db as never);
    await h.close();
    const raw = new SQLite(file);
    raw.prepare('delete from kysely_migration where name = ?').run(CURRENT_SCHEMA);
    raw.close();

    const status = await runParley(['migrate', 'status'], env);
    expect(status.stdout).toContain(`  pending  ${CURRENT_SCHEMA}`);
    expect(status.stdout).toMatch(/1 migration\(s\) to run: back up first/);

    const dry = await runParley(['migrate', 'up', '--dry-run'], env);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toBe(`would run 1 migration(s):\n  ${CURRENT_SCHEMA}\n`);
    const still = await runParley(['migrate', 'status', '--json'], env);
    expect(JSON.parse(still.stdout).pending).toEqual([CURRENT_SCHEMA]);

    const up = await runParley(['migrate', 'up'], env);
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toBe(`ran 1 migration(s):\n  ${CURRENT_SCHEMA}\nnow at ${CURRENT_SCHEMA}\n`);
    const again = await runParley(['migrate', 'up'], env);
    expect(again.stdout).toBe(`nothing to run: the database is at ${CURRENT_SCHEMA}\n`);
  }, 180_000);

  it('a database a newer release wrote: serve and migrate refuse in one line (version, what to do)', async () => {
    const raw = new SQLite(file);
    raw
      .prepare('insert into kysely_migration (name, timestamp) values (?, ?)')
      .run('9999-from-the-future', new Date().toISOString());
    raw.close();
    const [serve, up, status] = await Promise.all([
      runParley(['serve'], { ...env, PARLEY_PORT: '0' }, 90_000),
      runParley(['migrate', 'up'], env, 90_000),
      runParley(['migrate', 'status'], env, 90_000),
    ]);
    for (const r of [serve, up]) {
      expect(r.code).toBe(1);
      const lines = r.stderr.trimEnd().split('\n');
      const line = lines.at(-1) ?? '';
      expect(line).toContain('9999-from-the-future');
      expect(line).toContain(`this release knows (${CURRENT_SCHEMA})`);
      expect(line).toMatch(/run that release, or restore the backup/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    expect(serve.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(serve.stdout).not.toMatch(/Parley is running/);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('  newer    9999-from-the-future');
  }, 120_000);

  it('no database: status says where it looked instead of making one', async () => {
    const empty = tempDir('parley-migrate-none-');
    try {
      const r = await runParley(['migrate', 'status'], { PARLEY_DATA_DIR: empty.path });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/no database .*parley\.db/);
    } finally {
      empty.remove();
    }
  });
});
