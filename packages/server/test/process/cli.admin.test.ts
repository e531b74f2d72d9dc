import { existsSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configMarkdownTable } from '../../src/config/config.js';
import {
  createHarness,
  expectStatus,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';
import { runParley, tempDir, type Exited } from '../helpers/process.js';

// Issue #13, CLI: `parley admin …` as real processes, the way an operator runs them
// (bin/parley.js: the compiled bundle). Exit codes, --json output, tables, the database named on
// stderr, and the refusal to create an empty database where none is.
const parley = (args: string[], env: Record<string, string>): Promise<Exited> =>
  runParley(args, env, 60_000, 'bin');

const databaseLine = (file: string): string => `parley: database SQLite ${file}\n`;

describe('parley admin … as processes (D52)', () => {
  const tmp = tempDir('parley-cli-admin-');
  const file = path.join(tmp.path, 'parley.db');
  // The default database of the data directory: `--data-dir` alone finds it.
  const env = { PARLEY_DATA_DIR: tmp.path };
  let h: Harness;
  let w: World;

  beforeAll(async () => {
    h = await createHarness({ env: { PARLEY_DATABASE_URL: `sqlite:${file}` } });
    w = await makeWorld(h);
  });
  afterAll(async () => {
    await h.close();
    tmp.remove();
  });

  it('a missing data directory is refused in one line (exit 1), and nothing is created', async () => {
    const missing = path.join(tmp.path, 'elsewhere', 'data');
    const r = await parley(['admin', 'user', 'list'], { PARLEY_DATA_DIR: missing });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines, r.stderr).toHaveLength(1);
    expect(lines[0]).toContain(missing);
    for (const way of ['--data-dir', 'PARLEY_DATA_DIR', 'PARLEY_DATABASE_URL'])
      expect(lines[0]).toContain(way);
    expect(existsSync(missing)).toBe(false);
    // The same with --data-dir pointing nowhere.
    const flag = await parley(['--data-dir', missing, 'admin', 'stats'], {});
    expect(flag.code).toBe(1);
    expect(flag.stderr).toContain(missing);
    expect(existsSync(missing)).toBe(false);
  }, 90_000);

  it('user list --json: {items, hasMore} on stdout, the database on stderr; --q and --limit', async () => {
    const r = await parley(['admin', 'user', 'list', '--json', '--q', 'HUM', '--limit', '20'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(databaseLine(file));
    const out = JSON.parse(r.stdout) as {
      items: Array<{ id: number; name: string }>;
      hasMore: boolean;
    };
    expect(out.hasMore).toBe(false);
    expect(out.items.map((u) => u.name)).toEqual(['human']);
    expect(out.items[0]?.id).toBe(w.human.id);
    const bad = await parley(['admin', 'user', 'list', '--limit', '0'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/VALIDATION_ERROR.*limit/);
  }, 90_000);

  it('tables for people: a header row and one line per item; --data-dir finds the database', async () => {
    const r = await parley(['--data-dir', tmp.path, 'admin', 'guild', 'list'], {});
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(databaseLine(file));
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+NAME\s+OWNER\s+MEMBERS\s+CREATED$/);
    expect(lines[1]).toMatch(new RegExp(`^${w.guildId}\\s+Guild\\s+${w.owner.id}\\s+3\\s`));
    const stats = await parley(['admin', 'stats', '--json'], env);
    expect(JSON.parse(stats.stdout)).toMatchObject({ guilds: 1, bots: 1, people: 2, users: 3 });
  }, 90_000);

  it('user disable ends the sessions on the running server; message delete; invite create; errors exit 1', async () => {
    const sent = await expectStatus(
      await h.as(w.human.token).post(`/channels/${w.channelId}/messages`, { content: 'bye' }),
      200,
    );
    const [disabled, deleted, invite, unknown] = await Promise.all([
      parley(['admin', 'user', 'disable', String(w.human.id)], env),
      parley(['admin', 'message', 'delete', String(w.channelId), String(sent.body.id)], env),
      parley(['admin', 'invite', 'create', String(w.guildId), '--max-uses', '3'], env),
      parley(['admin', 'guild', 'delete', '9007199254740991'], env),
    ]);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stdout).toMatch(/disabled/);
    expect((await h.as(w.human.token).get(`/channels/${w.channelId}`)).status).toBe(401);
    const user = await h.admin.get(`/users/${w.human.id}`);
    expect(user.body).toMatchObject({ disabled: true, sessions: 0 });

    expect(deleted.code, deleted.stderr).toBe(0);
    const list = await h.as(w.owner.token).get(`/channels/${w.channelId}/messages`);
    expect(list.body.messages).toEqual([]);

    expect(invite.code, invite.stderr).toBe(0);
    const inv = JSON.parse(invite.stdout) as { code: string; guildId: number; maxUses: number };
    expect(inv).toMatchObject({ guildId: w.guildId, maxUses: 3 });
    await expectStatus(await h.admin.get(`/invites/${inv.code}`), 200);

    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/NOT_FOUND/);
    expect(unknown.stderr).not.toMatch(/\n\s+at /);
  }, 120_000);

  it('parley config: the settings in effect with secrets masked; --markdown: the README table', async () => {
    const secret = 'a-very-secret-admin-token-123';
    const r = await parley(['config'], { ...env, PARLEY_ADMIN_TOKEN: secret, PARLEY_PORT: '9999' });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).not.toContain(secret);
    expect(r.stdout).toMatch(/^PARLEY_ADMIN_TOKEN\s+\*{8}\s+set$/m);
    expect(r.stdout).toMatch(/^PARLEY_PORT\s+9999\s+set$/m);
    expect(r.stdout).toMatch(/^PARLEY_HOST\s+127\.0\.0\.1\s+default$/m);
    expect(r.stdout).toContain(`SQLite ${file}`);
    const md = await parley(['config', '--markdown'], {});
    expect(md.stdout.trim()).toBe(configMarkdownTable());
  }, 90_000);
});
