import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { Migrator, sql, type Kysely } from 'kysely';
import pg from 'pg';
import { Permission, SEND_IMPLIES } from '@parley/protocol';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { migrate, openDatabase, type DatabaseHandle } from '../../src/storage/db.js';
import { migrationProvider } from '../../src/storage/migrations/index.js';
import { nameKey, confusableKey } from '../../src/storage/name-key.js';
import {
  createHarness,
  dbDescribe,
  dialect,
  expectError,
  expectStatus,
  PG_URL,
  type Harness,
} from '../helpers/harness.js';

// D57: an upgrade keeps every guild's behaviour. A database made before the change (migrated up
// to 0016 only, its rows written in that schema) is upgraded by migration 0020; what its people
// could and could not do stays the same, and roles are ranked in the order they were made (D58).
const P = Permission;
const T0 = Date.UTC(2026, 0, 1);
const ids = {
  owner: 1001,
  talker: 1002,
  admin: 1003,
  quiet: 1004,
  guild: 2001,
  talkers: 2002,
  admins: 2003,
  general: 3001,
  news: 3002,
};

dbDescribe('upgrade of permissions (D57 migration 0020)', () => {
  let url: string;
  let schema: string | undefined;
  let dir: string | undefined;
  let h: Harness;

  async function before(handle: DatabaseHandle): Promise<void> {
    const db = handle.db as unknown as Kysely<Record<string, Record<string, unknown>>>;
    const s =
      dialect === 'postgres'
        ? (await sql<{ s: string }>`select current_schema() as s`.execute(db)).rows[0]?.s
        : undefined;
    const migrator = new Migrator({
      db,
      provider: migrationProvider,
      ...(s ? { migrationTableSchema: s } : {}),
    });
    const r = await migrator.migrateTo('0016-event-audience');
    expect(r.error).toBeUndefined();
    for (const [id, name] of [
      [ids.owner, 'owner'],
      [ids.talker, 'talker'],
      [ids.admin, 'admin'],
      [ids.quiet, 'quiet'],
    ] as const)
      await db
        .insertInto('users')
        .values({
          id,
          name,
          avatar: null,
          is_bot: 0,
          password_hash: null,
          bot_count: 0,
          created_at: T0,
          disabled: 0,
          name_key: nameKey(name),
          skeleton_key: confusableKey(name),
        })
        .execute();
    await db
      .insertInto('guilds')
      .values({ id: ids.guild, name: 'Old', owner_id: ids.owner, created_at: T0 })
      .execute();
    // D11's default @everyone, a role that may talk in #news, an administrators' role.
    await db
      .insertInto('roles')
      .values([
        { id: ids.guild, guild_id: ids.guild, name: '@everyone', permissions: 7, created_at: T0 },
        {
          id: ids.talkers,
          guild_id: ids.guild,
          name: 'talkers',
          permissions: P.SEND_MESSAGES,
          created_at: T0,
        },
        {
          id: ids.admins,
          guild_id: ids.guild,
          name: 'admins',
          permissions: P.ADMINISTRATOR,
          created_at: T0,
        },
      ])
      .execute();
    for (const user of [ids.owner, ids.talker, ids.admin, ids.quiet])
      await db
        .insertInto('members')
        .values({ guild_id: ids.guild, user_id: user, joined_at: T0 })
        .execute();
    await db
      .insertInto('member_roles')
      .values([
        { guild_id: ids.guild, user_id: ids.talker, role_id: ids.talkers },
        { guild_id: ids.guild, user_id: ids.admin, role_id: ids.admins },
      ])
      .execute();
    for (const [id, name] of [
      [ids.general, 'general'],
      [ids.news, 'news'],
    ] as const)
      await db
        .insertInto('channels')
        .values({
          id,
          guild_id: ids.guild,
          type: 0,
          name,
          topic: '',
          dm_user_low: null,
          dm_user_high: null,
          created_at: T0,
        })
        .execute();
    // #news: only talkers speak.
    await db
      .insertInto('channel_overwrites')
      .values([
        { channel_id: ids.news, role_id: ids.guild, allow: 0, deny: P.SEND_MESSAGES },
        { channel_id: ids.news, role_id: ids.talkers, allow: P.SEND_MESSAGES, deny: 0 },
      ])
      .execute();
  }

  beforeAll(async () => {
    if (dialect === 'postgres') {
      schema = `t_${randomBytes(6).toString('hex')}`;
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`create schema ${schema}`);
      await c.end();
      url = PG_URL;
    } else {
      dir = mkdtempSync(joinPath(tmpdir(), 'parley-upgrade-'));
      url = `sqlite:${joinPath(dir, 'old.db')}`;
    }
    const old = openDatabase(url, schema ? { schema } : {});
    await before(old);
    await old.close();
    // The server of today opens it: migration 0020 runs.
    h = await createHarness({
      sameDatabaseAs: { database: { url, schema } } as unknown as Harness,
    });
  });
  afterAll(async () => {
    await h.close();
    if (schema) {
      const c = new pg.Client({ connectionString: PG_URL });
      await c.connect();
      await c.query(`drop schema ${schema} cascade`);
      await c.end();
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('SEND_MESSAGES now also grants (or denies) ATTACH_FILES, ADD_REACTIONS and USE_APPLICATION_COMMANDS; other bits stay', async () => {
    const db = h.services.domain.db;
    const roles = await db
      .selectFrom('roles')
      .select(['id', 'permissions', 'position', 'color', 'mentionable'])
      .orderBy('id')
      .execute();
    expect(
      roles.map((r) => ({
        ...r,
        id: Number(r.id),
        position: Number(r.position),
        mentionable: Number(r.mentionable),
      })),
    ).toEqual([
      { id: ids.guild, permissions: 7 | SEND_IMPLIES, position: 0, color: null, mentionable: 0 },
      {
        id: ids.talkers,
        permissions: P.SEND_MESSAGES | SEND_IMPLIES,
        position: 1,
        color: null,
        mentionable: 0,
      },
      { id: ids.admins, permissions: P.ADMINISTRATOR, position: 2, color: null, mentionable: 0 },
    ]);
    const ow = await db
      .selectFrom('channel_overwrites')
      .select(['role_id', 'allow', 'deny'])
      .where('channel_id', '=', ids.news)
      .orderBy('role_id')
      .execute();
    expect(ow.map((o) => ({ ...o, role_id: Number(o.role_id) }))).toEqual([
      { role_id: ids.guild, allow: 0, deny: P.SEND_MESSAGES | SEND_IMPLIES },
      { role_id: ids.talkers, allow: P.SEND_MESSAGES | SEND_IMPLIES, deny: 0 },
    ]);
    const m = await db
      .selectFrom('members')
      .select('timeout_until')
      .where('user_id', '=', ids.talker)
      .executeTakeFirstOrThrow();
    expect(m.timeout_until).toBeNull();
    // Migrating again is a no-op (the migrator keeps its book).
    await migrate(db, h.services.domain.dialect);
    expect(
      (
        await db
          .selectFrom('roles')
          .select('permissions')
          .where('id', '=', ids.guild)
          .executeTakeFirstOrThrow()
      ).permissions,
    ).toBe(7 | SEND_IMPLIES);
  });

  it('every person can do what they could before, and nothing more', async () => {
    const token = async (userId: number) =>
      (await expectStatus(await h.admin.post(`/users/${userId}/sessions`), 201)).body
        .token as string;
    const [talker, quiet, admin] = [
      await token(ids.talker),
      await token(ids.quiet),
      await token(ids.admin),
    ];
    const send = (t: string, ch: number) =>
      h.as(t).post(`/channels/${ch}/messages`, { content: 'hello' });
    await expectStatus(await send(quiet, ids.general), 200);
    await expectStatus(await send(talker, ids.news), 200);
    expectError(await send(quiet, ids.news), 403, 'FORBIDDEN');
    // Before the change only ADMINISTRATOR administered; it still does, by granting every bit.
    await expectStatus(
      await h.as(admin).patch(`/guilds/${ids.guild}`, { name: 'Still mine' }),
      200,
    );
    await expectStatus(await h.as(admin).delete(`/guilds/${ids.guild}/members/${ids.quiet}`), 204);
    // The others administer nothing (D57: the new bits were given to nobody).
    expectError(await h.as(talker).patch(`/guilds/${ids.guild}`, { name: 'x' }), 403, 'FORBIDDEN');
    expectError(await h.as(talker).get(`/guilds/${ids.guild}/audit-log`), 403, 'FORBIDDEN');
    expectError(
      await h.as(talker).post(`/guilds/${ids.guild}/roles`, { name: 'r', permissions: 0 }),
      403,
      'FORBIDDEN',
    );
  });
});
