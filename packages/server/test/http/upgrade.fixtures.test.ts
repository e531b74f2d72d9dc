import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, cpSync, existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { CURRENT_SCHEMA, schemaStatus } from '../../src/storage/schema-version.js';
import { FIXTURE_PASSWORD, type FixtureExpect } from '../fixtures/schema/make-fixture.js';
import {
  createHarness,
  dbDescribe,
  dialect,
  expectStatus,
  PG_URL,
  type Harness,
} from '../helpers/harness.js';
import { freshDataDir } from '../helpers/media.js';

// Issue 28: every committed fixture (a database written by an earlier release, one per schema
// version) is migrated to this release's schema and read back through the API: people log in
// with their passwords and sessions, messages, DMs, the bot's token and webhook, the upload.

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/schema');
const versions = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

it('there is at least one fixture, and none newer than this release', () => {
  expect(versions.length).toBeGreaterThan(0);
  for (const v of versions) expect(v <= CURRENT_SCHEMA, v).toBe(true);
});

for (const version of versions) {
  dbDescribe(`upgrade from the fixture of schema ${version}`, () => {
    const dir = path.join(FIXTURES, version, dialect);
    const expected = JSON.parse(
      readFileSync(path.join(dir, 'expected.json'), 'utf8'),
    ) as FixtureExpect;
    const data = freshDataDir();
    let dbName: string | undefined;
    let h: Harness;

    beforeAll(async () => {
      cpSync(path.join(dir, 'files'), path.join(data.dir, 'files'), { recursive: true });
      let url: string;
      if (dialect === 'sqlite') {
        url = `sqlite:${path.join(data.dir, 'parley.db')}`;
        copyFileSync(path.join(dir, 'parley.db'), path.join(data.dir, 'parley.db'));
      } else {
        // A database of its own, restored from the dump as an operator would (psql).
        dbName = `parley_upgrade_${randomBytes(4).toString('hex')}`;
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        await c.query(`create database ${dbName}`);
        await c.end();
        const u = new URL(PG_URL);
        u.pathname = `/${dbName}`;
        url = u.toString();
        execFileSync(
          'psql',
          ['-q', '-v', 'ON_ERROR_STOP=1', '-f', path.join(dir, 'dump.sql'), url],
          {
            stdio: ['ignore', 'ignore', 'pipe'],
          },
        );
      }
      // Opening migrates (as `parley serve` does).
      h = await createHarness({ databaseUrl: url, env: { PARLEY_DATA_DIR: data.dir } });
    }, 60_000);

    afterAll(async () => {
      await h?.close();
      data.remove();
      if (dbName) {
        const c = new pg.Client({ connectionString: PG_URL });
        await c.connect();
        await c.query(`drop database if exists ${dbName} with (force)`);
        await c.end();
      }
    });

    it('the database is at the current schema, with every migration recorded', async () => {
      const s = await schemaStatus(h.services.domain.db);
      expect(expected.schema).toBe(version);
      expect(s.version).toBe(CURRENT_SCHEMA);
      expect(s.pending).toEqual([]);
      expect(s.unknown).toEqual([]);
    });

    it('people log in with their passwords, and their sessions from before still work', async () => {
      for (const p of Object.values(expected.people)) {
        const login = await h.people(undefined).post('/auth/login', {
          name: p.name,
          password: FIXTURE_PASSWORD,
        });
        expect(login.status, login.raw).toBe(200);
        expect(login.body.user.id).toBe(p.id);
        const me = await expectStatus(await h.people(p.token).get('/users/@me'), 200);
        expect(me.body).toMatchObject({ id: p.id, name: p.name });
      }
    });

    it('the guild, its channels and membership read back', async () => {
      const { alice, bob } = expected.people;
      for (const p of [alice, bob]) {
        const guilds = await expectStatus(await h.people(p.token).get('/users/@me/guilds'), 200);
        expect(JSON.stringify(guilds.body)).toContain(String(expected.guild.id));
      }
      const chans = await expectStatus(
        await h.as(alice.token).get(`/guilds/${expected.guild.id}/channels`),
        200,
      );
      expect(
        (chans.body.channels as Array<{ id: number; name: string }>)
          .map((c) => ({ id: c.id, name: c.name }))
          .sort((a, b) => a.id - b.id),
      ).toEqual(expected.guild.channels);
    });

    it('every message reads back with its author and (edited) content', async () => {
      const byChannel = new Map<number, FixtureExpect['messages']>();
      for (const m of expected.messages)
        byChannel.set(m.channelId, [...(byChannel.get(m.channelId) ?? []), m]);
      for (const [channelId, want] of byChannel) {
        const r = await expectStatus(
          await h.as(expected.people.bob.token).get(`/channels/${channelId}/messages?limit=100`),
          200,
        );
        const got = (
          r.body.messages as Array<{ id: number; author: { id: number }; content: string }>
        )
          .map((m) => ({ id: m.id, channelId, authorId: m.author.id, content: m.content }))
          .sort((a, b) => a.id - b.id);
        expect(got).toEqual([...want].sort((a, b) => a.id - b.id));
      }
    });

    it('the DM reads back on both sides, and a new one can be sent', async () => {
      const { alice, bob } = expected.people;
      for (const p of [alice, bob]) {
        const r = await expectStatus(
          await h.as(p.token).get(`/dm/channels/${expected.dm.channelId}/messages`),
          200,
        );
        const got = (
          r.body.messages as Array<{ id: number; author: { id: number }; content: string }>
        )
          .map((m) => ({ id: m.id, authorId: m.author.id, content: m.content }))
          .sort((a, b) => a.id - b.id);
        expect(got).toEqual(expected.dm.messages);
      }
      const sent = await h
        .as(bob.token)
        .post(`/dm/channels/${expected.dm.channelId}/messages`, { content: 'after the upgrade' });
      expect(sent.status, sent.raw).toBe(200);
      // New ids stay above the old ones (D3).
      expect(sent.body.id).toBeGreaterThan(Math.max(...expected.dm.messages.map((m) => m.id)));
    });

    it("the bot's token still works, and its owner sees its webhook", async () => {
      const me = await expectStatus(await h.as(expected.bot.token).get('/bot/me'), 200);
      expect(me.body.id).toBe(expected.bot.id);
      const bots = await expectStatus(
        await h.people(expected.people.alice.token).get('/bots'),
        200,
      );
      const own = (
        bots.body.bots as Array<{ bot: { id: number }; webhookUrl: string; guilds: number[] }>
      ).find((b) => b.bot.id === expected.bot.id);
      expect(own?.webhookUrl).toBe(expected.bot.webhookUrl);
      expect(own?.guilds).toEqual([expected.guild.id]);
    });

    it('the upload is served with the same bytes', async () => {
      const r = await h.app.inject({ method: 'GET', url: new URL(expected.upload.url).pathname });
      expect(r.statusCode, r.body).toBe(200);
      expect(r.rawPayload.length).toBe(expected.upload.size);
      expect(createHash('sha256').update(r.rawPayload).digest('hex')).toBe(expected.upload.sha256);
      expect(existsSync(path.join(data.dir, 'files', 'blobs'))).toBe(true);
    });
  });
}
