import { statSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { makeRemoteWorld } from '../helpers/live-server.js';
import {
  call,
  runParley,
  startParley,
  stopParley,
  tempDir,
  type Running,
} from '../helpers/process.js';

// D53: `parley backup` copies a running server's SQLite database consistently while it keeps
// writing; `parley restore` refuses while that server runs, and restores once it has stopped.
const ADMIN = 'backup-admin-token-0123456789';

describe('backup and restore (SQLite, D53)', () => {
  const data = tempDir('parley-backup-');
  const out = tempDir('parley-backup-out-');
  let server: Running | undefined;

  afterAll(async () => {
    await stopParley(server);
    data.remove();
    out.remove();
  }, 30_000);

  it('a backup taken under writes opens, passes the integrity check and holds every earlier message', async () => {
    const env = {
      PARLEY_HOST: '127.0.0.1',
      PARLEY_PORT: '0',
      PARLEY_DATA_DIR: data.path,
      PARLEY_ADMIN_TOKEN: ADMIN,
      PARLEY_RATE_GLOBAL: 'off',
      PARLEY_RATE_MESSAGES: 'off',
      PARLEY_LOG_LEVEL: 'warn',
      PARLEY_WEBHOOK_ALLOW_INSECURE: 'true',
    };
    server = await startParley(env);
    // Issue #13: the banner warns when insecure webhook targets are allowed.
    expect(server.banner.join('\n')).toMatch(/WARNING\s+PARLEY_WEBHOOK_ALLOW_INSECURE/);
    expect(server.banner.join('\n')).not.toMatch(/PARLEY_WEBHOOK_ALLOW_PRIVATE/);
    const w = await makeRemoteWorld(server.origin, ADMIN);
    const origin = server.origin;
    const send = async (content: string): Promise<number> => {
      const r = await call(
        origin,
        'POST',
        `/api/v1/channels/${w.channelId}/messages`,
        w.human.token,
        {
          content,
        },
      );
      if (r.status !== 200) throw new Error(`send: ${r.status}`);
      return r.body.id as number;
    };
    const before: number[] = [];
    for (let i = 0; i < 50; i++) before.push(await send(`before ${i}`));

    // Writes continue during the backup.
    let writing = true;
    let during = 0;
    const writer = (async () => {
      while (writing) {
        await send(`during ${during}`);
        during++;
      }
    })();
    await new Promise((r) => setTimeout(r, 100));
    const file = path.join(out.path, 'copy.db');
    const b = await runParley(['backup', file], { PARLEY_DATA_DIR: data.path }, 60_000, 'bin');
    writing = false;
    await writer;
    expect(b.code, b.stderr).toBe(0);
    expect(b.stderr).toContain('parley: database SQLite');
    expect(b.stdout).toMatch(/backup written/);
    expect(during).toBeGreaterThan(0);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    const copy = new SQLite(file, { readonly: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      const ids = new Set(
        (
          copy.prepare('select id from messages where channel_id = ?').all(w.channelId) as Array<{
            id: number;
          }>
        ).map((r) => r.id),
      );
      for (const id of before) expect(ids.has(id)).toBe(true);
      // A consistent copy: the message rows and their events' commit agree (no torn state).
      expect(ids.size).toBeGreaterThanOrEqual(before.length);
      expect(ids.size).toBeLessThanOrEqual(before.length + during);
    } finally {
      copy.close();
    }

    // A second backup onto the same name is refused (no silent overwrite).
    const again = await runParley(['backup', file], { PARLEY_DATA_DIR: data.path }, 60_000, 'bin');
    expect(again.code).toBe(1);

    // Restore: refused while the server runs …
    const refused = await runParley(
      ['restore', file],
      { PARLEY_DATA_DIR: data.path },
      60_000,
      'bin',
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/a server \(process \d+\) is using/);
    // … and done once it has stopped: the database is the copy, mode 0600.
    const stopped = await stopParley(server);
    server = undefined;
    expect(stopped?.code).toBe(0);
    const done = await runParley(['restore', file], { PARLEY_DATA_DIR: data.path }, 60_000, 'bin');
    expect(done.code, done.stderr).toBe(0);
    const db = path.join(data.path, 'parley.db');
    expect(statSync(db).mode & 0o777).toBe(0o600);
    const restored = new SQLite(db, { readonly: true });
    try {
      const n = restored.prepare('select count(*) as n from messages').get() as { n: number };
      const c = new SQLite(file, { readonly: true });
      const m = c.prepare('select count(*) as n from messages').get() as { n: number };
      c.close();
      expect(n.n).toBe(m.n);
    } finally {
      restored.close();
    }
  }, 180_000);

  it('on PostgreSQL, backup says to use pg_dump (exit 1)', async () => {
    const r = await runParley(
      ['backup', path.join(out.path, 'pg.db')],
      { PARLEY_DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' },
      60_000,
      'bin',
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/pg_dump/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);
});
