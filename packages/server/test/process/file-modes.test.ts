import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fileForm, blobFiles, png } from '../helpers/media.js';
import { makeRemoteWorld } from '../helpers/live-server.js';
import { freePort, startParley, stopParley, tempDir, type Running } from '../helpers/process.js';

// D54 (issue #10, finding 2): the data directory is created 0700 and the database files
// (parley.db and its -wal/-shm) 0600 — they hold the token-signing key and the webhook secrets.
// Uploaded blobs under the data directory too. Looser modes found at start are tightened, and the
// log says so.

const ADMIN = 'file-modes-admin-token-0123456';
const mode = (p: string): number => statSync(p).mode & 0o777;
const octal = (n: number): string => `0${n.toString(8)}`;

describe('data directory and database file modes (D54)', () => {
  const tmp = tempDir();
  let server: Running | undefined;
  afterAll(async () => {
    await stopParley(server, 'SIGKILL');
    tmp.remove();
  });

  const start = async (dataDir: string): Promise<Running> =>
    startParley({
      PARLEY_DATA_DIR: dataDir,
      PARLEY_PORT: String(await freePort()),
      PARLEY_ADMIN_TOKEN: ADMIN,
      PARLEY_LOG_LEVEL: 'info',
    });

  it('a fresh data directory is 0700; parley.db, -wal, -shm and uploaded blobs are 0600', async () => {
    const dataDir = path.join(tmp.path, 'fresh', 'data');
    server = await start(dataDir);
    const w = await makeRemoteWorld(server.origin, ADMIN);
    const form = fileForm('a.png', png());
    const res = await fetch(`${server.origin}/api/v1/files/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.bot.token}`, 'content-type': form.contentType },
      body: form.body,
    });
    expect(res.status).toBe(200);

    expect(octal(mode(dataDir))).toBe('0700');
    for (const f of ['parley.db', 'parley.db-wal', 'parley.db-shm'])
      expect(octal(mode(path.join(dataDir, f))), f).toBe('0600');
    const blobs = blobFiles(dataDir);
    expect(blobs.length).toBe(1);
    for (const b of blobs) {
      expect(octal(mode(b)), b).toBe('0600');
      // every directory between the data directory and the blob
      for (let d = path.dirname(b); d.startsWith(dataDir) && d !== dataDir; d = path.dirname(d))
        expect(octal(mode(d)), d).toBe('0700');
    }
    await stopParley(server);
    server = undefined;
  }, 90_000);

  it('an existing data directory and database with looser modes are tightened at start, and the log says so', async () => {
    const dataDir = path.join(tmp.path, 'loose');
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    // a first run creates the database; then someone loosens everything
    server = await start(dataDir);
    await stopParley(server);
    for (const f of ['parley.db', 'parley.db-wal', 'parley.db-shm']) {
      const p = path.join(dataDir, f);
      try {
        statSync(p);
      } catch {
        writeFileSync(p, ''); // -wal/-shm may be gone after a clean stop
      }
      chmodSync(p, 0o644);
    }
    mkdirSync(path.join(dataDir, 'files'), { recursive: true });
    chmodSync(path.join(dataDir, 'files'), 0o755);
    chmodSync(dataDir, 0o755);

    server = await start(dataDir);
    expect(octal(mode(dataDir))).toBe('0700');
    expect(octal(mode(path.join(dataDir, 'files')))).toBe('0700');
    for (const f of ['parley.db', 'parley.db-wal', 'parley.db-shm'])
      expect(octal(mode(path.join(dataDir, f))), f).toBe('0600');
    // pino writes asynchronously: its lines may follow the banner by a moment.
    const logged = (): Array<{ level: number; msg: string; path?: string }> =>
      (server as Running)
        .stdout()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { level: number; msg: string; path?: string })
        .filter((l) => /tightened/.test(l.msg));
    for (let i = 0; i < 100 && logged().length < 5; i++)
      await new Promise((r) => setTimeout(r, 20));
    const tightened = logged();
    expect(tightened.map((l) => l.path).sort()).toEqual(
      [
        dataDir,
        path.join(dataDir, 'files'),
        path.join(dataDir, 'parley.db'),
        path.join(dataDir, 'parley.db-shm'),
        path.join(dataDir, 'parley.db-wal'),
      ].sort(),
    );
    for (const l of tightened) expect(l.level).toBe(40); // warn: the operator should know
  }, 90_000);
});
