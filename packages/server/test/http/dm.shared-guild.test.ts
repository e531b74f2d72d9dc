import { afterAll, beforeAll, expect, it } from 'vitest';
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

// D54 (issue #10, finding 4): a bot removed from every guild it shared with a person could still
// send DMs to, and read DMs with, that person. A bot↔person DM lasts only while the two share a
// guild: every DM send, list, edit and delete re-checks it (403 otherwise), whichever side calls.
// Person↔person DMs are not restricted this way (D21 checks a shared guild only when opening).

dbDescribe('bot DMs need a shared guild at every use (D54)', () => {
  let h: Harness;
  let w: World;
  let dm = 0;
  let botMessage = 0;

  beforeAll(async () => {
    h = await createHarness();
    w = await makeWorld(h);
    dm = (await expectStatus(await h.as(w.bot.token).post(`/users/${w.human.id}/dm`), 200)).body
      .channelId;
    botMessage = (
      await expectStatus(
        await h.as(w.bot.token).post(`/dm/channels/${dm}/messages`, { content: 'hello' }),
        200,
      )
    ).body.id;
    await expectStatus(
      await h.as(w.human.token).post(`/dm/channels/${dm}/messages`, { content: 'hi bot' }),
      200,
    );
  });
  afterAll(async () => h.close());

  const botCalls = () => {
    const bot = h.as(w.bot.token);
    return {
      send: () => bot.post(`/dm/channels/${dm}/messages`, { content: 'still here?' }),
      list: () => bot.get(`/dm/channels/${dm}/messages`),
      edit: () => bot.put(`/dm/channels/${dm}/messages/${botMessage}`, { content: 'edited' }),
      remove: () => bot.delete(`/dm/channels/${dm}/messages/${botMessage}`),
    };
  };

  it('after the bot leaves the last shared guild: its send, list, edit and delete → 403; so is the person’s send', async () => {
    await expectStatus(await h.admin.delete(`/guilds/${w.guildId}/members/${w.bot.userId}`), 204);
    const c = botCalls();
    for (const [what, r] of [
      ['send', await c.send()],
      ['list', await c.list()],
      ['edit', await c.edit()],
      ['delete', await c.remove()],
      [
        'person send',
        await h.as(w.human.token).post(`/dm/channels/${dm}/messages`, { content: 'x' }),
      ],
      ['person list', await h.as(w.human.token).get(`/dm/channels/${dm}/messages`)],
    ] as const)
      expectError(r, 403, 'FORBIDDEN', what);
    // nothing was written
    const rows = await h.services.domain.db
      .selectFrom('messages')
      .select(['content'])
      .where('channel_id', '=', dm)
      .orderBy('id')
      .execute();
    expect(rows.map((r) => r.content)).toEqual(['hello', 'hi bot']);
  });

  it('sharing a guild again restores the DM', async () => {
    await join(h, w.guildId, w.bot.userId);
    const c = botCalls();
    expect((await c.send()).status).toBe(200);
    expect((await c.list()).body.messages.length).toBe(3);
    expect((await c.edit()).status).toBe(200);
    expect((await c.remove()).status).toBe(204);
  });

  it('a person↔person DM outlives their shared guild', async () => {
    const other = await makeUser(h, 'other');
    await join(h, w.guildId, other.id);
    const pdm = (await expectStatus(await h.as(other.token).post(`/users/${w.human.id}/dm`), 200))
      .body.channelId;
    await expectStatus(await h.admin.delete(`/guilds/${w.guildId}/members/${other.id}`), 204);
    expect(
      (await h.as(other.token).post(`/dm/channels/${pdm}/messages`, { content: 'still friends' }))
        .status,
    ).toBe(200);
    expect((await h.as(w.human.token).get(`/dm/channels/${pdm}/messages`)).status).toBe(200);
  });
});
