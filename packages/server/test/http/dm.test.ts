import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  dialect,
  expectStatus,
  join,
  makeBot,
  makeUser,
  makeWorld,
  type Harness,
  type World,
  expectError,
} from '../helpers/harness.js';

// Acceptance 7 (issue 2): opening DMs (D21) — idempotent, also under concurrent calls (a real
// race on PostgreSQL, where the pool runs the calls on separate connections), and its refusals.

dbDescribe('DM channels (D21)', () => {
  let h: Harness;
  let w: World;

  beforeAll(async () => {
    h = await createHarness();
    w = await makeWorld(h);
  });
  afterAll(async () => h.close());

  /** How many DM channels exist between two users (the database is the witness). */
  const dmCount = async (a: number, b: number): Promise<number> => {
    const rows = await h.services.domain.db
      .selectFrom('channels')
      .select('id')
      .where('dm_user_low', '=', Math.min(a, b))
      .where('dm_user_high', '=', Math.max(a, b))
      .execute();
    return rows.length;
  };

  it('opening twice gives the same {channelId, recipientId}; from the other side recipientId is the other party', async () => {
    const first = await expectStatus(await h.as(w.bot.token).post(`/users/${w.human.id}/dm`), 200);
    const again = await expectStatus(await h.as(w.bot.token).post(`/users/${w.human.id}/dm`), 200);
    expect(first.body).toEqual({ channelId: expect.any(Number), recipientId: w.human.id });
    expect(again.body).toEqual(first.body);
    const back = await expectStatus(
      await h.as(w.human.token).post(`/users/${w.bot.userId}/dm`),
      200,
    );
    expect(back.body).toEqual({ channelId: first.body.channelId, recipientId: w.bot.userId });
    expect(await dmCount(w.bot.userId, w.human.id)).toBe(1);
  });

  it(`10 concurrent opens make one channel [${dialect}]`, async () => {
    const a = await makeUser(h, 'racer-a');
    const owner = await makeUser(h, 'racer-owner');
    const b = await makeBot(h, owner.id, 'racer-bot');
    await join(h, w.guildId, a.id);
    await join(h, w.guildId, b.userId);
    const calls = Array.from({ length: 10 }, () => h.as(b.token).post(`/users/${a.id}/dm`));
    const replies = await Promise.all(calls);
    for (const r of replies) expect(r.status, r.raw).toBe(200);
    const ids = new Set(replies.map((r) => r.body.channelId as number));
    expect(ids.size).toBe(1);
    for (const r of replies) expect(r.body.recipientId).toBe(a.id);
    expect(await dmCount(a.id, b.userId)).toBe(1);
  });

  it('10 concurrent opens from both sides at once make one channel, each side naming the other', async () => {
    const a = await makeUser(h, 'both-a');
    const c = await makeUser(h, 'both-c');
    await join(h, w.guildId, a.id);
    await join(h, w.guildId, c.id);
    const replies = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        i % 2 === 0
          ? h.as(a.token).post(`/users/${c.id}/dm`)
          : h.as(c.token).post(`/users/${a.id}/dm`),
      ),
    );
    for (const r of replies) expect(r.status, r.raw).toBe(200);
    expect(new Set(replies.map((r) => r.body.channelId as number)).size).toBe(1);
    replies.forEach((r, i) => expect(r.body.recipientId).toBe(i % 2 === 0 ? c.id : a.id));
    expect(await dmCount(a.id, c.id)).toBe(1);
  });

  it('no such user → 404 (a bot id is not a user id)', async () => {
    expectError(await h.as(w.bot.token).post('/users/9007199254740991/dm'), 404, 'NOT_FOUND');
    // D4: the bot's id and its bot user's id differ; only the user id names a user.
    const owner = await makeUser(h, 'id-owner');
    const other = await makeBot(h, owner.id, 'id-bot');
    await join(h, w.guildId, other.userId);
    expectError(await h.as(w.human.token).post(`/users/${other.id}/dm`), 404, 'NOT_FOUND');
    expect((await h.as(w.human.token).post(`/users/${other.userId}/dm`)).status).toBe(200);
  });

  it('the caller itself → 400, for bots and people', async () => {
    expectError(await h.as(w.bot.token).post(`/users/${w.bot.userId}/dm`), 400, 'VALIDATION_ERROR');
    expectError(await h.as(w.human.token).post(`/users/${w.human.id}/dm`), 400, 'VALIDATION_ERROR');
    expect(await dmCount(w.human.id, w.human.id)).toBe(0);
  });

  it('a bot opening a DM with another bot → 403, even in a shared guild', async () => {
    const owner = await makeUser(h, 'bb-owner');
    const other = await makeBot(h, owner.id, 'other-bot');
    await join(h, w.guildId, other.userId);
    expectError(await h.as(w.bot.token).post(`/users/${other.userId}/dm`), 403, 'FORBIDDEN');
    expectError(await h.as(other.token).post(`/users/${w.bot.userId}/dm`), 403, 'FORBIDDEN');
    expect(await dmCount(w.bot.userId, other.userId)).toBe(0);
  });

  it('no shared guild → 403, whichever side opens; people may open DMs with bots', async () => {
    const loner = await makeUser(h, 'loner');
    expectError(await h.as(w.bot.token).post(`/users/${loner.id}/dm`), 403, 'FORBIDDEN');
    expectError(await h.as(loner.token).post(`/users/${w.bot.userId}/dm`), 403, 'FORBIDDEN');
    expectError(await h.as(loner.token).post(`/users/${w.human.id}/dm`), 403, 'FORBIDDEN');
    // The bot's owner is a person too, but owning a bot is not sharing a guild with it.
    const owner = await makeUser(h, 'lonely-owner');
    const ownBot = await makeBot(h, owner.id, 'own-bot');
    expectError(await h.as(owner.token).post(`/users/${ownBot.userId}/dm`), 403, 'FORBIDDEN');
    expect(await dmCount(loner.id, w.bot.userId)).toBe(0);
    // Once they share a guild, the person can open a DM with the bot.
    await join(h, w.guildId, loner.id);
    const r = await expectStatus(await h.as(loner.token).post(`/users/${w.bot.userId}/dm`), 200);
    expect(r.body.recipientId).toBe(w.bot.userId);
    const fromBot = await expectStatus(await h.as(w.bot.token).post(`/users/${loner.id}/dm`), 200);
    expect(fromBot.body).toEqual({ channelId: r.body.channelId, recipientId: loner.id });
  });

  it('a DM channel the caller is not part of → 403 on all its message routes (D21)', async () => {
    const open = await expectStatus(await h.as(w.bot.token).post(`/users/${w.human.id}/dm`), 200);
    const ch = open.body.channelId as number;
    const msg = await expectStatus(
      await h.as(w.human.token).post(`/dm/channels/${ch}/messages`, { content: 'private' }),
      200,
    );
    // A third party in the same guild, a bot in the same guild, and the guild owner.
    const third = await makeUser(h, 'third');
    await join(h, w.guildId, third.id);
    const owner = await makeUser(h, 'tp-owner');
    const thirdBot = await makeBot(h, owner.id, 'third-bot');
    await join(h, w.guildId, thirdBot.userId);
    for (const token of [third.token, thirdBot.token, w.owner.token]) {
      const c = h.as(token);
      expectError(await c.get(`/dm/channels/${ch}/messages`), 403, 'FORBIDDEN');
      expectError(await c.post(`/dm/channels/${ch}/messages`, { content: 'x' }), 403, 'FORBIDDEN');
      expectError(
        await c.put(`/dm/channels/${ch}/messages/${msg.body.id}`, { content: 'x' }),
        403,
        'FORBIDDEN',
      );
      expectError(await c.delete(`/dm/channels/${ch}/messages/${msg.body.id}`), 403, 'FORBIDDEN');
    }
    // The two parties still read the untouched conversation.
    for (const token of [w.bot.token, w.human.token]) {
      const list = await expectStatus(await h.as(token).get(`/dm/channels/${ch}/messages`), 200);
      expect(list.body.messages).toEqual([msg.body]);
    }
  });

  it('DM messages carry no guildId; both parties send, edit and delete their own (D17)', async () => {
    const open = await expectStatus(
      await h.as(w.human.token).post(`/users/${w.bot.userId}/dm`),
      200,
    );
    const ch = open.body.channelId as number;
    const fromHuman = await expectStatus(
      await h.as(w.human.token).post(`/dm/channels/${ch}/messages`, { content: 'hi bot' }),
      200,
    );
    const fromBot = await expectStatus(
      await h.as(w.bot.token).post(`/dm/channels/${ch}/messages`, { content: 'hi human' }),
      200,
    );
    expect(fromHuman.body).not.toHaveProperty('guildId');
    // D56 revises D18: a bot author gains `isBot: true`
    expect(fromBot.body.author).toEqual({ id: w.bot.userId, name: 'bot', isBot: true });
    expect(fromBot.body.channelId).toBe(ch);
    const edit = await expectStatus(
      await h.as(w.human.token).put(`/dm/channels/${ch}/messages/${fromHuman.body.id}`, {
        content: 'hi again',
      }),
      200,
    );
    expect(edit.body).toEqual({
      id: fromHuman.body.id,
      channelId: ch,
      content: 'hi again',
      editedTimestamp: expect.any(String),
    });
    expect(
      (await h.as(w.bot.token).delete(`/dm/channels/${ch}/messages/${fromBot.body.id}`)).status,
    ).toBe(204);
  });
});
