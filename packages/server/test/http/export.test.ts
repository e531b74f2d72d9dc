import { buffer } from 'node:stream/consumers';
import { unzipSync } from 'fflate';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exportGuild } from '../../src/domain/export/export.service.js';
import {
  createHarness,
  dbDescribe,
  expectStatus,
  join,
  makeUser,
  type Harness,
} from '../helpers/harness.js';
import { appAs, makeAppGuild } from '../helpers/guild-admin.js';
import { fileForm, freshDataDir, png, upload } from '../helpers/media.js';
import { withCookie } from '../helpers/people.js';

// Issue 28: GET /app/v1/users/@me/export — a zip of the person's own data — and the operator's
// guild export in the same format, each checked against what the API lists.

const text = (files: Record<string, Uint8Array>, name: string): string => {
  const f = files[name];
  if (!f) throw new Error(`${name} is not in the zip (${Object.keys(files).join(', ')})`);
  return Buffer.from(f).toString('utf8');
};
const jsonl = (files: Record<string, Uint8Array>, name: string): unknown[] =>
  text(files, name)
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));

dbDescribe('exports (issue 28)', () => {
  const data = freshDataDir();
  let h: Harness;
  let alice: { id: number; token: string };
  let bob: { id: number; token: string };
  let guild: { id: number; generalId: number };
  let dmChannel: number;
  const bytes = png();
  let uploaded: { url: string };

  beforeAll(async () => {
    h = await createHarness({ env: { PARLEY_DATA_DIR: data.dir } });
    alice = await makeUser(h, 'alice');
    bob = await makeUser(h, 'bob');
    guild = await makeAppGuild({ app: appAs(h, alice.token) }, 'Exported');
    await join(h, guild.id, bob.id);
    const send = async (token: string, content: string) =>
      (
        await expectStatus(
          await h.as(token).post(`/channels/${guild.generalId}/messages`, { content }),
          200,
        )
      ).body;
    const first = await send(alice.token, 'mine, first');
    await send(bob.token, "bob's, not alice's");
    await send(alice.token, 'mine, second');
    await expectStatus(
      await h
        .as(alice.token)
        .put(`/channels/${guild.generalId}/messages/${first.id}`, { content: 'mine, edited' }),
      200,
    );
    dmChannel = (await expectStatus(await h.as(alice.token).post(`/users/${bob.id}/dm`), 200)).body
      .channelId;
    for (const [t, c] of [
      [alice.token, 'psst'],
      [bob.token, 'yes?'],
    ] as const)
      await expectStatus(
        await h.as(t).post(`/dm/channels/${dmChannel}/messages`, { content: c }),
        200,
      );
    const up = await upload(h, alice.token, fileForm('picture.png', bytes));
    expect([200, 201]).toContain(up.status);
    uploaded = up.body;
  });
  afterAll(async () => {
    await h.close();
    data.remove();
  });

  it("the person's zip holds what the API lists for them: profile, guilds, DMs, own messages, DM messages, uploads", async () => {
    const r = await h.app.inject({
      method: 'GET',
      url: '/app/v1/users/@me/export',
      headers: { authorization: `Bearer ${alice.token}` },
    });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.headers['content-type']).toBe('application/zip');
    expect(r.headers['content-disposition']).toMatch(/^attachment; filename="parley-export-\d+-/);
    expect(r.headers['cache-control']).toBe('no-store'); // D70: a person's own data
    const files = unzipSync(new Uint8Array(r.rawPayload));

    const me = appAs(h, alice.token);
    expect(JSON.parse(text(files, 'manifest.json'))).toMatchObject({
      format: 'parley-export/1',
      kind: 'person',
      userId: alice.id,
    });
    expect(JSON.parse(text(files, 'profile.json'))).toEqual((await me.get('/users/@me')).body);
    expect(JSON.parse(text(files, 'guilds.json'))).toEqual(
      (await me.get('/users/@me/guilds')).body,
    );
    expect(JSON.parse(text(files, 'dms.json'))).toEqual((await me.get('/users/@me/dms')).body);

    // D16: the API lists newest first; the export is oldest first.
    const listed = (await h.as(alice.token).get(`/channels/${guild.generalId}/messages?limit=100`))
      .body.messages as Array<{ author: { id: number } }>;
    const own = listed.filter((m) => m.author.id === alice.id).reverse();
    expect(own.length).toBe(2);
    expect(jsonl(files, 'messages.jsonl')).toEqual(own);
    expect(text(files, 'messages.jsonl')).not.toContain("bob's");

    const dms = (await h.as(alice.token).get(`/dm/channels/${dmChannel}/messages?limit=100`)).body
      .messages as unknown[];
    expect(dms).toHaveLength(2);
    expect(jsonl(files, 'dm-messages.jsonl')).toEqual([...dms].reverse());

    const ups = jsonl(files, 'uploads.jsonl') as Array<{ id: number; url: string; path: string }>;
    expect(ups).toHaveLength(1);
    expect(ups[0]).toMatchObject({ url: uploaded.url, size: bytes.length });
    expect(uploaded.url).toContain(`/files/${ups[0]!.id}/`);
    expect(Buffer.from(files[ups[0]!.path] ?? [])).toEqual(bytes);
  });

  it("another person's export holds only theirs; without a session → 401", async () => {
    const r = await h.app.inject({
      method: 'GET',
      url: '/app/v1/users/@me/export',
      headers: { authorization: `Bearer ${bob.token}` },
    });
    const files = unzipSync(new Uint8Array(r.rawPayload));
    expect(
      (jsonl(files, 'messages.jsonl') as Array<{ content: string }>).map((m) => m.content),
    ).toEqual(["bob's, not alice's"]);
    expect(jsonl(files, 'uploads.jsonl')).toEqual([]);
    expect(Object.keys(files).filter((n) => n.startsWith('uploads/'))).toEqual([]);
    // The web app's settings link: a plain GET with the HttpOnly session cookie (D70).
    const viaCookie = await withCookie(h, bob.token, 'GET', '/users/@me/export');
    expect(viaCookie.status).toBe(200);
    expect(viaCookie.headers['content-type']).toBe('application/zip');
    const anon = await h.people(undefined).get('/users/@me/export');
    expect(anon.status).toBe(401);
  });

  it('the operator’s guild export (parley admin guild export) holds what the API lists for the guild', async () => {
    const files = unzipSync(
      new Uint8Array(await buffer(await exportGuild(h.services.domain, guild.id))),
    );
    expect(JSON.parse(text(files, 'manifest.json'))).toMatchObject({
      format: 'parley-export/1',
      kind: 'guild',
      guildId: guild.id,
    });
    const g = JSON.parse(text(files, 'guild.json'));
    expect(g).toMatchObject({ id: guild.id, name: 'Exported', ownerId: alice.id });
    const channels = (await h.as(alice.token).get(`/guilds/${guild.id}/channels`)).body.channels;
    expect(g.channels.map((c: { id: number }) => c.id).sort()).toEqual(
      channels.map((c: { id: number }) => c.id).sort(),
    );
    const members = (await h.as(alice.token).get(`/guilds/${guild.id}/members?limit=1000`)).body
      .members;
    // The list leaves roles out; the export has each member's roles, as GET of one member shows.
    const exported = jsonl(files, 'members.jsonl') as Array<{
      roles: number[];
      user: { id: number };
    }>;
    expect(exported.map(({ roles: _roles, ...m }) => m)).toEqual(members);
    for (const m of exported)
      expect(m.roles).toEqual(
        (await h.as(alice.token).get(`/guilds/${guild.id}/members/${m.user.id}`)).body.roles,
      );
    const all = (await h.as(alice.token).get(`/channels/${guild.generalId}/messages?limit=100`))
      .body.messages as unknown[];
    expect(jsonl(files, 'messages.jsonl')).toEqual([...all].reverse());
  });
});
