import path from 'node:path';
import { verify } from '@node-rs/argon2';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/storage/db.js';
import { runParley, tempDir } from '../helpers/process.js';

// Issue 11 (CLI and seed): `parley seed --demo` makes a demo person with a password and prints
// the login (name + password) and the demo guild's invite URL; a second run makes nothing new
// and says the demo is already there.
describe('parley seed --demo (D49 invites, D46 login)', () => {
  const tmp = tempDir();
  const file = path.join(tmp.path, 'seed.db');
  const env = {
    PARLEY_DATABASE_URL: `sqlite:${file}`,
    PARLEY_DATA_DIR: tmp.path,
    PARLEY_PUBLIC_URL: 'http://demo.test',
  };
  afterAll(() => tmp.remove());

  const counts = async () => {
    const h = openDatabase(`sqlite:${file}`);
    try {
      const n = async (t: 'users' | 'guilds' | 'bots' | 'invites' | 'channels') =>
        Number(
          (
            await h.db
              .selectFrom(t)
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      return {
        users: await n('users'),
        guilds: await n('guilds'),
        bots: await n('bots'),
        invites: await n('invites'),
        channels: await n('channels'),
      };
    } finally {
      await h.close();
    }
  };

  it('first run: a login that verifies and a usable invite URL; second run: already there', async () => {
    const first = await runParley(['seed', '--demo'], env, 60_000);
    expect(first.code, first.stderr).toBe(0);
    const json = JSON.parse(first.stdout.slice(0, first.stdout.indexOf('\n}\n') + 2)) as {
      guild: { id: number };
      users: { alice: { id: number; name: string } };
      login: { name: string; password: string };
      inviteUrl: string;
    };
    expect(json.login.name).toBe('alice');
    expect(json.login.password.length).toBeGreaterThanOrEqual(12);
    expect(first.stdout).toContain(`name:     alice`);
    expect(first.stdout).toContain(`password: ${json.login.password}`);
    expect(json.inviteUrl).toMatch(/^http:\/\/demo\.test\/invite\/[A-Za-z0-9]{12}$/);
    expect(first.stdout).toContain(json.inviteUrl);

    const h = openDatabase(`sqlite:${file}`);
    try {
      // The printed password is alice's (argon2id, as login checks it).
      const alice = await h.db
        .selectFrom('users')
        .select(['id', 'password_hash'])
        .where('id', '=', json.users.alice.id)
        .executeTakeFirstOrThrow();
      expect(await verify(alice.password_hash as string, json.login.password)).toBe(true);
      expect(await verify(alice.password_hash as string, 'correct-horse-battery')).toBe(false);
      // She owns the demo guild; the invite is its, unlimited and without expiry.
      const guild = await h.db
        .selectFrom('guilds')
        .select('owner_id')
        .where('id', '=', json.guild.id)
        .executeTakeFirstOrThrow();
      expect(guild.owner_id).toBe(alice.id);
      const code = json.inviteUrl.split('/').at(-1) as string;
      const invite = await h.db
        .selectFrom('invites')
        .selectAll()
        .where('code', '=', code)
        .executeTakeFirstOrThrow();
      expect(invite).toMatchObject({ guild_id: json.guild.id, max_uses: null, expires_at: null });
    } finally {
      await h.close();
    }
    const before = await counts();

    const second = await runParley(['seed', '--demo'], env, 60_000);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('The demo is already there');
    expect(second.stdout).toContain(`guild ${json.guild.id}`);
    expect(second.stdout).toContain('login:  alice');
    expect(second.stdout).toContain(json.inviteUrl);
    expect(second.stdout).not.toContain(json.login.password);
    expect(await counts()).toEqual(before);
  }, 120_000);
});
