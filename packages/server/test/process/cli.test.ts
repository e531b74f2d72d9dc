import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createHarness,
  expectStatus,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';
import { runParley, tempDir } from '../helpers/process.js';

// Acceptance 8 (issue 2), CLI side: `parley admin bot reset-token <botId>` is a real child
// process working on the same SQLite file as a running server (here: the in-test app opened on
// that file). The old token is refused on the server's very next request (D8); the new one works.

function expectOneErrorLine(stderr: string, code: string): void {
  // D52: the database the command opened is named first; then one line for the error.
  const lines = stderr.split('\n').filter((l) => l !== '' && !l.startsWith('parley: database '));
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toContain(code);
  expect(stderr).not.toMatch(/\n\s+at |\.ts:\d+/);
}

describe('parley admin bot … on a shared SQLite file (D8, D41)', () => {
  const tmp = tempDir();
  const file = path.join(tmp.path, 'shared.db');
  const env = { PARLEY_DATABASE_URL: `sqlite:${file}`, PARLEY_DATA_DIR: tmp.path };
  let h: Harness;
  let w: World;

  beforeAll(async () => {
    h = await createHarness({ env });
    w = await makeWorld(h);
  });
  afterAll(async () => {
    await h.close();
    tmp.remove();
  });

  it('reset-token: the old token gets 401 on the very next request, the printed one works', async () => {
    const old = w.bot.token;
    expect((await h.as(old).get('/bot/me')).status).toBe(200);
    const r = await runParley(['admin', 'bot', 'reset-token', String(w.bot.id)], env);
    expect(r.code, r.stderr).toBe(0);
    // D52: the CLI always names the database it opened (on stderr: stdout stays JSON).
    expect(r.stderr).toBe(`parley: database SQLite ${file}\n`);
    const printed = JSON.parse(r.stdout) as { token: string };
    expect(Object.keys(printed)).toEqual(['token']);
    expect(printed.token).not.toBe(old);

    const refused = await h.as(old).get('/bot/me');
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer');
    expect(refused.body).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.any(String) } });

    const me = await expectStatus(await h.as(printed.token).get('/bot/me'), 200);
    expect(me.body.id).toBe(w.bot.id);
    await expectStatus(
      await h.as(printed.token).post(`/channels/${w.channelId}/messages`, { content: 'new token' }),
      200,
    );
    // And the other way round: a reset through the operator API retires the CLI's token.
    const api = await expectStatus(await h.admin.post(`/bots/${w.bot.id}/token`), 200);
    expect((await h.as(printed.token).get('/bot/me')).status).toBe(401);
    expect((await h.as(api.body.token).get('/bot/me')).status).toBe(200);
  }, 60_000);

  it('bot create through the CLI: its token works on the server; the 4th bot is a CONFLICT', async () => {
    // The world's owner already has one bot; two more fill the quota of 3.
    const created = await runParley(
      ['admin', 'bot', 'create', '--owner', String(w.owner.id), '--name', 'cli-bot'],
      env,
    );
    expect(created.code, created.stderr).toBe(0);
    const out = JSON.parse(created.stdout) as { bot: { id: number }; token: string };
    expect((await h.as(out.token).get('/bot/me')).body.id).toBe(out.bot.id);
    await expectStatus(await h.admin.post('/bots', { ownerId: w.owner.id, name: 'third' }), 201);

    const [fourth, unknown] = await Promise.all([
      runParley(['admin', 'bot', 'create', '--owner', String(w.owner.id), '--name', 'x'], env),
      runParley(['admin', 'bot', 'reset-token', '9007199254740991'], env),
    ]);
    expect(fourth.code).toBe(1);
    expectOneErrorLine(fourth.stderr, 'CONFLICT');
    expect(unknown.code).toBe(1);
    expectOneErrorLine(unknown.stderr, 'NOT_FOUND');
    const bots = await h.services.domain.db
      .selectFrom('bots')
      .select('id')
      .where('owner_id', '=', w.owner.id)
      .execute();
    expect(bots).toHaveLength(3);
  }, 90_000);
});
