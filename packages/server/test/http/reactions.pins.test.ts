import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '@parley/protocol';
import {
  createHarness,
  dbDescribe,
  expectError,
  expectStatus,
  makeBot,
  join,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';
import { PeopleEvents } from '../helpers/guild-admin.js';
import { readBotLog, ZERO_KEY } from '../../src/events/log.js';
import { normalizeEmoji } from '../../src/domain/messages/emoji.js';

const END = { xid: Number.MAX_SAFE_INTEGER, pos: Number.MAX_SAFE_INTEGER };
const enc = encodeURIComponent;

// D63 (issue 24): reactions, pins, their events, and bots' subscriptions — for the gateway and
// the webhook alike; D56: a bot that subscribes to nothing sees exactly the eight types.
dbDescribe('reactions, pins and subscriptions (D63, D56)', () => {
  let h: Harness;
  let w: World;
  let plain: World['bot'];
  let people: PeopleEvents;
  const ch = () => `/channels/${w.channelId}`;
  const msg = async (token: string, content = 'm') =>
    (await expectStatus(await h.as(token).post(`${ch()}/messages`, { content }), 200)).body;
  const botTypes = async (botId: number) =>
    (await readBotLog(h.services.domain.db, botId, ZERO_KEY, END, 10_000)).map((r) => r.type);

  beforeAll(async () => {
    h = await createHarness({
      env: { PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true', PARLEY_LINK_PREVIEWS: 'off' },
    });
    w = await makeWorld(h);
    plain = await makeBot(h, w.human.id, 'plain');
    await join(h, w.guildId, plain.userId);
    people = new PeopleEvents(h);
  });
  afterAll(async () => {
    people.stop();
    await h.close();
  });

  it('D63: the emoji is one Unicode emoji from the data, VS16 normalised', () => {
    expect(normalizeEmoji('👍')).toBe('👍');
    expect(normalizeEmoji('❤')).toBe('❤\uFE0F');
    expect(normalizeEmoji('❤\uFE0F')).toBe('❤\uFE0F');
    expect(normalizeEmoji('🏳\u200D🌈')).toBe('🏳\uFE0F\u200D🌈');
    expect(normalizeEmoji('👍🏽')).toBe('👍🏽');
    expect(normalizeEmoji('🇫🇷')).toBe('🇫🇷');
    expect(normalizeEmoji('#\u20E3')).toBe('#\uFE0F\u20E3');
    for (const bad of ['a', ':)', '👍👍', '1', '', '\uFE0F', '<b>', 'x'.repeat(40)])
      expect(normalizeEmoji(bad), bad).toBeUndefined();
  });

  it('D63: react, count and `me` per reader, the same emoji with or without VS16', async () => {
    const m = await msg(w.human.token);
    const r = (token: string, e: string) =>
      h.as(token).put(`${ch()}/messages/${m.id}/reactions/${enc(e)}/@me`);
    await expectStatus(await r(w.human.token, '❤'), 204);
    await expectStatus(await r(w.bot.token, '❤\uFE0F'), 204);
    await expectStatus(await r(w.bot.token, '❤'), 204); // again: no change
    await expectStatus(await r(w.bot.token, '👍'), 204);
    const mine = (await h.as(w.human.token).get(`${ch()}/messages?limit=1`)).body.messages[0];
    expect(mine.reactions).toEqual([
      { emoji: '❤\uFE0F', count: 2, me: true },
      { emoji: '👍', count: 1, me: false },
    ]);
    const theirs = (await h.as(w.owner.token).get(`${ch()}/messages?limit=1`)).body.messages[0];
    expect(theirs.reactions.map((x: { me: boolean }) => x.me)).toEqual([false, false]);
    const who = await h
      .as(w.owner.token)
      .get(`${ch()}/messages/${m.id}/reactions/${enc('❤')}?limit=1`);
    expect(who.status).toBe(200);
    expect(who.body.hasMore).toBe(true);
    expect(who.body.users).toHaveLength(1);
    const rest = await h
      .as(w.owner.token)
      .get(`${ch()}/messages/${m.id}/reactions/${enc('❤')}?after=${who.body.users[0].id}`);
    expect(rest.body.hasMore).toBe(false);
    expect([...who.body.users, ...rest.body.users].map((u: { id: number }) => u.id).sort()).toEqual(
      [w.human.id, w.bot.userId].sort(),
    );
    // people heard each change once, for the channel's audience (D51)
    const adds = people.of('MESSAGE_REACTION_ADD').filter((e) => e.data.messageId === m.id);
    expect(adds).toHaveLength(3);
    expect(adds[0]?.data).toEqual({
      userId: w.human.id,
      channelId: w.channelId,
      messageId: m.id,
      guildId: w.guildId,
      emoji: '❤\uFE0F',
    });
    expect(adds[0]?.audience).toEqual({
      kind: 'channel',
      guildId: w.guildId,
      channelId: w.channelId,
    });
  });

  it('D63: bad emoji 400, unknown message 404, the 21st distinct emoji 409', async () => {
    const m = await msg(w.human.token);
    const put = (e: string) =>
      h.as(w.human.token).put(`${ch()}/messages/${m.id}/reactions/${enc(e)}/@me`);
    for (const bad of ['a', '👍👍', ':smile:', '%'])
      expectError(await put(bad), 400, 'VALIDATION_ERROR', bad);
    expectError(
      await h.as(w.human.token).put(`${ch()}/messages/12345/reactions/${enc('👍')}/@me`),
      404,
      'NOT_FOUND',
    );
    const twenty = [...'😀😃😄😁😆😅😂🤣😊😇🙂🙃😉😌😍🥰😘😗😙😚'];
    expect(twenty).toHaveLength(20);
    for (const e of twenty) await expectStatus(await put(e), 204);
    expectError(await put('😋'), 409, 'CONFLICT');
    // an existing one may still be added by someone else
    await expectStatus(
      await h.as(w.bot.token).put(`${ch()}/messages/${m.id}/reactions/${enc('😀')}/@me`),
      204,
    );
  });

  it("D63: removing one's own; someone else's needs MANAGE_MESSAGES", async () => {
    const m = await msg(w.human.token);
    const at = `${ch()}/messages/${m.id}/reactions/${enc('👍')}`;
    await expectStatus(await h.as(w.human.token).put(`${at}/@me`), 204);
    await expectStatus(await h.as(w.bot.token).put(`${at}/@me`), 204);
    expectError(await h.as(w.human.token).delete(`${at}/${w.bot.userId}`), 403, 'FORBIDDEN');
    await expectStatus(await h.as(w.owner.token).delete(`${at}/${w.bot.userId}`), 204);
    await expectStatus(await h.as(w.human.token).delete(`${at}/@me`), 204);
    await expectStatus(await h.as(w.human.token).delete(`${at}/@me`), 204); // already gone
    const got = (await h.as(w.human.token).get(`${ch()}/messages?limit=1`)).body.messages[0];
    expect(got).not.toHaveProperty('reactions');
    const removes = people.of('MESSAGE_REACTION_REMOVE').filter((e) => e.data.messageId === m.id);
    expect(removes.map((e) => e.data.userId)).toEqual([w.bot.userId, w.human.id]);
  });

  it('D63: pins — MANAGE_MESSAGES, newest pin first, `pinned`, 51st → 409, CHANNEL_PINS_UPDATE', async () => {
    const other = await expectStatus(
      await h.admin.post(`/guilds/${w.guildId}/channels`, { name: 'pins' }),
      201,
    );
    const c = `/channels/${other.body.id}`;
    const ids: number[] = [];
    for (let i = 0; i < 51; i++)
      ids.push(
        (
          await expectStatus(
            await h.as(w.human.token).post(`${c}/messages`, { content: `p${i}` }),
            200,
          )
        ).body.id,
      );
    expectError(await h.as(w.human.token).put(`${c}/pins/${ids[0]}`), 403, 'FORBIDDEN');
    people.clear();
    for (const id of ids.slice(0, 50))
      await expectStatus(await h.as(w.owner.token).put(`${c}/pins/${id}`), 204);
    await expectStatus(await h.as(w.owner.token).put(`${c}/pins/${ids[0]}`), 204); // again
    expect(people.of('CHANNEL_PINS_UPDATE')).toHaveLength(50);
    expect(people.of('CHANNEL_PINS_UPDATE')[0]?.data).toEqual({
      channelId: other.body.id,
      guildId: w.guildId,
    });
    expectError(await h.as(w.owner.token).put(`${c}/pins/${ids[50]}`), 409, 'CONFLICT');
    const pins = await expectStatus(await h.as(w.human.token).get(`${c}/pins`), 200);
    expect(pins.body.messages).toHaveLength(50);
    expect(pins.body.messages[0].pinned).toBe(true);
    await expectStatus(await h.as(w.owner.token).delete(`${c}/pins/${ids[0]}`), 204);
    await expectStatus(await h.as(w.owner.token).put(`${c}/pins/${ids[50]}`), 204);
    const after = await h.as(w.human.token).get(`${c}/pins`);
    expect(after.body.messages[0].id).toBe(ids[50]);
    expect(after.body.messages.map((m: { id: number }) => m.id)).not.toContain(ids[0]);
    const listed = await h.as(w.human.token).get(`${c}/messages?limit=1`);
    expect(listed.body.messages[0].pinned).toBe(true);
    expectError(await h.as(w.owner.token).put(`${c}/pins/${ids[0]}9`), 404, 'NOT_FOUND');
  });

  it('D63: reactions and pins in a DM, either party; the events go to both', async () => {
    const dm = await expectStatus(await h.as(w.bot.token).post(`/users/${w.human.id}/dm`), 200);
    const c = `/dm/channels/${dm.body.channelId}`;
    const m = (
      await expectStatus(await h.as(w.bot.token).post(`${c}/messages`, { content: 'dm' }), 200)
    ).body;
    people.clear();
    await expectStatus(
      await h.as(w.human.token).put(`${c}/messages/${m.id}/reactions/${enc('🎉')}/@me`),
      204,
    );
    await expectStatus(await h.as(w.human.token).put(`${c}/pins/${m.id}`), 204);
    const add = people.of('MESSAGE_REACTION_ADD')[0];
    expect(add?.data).toEqual({
      userId: w.human.id,
      channelId: dm.body.channelId,
      messageId: m.id,
      emoji: '🎉',
    });
    expect(add?.audience).toEqual({ kind: 'users', userIds: expect.arrayContaining([w.human.id]) });
    expect(people.of('CHANNEL_PINS_UPDATE')[0]?.data).toEqual({ channelId: dm.body.channelId });
    expectError(
      await h.as(w.bot.token).delete(`${c}/messages/${m.id}/reactions/${enc('🎉')}/${w.human.id}`),
      403,
      'FORBIDDEN',
    );
    const pins = await h.as(w.bot.token).get(`${c}/pins`);
    expect(pins.body.messages[0].id).toBe(m.id);
  });

  it('D56: a bot that subscribes to nothing receives exactly the eight types — and the same messages', async () => {
    const before = await botTypes(plain.id);
    // everything new happens around it
    const q = await msg(w.human.token, 'question');
    const reply = (
      await expectStatus(
        await h.as(w.bot.token).post(`${ch()}/messages`, {
          content: `<@${w.human.id}> answer`,
          messageReference: { messageId: q.id },
        }),
        200,
      )
    ).body;
    await h.as(w.human.token).put(`${ch()}/messages/${q.id}/reactions/${enc('👍')}/@me`);
    await h.as(w.human.token).delete(`${ch()}/messages/${q.id}/reactions/${enc('👍')}/@me`);
    await h.as(w.owner.token).put(`${ch()}/pins/${q.id}`);
    await h.admin.patch(`/channels/${w.channelId}`, { topic: 'changed' });
    const plainMsg = await msg(w.human.token, 'plain text');
    const rows = (await readBotLog(h.services.domain.db, plain.id, ZERO_KEY, END, 10_000)).slice(
      before.length,
    );
    for (const r of rows) expect(EVENT_TYPES as readonly string[]).toContain(r.type);
    expect(rows.map((r) => r.type)).toEqual(['MESSAGE_CREATE', 'MESSAGE_CREATE', 'MESSAGE_CREATE']);
    // the plain message is exactly D17–D18's shape
    expect(JSON.parse(rows[2]?.data ?? '{}')).toEqual(plainMsg);
    expect(Object.keys(plainMsg).sort()).toEqual(
      ['author', 'channelId', 'content', 'guildId', 'id', 'timestamp'].sort(),
    );
    // the reply adds only its own new fields
    expect(JSON.parse(rows[1]?.data ?? '{}')).toEqual(reply);
  });

  it('D63: a subscribed bot receives its types on the gateway log and the webhook alike', async () => {
    const sub = await makeBot(h, w.owner.id, 'sub');
    await join(h, w.guildId, sub.userId);
    await expectStatus(
      await h.admin.put(`/bots/${sub.id}/webhook`, { url: 'https://127.0.0.1:9/hook' }),
      200,
    );
    const me = await h.as(sub.token).get('/bot/me');
    expect(me.body).not.toHaveProperty('events'); // D56: absent when none
    expectError(
      await h.as(sub.token).patch('/bot/me', { events: ['NOT_A_TYPE'] }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await h.as(sub.token).patch('/bot/me', { events: ['MESSAGE_CREATE'] }),
      400,
      'VALIDATION_ERROR',
    );
    const set = await expectStatus(
      await h.as(sub.token).patch('/bot/me', {
        events: ['MESSAGE_REACTION_ADD', 'CHANNEL_PINS_UPDATE', 'CHANNEL_UPDATE'],
      }),
      200,
    );
    expect(set.body.events).toEqual([
      'MESSAGE_REACTION_ADD',
      'CHANNEL_PINS_UPDATE',
      'CHANNEL_UPDATE',
    ]);
    expect((await h.as(sub.token).get('/bot/me')).body.events).toHaveLength(3);
    const start = (await botTypes(sub.id)).length;
    const m = await msg(w.human.token);
    await h.as(w.human.token).put(`${ch()}/messages/${m.id}/reactions/${enc('👍')}/@me`);
    await h.as(w.human.token).delete(`${ch()}/messages/${m.id}/reactions/${enc('👍')}/@me`);
    await h.as(w.owner.token).put(`${ch()}/pins/${m.id}`);
    await h.admin.patch(`/channels/${w.channelId}`, { topic: 'again' });
    const types = (await botTypes(sub.id)).slice(start);
    expect(types).toEqual([
      'MESSAGE_CREATE',
      'MESSAGE_REACTION_ADD',
      'CHANNEL_PINS_UPDATE',
      'CHANNEL_UPDATE',
    ]);
    const hooks = await h.services.domain.db
      .selectFrom('webhook_deliveries')
      .select(['event_type'])
      .where('bot_id', '=', sub.id)
      .orderBy('id', 'asc')
      .execute();
    expect(hooks.map((r) => r.event_type).slice(-4)).toEqual(types);
    // the owner's PATCH /app/v1/bots/:id sets it too ([] = the eight only)
    const cleared = await expectStatus(
      await h.people(w.owner.token).patch(`/bots/${sub.id}`, { events: [] }),
      200,
    );
    expect(cleared.body).not.toHaveProperty('events');
    const n = (await botTypes(sub.id)).length;
    await h.as(w.human.token).put(`${ch()}/messages/${m.id}/reactions/${enc('🎉')}/@me`);
    expect((await botTypes(sub.id)).length).toBe(n);
  });
});

describe('D63 emoji (unit)', () => {
  it('keeps keycaps and skin tones whole', () => {
    expect(normalizeEmoji('1\uFE0F\u20E3')).toBe('1\uFE0F\u20E3');
    expect(normalizeEmoji('👨\u200D👩\u200D👧')).toBe('👨\u200D👩\u200D👧');
  });
});
