import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_EVERYONE_PERMISSIONS, Permission } from '@parley/protocol';
import {
  createHarness,
  dbDescribe,
  expectError,
  expectStatus,
  join,
  makeUser,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';
import { fileForm, freshDataDir, png, SAMPLES, upload } from '../helpers/media.js';
import { parseMentions } from '../../src/domain/messages/mentions.js';

// D61/D62 (issue 24): replies, mentions resolved by the server's rules, allowedMentions,
// attachments read from the files, bots' embeds with their limits; D56: nothing new on a plain
// message.
dbDescribe('rich messages (D61, D62)', () => {
  let h: Harness;
  let w: World;
  let outsider: { id: number; token: string };
  const data = freshDataDir();
  let pngUrl = '';
  let gifUrl = '';
  let mp3Url = '';
  const ch = () => `/channels/${w.channelId}/messages`;

  beforeAll(async () => {
    h = await createHarness({ env: { PARLEY_DATA_DIR: data.dir, PARLEY_LINK_PREVIEWS: 'off' } });
    w = await makeWorld(h);
    outsider = await makeUser(h, 'outsider');
    const up = async (name: string, bytes: Buffer) =>
      (await expectStatus(await upload(h, w.human.token, fileForm(name, bytes)), 200)).body.url;
    pngUrl = await up('a.png', png());
    gifUrl = await up('b.gif', SAMPLES.gif.bytes());
    mp3Url = await up('c.mp3', SAMPLES.mp3.bytes());
  });
  afterAll(async () => {
    await h.close();
    data.remove();
  });

  it('D56: a plain message carries exactly the D17–D18 fields', async () => {
    const r = await expectStatus(await h.as(w.human.token).post(ch(), { content: 'plain' }), 200);
    expect(Object.keys(r.body).sort()).toEqual(
      ['author', 'channelId', 'content', 'guildId', 'id', 'timestamp'].sort(),
    );
    const list = await h.as(w.bot.token).get(`${ch()}?limit=1`);
    expect(list.body.messages[0]).toEqual(r.body);
  });

  it('D61: a reply carries reference and referencedMessage; null once the original is deleted', async () => {
    const first = await expectStatus(await h.as(w.human.token).post(ch(), { content: 'q?' }), 200);
    const reply = await expectStatus(
      await h
        .as(w.bot.token)
        .post(ch(), { content: 'a!', messageReference: { messageId: first.body.id } }),
      200,
    );
    expect(reply.body.reference).toEqual({ messageId: first.body.id, channelId: w.channelId });
    expect(reply.body.referencedMessage).toEqual(first.body);
    // D61 default: the replied-to author is mentioned (notified)
    expect(reply.body.mentions).toEqual([w.human.id]);
    const page = await h.as(w.human.token).get(`${ch()}?limit=2`);
    expect(page.body.messages[0].referencedMessage.id).toBe(first.body.id);
    await expectStatus(await h.as(w.human.token).delete(`${ch()}/${first.body.id}`), 204);
    const after = await h.as(w.human.token).get(`${ch()}?limit=1`);
    expect(after.body.messages[0].id).toBe(reply.body.id);
    expect(after.body.messages[0].referencedMessage).toBeNull();
  });

  it('D61: a reference to a message elsewhere or gone → 400', async () => {
    const other = await expectStatus(
      await h.admin.post(`/guilds/${w.guildId}/channels`, { name: 'other' }),
      201,
    );
    const there = await expectStatus(
      await h.as(w.human.token).post(`/channels/${other.body.id}/messages`, { content: 'x' }),
      200,
    );
    for (const messageId of [there.body.id, 999999999])
      expectError(
        await h.as(w.human.token).post(ch(), { content: 'r', messageReference: { messageId } }),
        400,
        'VALIDATION_ERROR',
      );
  });

  it('D62: user mentions resolve to members only; escaped and code mentions do not count', async () => {
    const content = `hi <@${w.human.id}> and <@${outsider.id}> \\<@${w.owner.id}> \`<@${w.owner.id}>\``;
    const r = await expectStatus(await h.as(w.bot.token).post(ch(), { content }), 200);
    expect(r.body.content).toBe(content); // stored and sent as written
    expect(r.body.mentions).toEqual([w.human.id]);
    expect(r.body).not.toHaveProperty('mentionEveryone');
  });

  it('D62/D57: @everyone and role mentions notify only with MENTION_EVERYONE', async () => {
    const role = await expectStatus(
      await h.admin.post(`/guilds/${w.guildId}/roles`, { name: 'team', permissions: 0 }),
      201,
    );
    const content = `@everyone <@&${role.body.id}>`;
    const plain = await expectStatus(await h.as(w.human.token).post(ch(), { content }), 200);
    expect(plain.body).not.toHaveProperty('mentionEveryone');
    expect(plain.body).not.toHaveProperty('mentionRoles');
    // the owner holds every bit
    const owner = await expectStatus(await h.as(w.owner.token).post(ch(), { content }), 200);
    expect(owner.body.mentionEveryone).toBe(true);
    expect(owner.body.mentionRoles).toEqual([role.body.id]);
    // a role granting MENTION_EVERYONE
    const loud = await expectStatus(
      await h.admin.post(`/guilds/${w.guildId}/roles`, {
        name: 'loud',
        permissions: Permission.MENTION_EVERYONE,
      }),
      201,
    );
    await join(h, w.guildId, w.human.id, [loud.body.id]);
    const now = await expectStatus(await h.as(w.human.token).post(ch(), { content: '@here' }), 200);
    expect(now.body.mentionEveryone).toBe(true);
  });

  it('D58/D61: a mentionable role notifies whoever writes it; a plain one only with MENTION_EVERYONE', async () => {
    const quiet = await makeUser(h, 'quiet-writer');
    await join(h, w.guildId, quiet.id);
    const open = await expectStatus(
      await h.admin.post(`/guilds/${w.guildId}/roles`, { name: 'helpers', permissions: 0 }),
      201,
    );
    await expectStatus(await h.admin.patch(`/roles/${open.body.id}`, { mentionable: true }), 200);
    const closed = await expectStatus(
      await h.admin.post(`/guilds/${w.guildId}/roles`, { name: 'staff', permissions: 0 }),
      201,
    );
    const content = `<@&${open.body.id}> <@&${closed.body.id}> @everyone`;
    const r = await expectStatus(await h.as(quiet.token).post(ch(), { content }), 200);
    expect(r.body.mentionRoles).toEqual([open.body.id]); // D58: mentionable
    expect(r.body).not.toHaveProperty('mentionEveryone'); // D57: still needs the bit
    // allowedMentions still suppresses a mentionable role (D61)
    const hushed = await expectStatus(
      await h.as(quiet.token).post(ch(), { content, allowedMentions: { parse: [] } }),
      200,
    );
    expect(hushed.body).not.toHaveProperty('mentionRoles');
    // the owner (every bit) notifies both
    const owner = await expectStatus(await h.as(w.owner.token).post(ch(), { content }), 200);
    expect(owner.body.mentionRoles).toEqual([open.body.id, closed.body.id]);
  });

  it('D61: allowedMentions suppresses what it does not allow (and the reply author)', async () => {
    const first = await expectStatus(await h.as(w.human.token).post(ch(), { content: 'q' }), 200);
    const none = await expectStatus(
      await h.as(w.owner.token).post(ch(), {
        content: `@everyone <@${w.human.id}>`,
        allowedMentions: { parse: [] },
        messageReference: { messageId: first.body.id },
      }),
      200,
    );
    expect(none.body).not.toHaveProperty('mentions');
    expect(none.body).not.toHaveProperty('mentionEveryone');
    const onlyUser = await expectStatus(
      await h.as(w.owner.token).post(ch(), {
        content: `<@${w.human.id}> <@${w.bot.userId}> @everyone`,
        allowedMentions: { users: [w.bot.userId] },
      }),
      200,
    );
    expect(onlyUser.body.mentions).toEqual([w.bot.userId]);
    expect(onlyUser.body).not.toHaveProperty('mentionEveryone');
    const noPing = await expectStatus(
      await h.as(w.bot.token).post(ch(), {
        content: 'reply',
        messageReference: { messageId: first.body.id },
        allowedMentions: { parse: ['users'], repliedUser: false },
      }),
      200,
    );
    expect(noPing.body).not.toHaveProperty('mentions');
  });

  it('D61: several attachments with type, size and dimensions read from the files', async () => {
    const r = await expectStatus(
      await h.as(w.human.token).post(ch(), { content: '', attachments: [pngUrl, gifUrl, mp3Url] }),
      200,
    );
    expect(r.body.content).toBe('');
    expect(r.body.attachments).toHaveLength(3);
    const [a, b, c] = r.body.attachments;
    expect(a).toEqual({
      url: pngUrl,
      filename: 'a.png',
      size: png().length,
      contentType: 'image/png',
      width: expect.any(Number),
      height: expect.any(Number),
    });
    expect(a.width).toBeGreaterThan(0);
    expect(b.contentType).toBe('image/gif');
    expect(b.width).toBeGreaterThan(0);
    expect(c).toEqual({
      url: mp3Url,
      filename: 'c.mp3',
      size: SAMPLES.mp3.bytes().length,
      contentType: 'audio/mpeg',
    });
    const listed = await h.as(w.bot.token).get(`${ch()}?limit=1`);
    expect(listed.body.messages[0].attachments).toEqual(r.body.attachments);
  });

  it('D61: attachments must be uploads of this platform, 1–10, no repeats', async () => {
    const bad: unknown[] = [
      ['https://example.com/a.png'],
      [`${pngUrl}x`],
      [pngUrl, pngUrl],
      [],
      Array.from({ length: 11 }, () => pngUrl),
    ];
    for (const attachments of bad)
      expectError(
        await h.as(w.human.token).post(ch(), { content: 'x', attachments }),
        400,
        'VALIDATION_ERROR',
        JSON.stringify(attachments),
      );
    expectError(await h.as(w.human.token).post(ch(), { content: '' }), 400, 'VALIDATION_ERROR');
    expectError(await h.as(w.human.token).post(ch(), {}), 400, 'VALIDATION_ERROR');
  });

  it('D57: attachments need ATTACH_FILES', async () => {
    await expectStatus(
      await h.admin.patch(`/roles/${w.guildId}`, {
        permissions: DEFAULT_EVERYONE_PERMISSIONS & ~Permission.ATTACH_FILES,
      }),
      200,
    );
    try {
      expectError(
        await h.as(w.bot.token).post(ch(), { content: 'x', attachments: [pngUrl] }),
        403,
        'FORBIDDEN',
      );
      await expectStatus(await h.as(w.bot.token).post(ch(), { content: 'text still' }), 200);
    } finally {
      await h.admin.patch(`/roles/${w.guildId}`, { permissions: DEFAULT_EVERYONE_PERMISSIONS });
    }
  });

  it("D61: bots' embeds, with uploaded images and dimensions; people may not send them", async () => {
    const embed = {
      title: 'Result',
      description: '**ok**',
      url: 'https://example.com/r',
      color: 0x5865f2,
      timestamp: '2026-11-26T00:00:00.000Z',
      author: { name: 'b', iconUrl: pngUrl },
      fields: [{ name: 'a', value: '1', inline: true }],
      image: { url: pngUrl },
      footer: { text: 'f' },
    };
    const r = await expectStatus(await h.as(w.bot.token).post(ch(), { embeds: [embed] }), 200);
    expect(r.body.content).toBe('');
    expect(r.body.embeds[0]).toMatchObject({ ...embed, type: 'rich', image: { url: pngUrl } });
    expect(r.body.embeds[0].image.width).toBeGreaterThan(0);
    expectError(
      await h.as(w.human.token).post(ch(), { content: 'x', embeds: [{ title: 't' }] }),
      403,
      'FORBIDDEN',
    );
  });

  it('D61: embed limits → 400', async () => {
    const big = 'x'.repeat(4000);
    const cases: unknown[] = [
      [{ title: 'x'.repeat(257) }],
      [{ description: 'x'.repeat(4097) }],
      [{ description: big }, { description: big }], // 8000 > 6000 together
      [{ fields: Array.from({ length: 26 }, () => ({ name: 'a', value: 'b' })) }],
      [{ image: { url: 'https://elsewhere.example/x.png' } }],
      [{ thumbnail: { url: mp3Url } }],
      [{ url: 'javascript:alert(1)' }],
      Array.from({ length: 11 }, () => ({ title: 't' })),
      [{}],
    ];
    for (const embeds of cases)
      expectError(
        await h.as(w.bot.token).post(ch(), { embeds }),
        400,
        'VALIDATION_ERROR',
        JSON.stringify(embeds).slice(0, 80),
      );
  });

  it('D61: a DM reply and a DM mention of the other party', async () => {
    const dm = await expectStatus(await h.as(w.bot.token).post(`/users/${w.human.id}/dm`), 200);
    const url = `/dm/channels/${dm.body.channelId}/messages`;
    const q = await expectStatus(await h.as(w.human.token).post(url, { content: 'dm?' }), 200);
    const a = await expectStatus(
      await h.as(w.bot.token).post(url, {
        content: `<@${w.human.id}> <@${w.owner.id}> @everyone`,
        messageReference: { messageId: q.body.id },
      }),
      200,
    );
    expect(a.body.mentions).toEqual([w.human.id]);
    expect(a.body).not.toHaveProperty('mentionEveryone');
    expect(a.body.referencedMessage.id).toBe(q.body.id);
    expect(a.body).not.toHaveProperty('guildId');
  });

  it('D61: an edit keeps attachments and reference and re-reads mentions', async () => {
    const q = await expectStatus(await h.as(w.human.token).post(ch(), { content: 'q' }), 200);
    const m = await expectStatus(
      await h.as(w.bot.token).post(ch(), {
        content: 'first',
        attachments: [pngUrl],
        messageReference: { messageId: q.body.id },
      }),
      200,
    );
    await expectStatus(
      await h.as(w.bot.token).put(`${ch()}/${m.body.id}`, { content: `now <@${w.owner.id}>` }),
      200,
    );
    const list = await h.as(w.bot.token).get(`${ch()}?limit=1`);
    const got = list.body.messages[0];
    expect(got.attachments).toEqual(m.body.attachments);
    expect(got.reference).toEqual(m.body.reference);
    expect(got.mentions.sort()).toEqual([w.human.id, w.owner.id].sort());
  });
});

describe('D62 mention grammar (unit)', () => {
  it('reads the four forms, skips code and escapes', () => {
    expect(parseMentions('<@1> <@&2> <#3> @here')).toEqual({
      users: [1],
      roles: [2],
      channels: [3],
      everyone: true,
    });
    expect(parseMentions('```\n<@1>\n``` `@everyone` \\@everyone \\<@2>')).toEqual({
      users: [],
      roles: [],
      channels: [],
      everyone: false,
    });
  });
});
