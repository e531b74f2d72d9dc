import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Message } from '@parley/protocol';
import type { PeopleDispatch } from '../../src/domain/events/recorder.js';
import { notifyTargets } from '../../src/domain/notifications/should-notify.js';
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

// D66: read states' mentionCount, kept as messages arrive (direct, role, @everyone/@here with and
// without D57's MENTION_EVERYONE, edits adding and removing, deletes, reset on read, DMs), and
// notification settings (validation, precedence) as notifyTargets — the push sender's one
// question — answers them.
dbDescribe('D66 mention counts and notification settings', () => {
  let h: Harness;
  let w: World;
  let cat: { id: number; token: string };
  let roleId: number;
  let secretId: number;
  let dmId: number;
  const acks: PeopleDispatch[] = [];

  beforeAll(async () => {
    h = await createHarness();
    w = await makeWorld(h);
    cat = await makeUser(h, 'cat');
    const role = await expectStatus(
      await h.admin.post(`/guilds/${w.guildId}/roles`, { name: 'Cats', permissions: 0 }),
      201,
    );
    roleId = role.body.id;
    await join(h, w.guildId, cat.id, [roleId]);
    const secret = await expectStatus(
      await h.admin.post(`/guilds/${w.guildId}/channels`, { name: 'secret' }),
      201,
    );
    secretId = secret.body.id;
    // @everyone may not VIEW #secret; the role Cats may.
    await expectStatus(
      await h.admin.put(`/channels/${secretId}/overwrites/${w.guildId}`, { allow: 0, deny: 1 }),
      200,
    );
    await expectStatus(
      await h.admin.put(`/channels/${secretId}/overwrites/${roleId}`, { allow: 1, deny: 0 }),
      200,
    );
    dmId = (await expectStatus(await h.as(w.owner.token).post(`/users/${w.human.id}/dm`), 200)).body
      .channelId;
    h.services.events.onPeople((e) => {
      if (e.type === 'MESSAGE_ACK') acks.push(e);
    });
  });
  afterAll(async () => h.close());

  const say = async (token: string, content: string, channelId = w.channelId): Promise<Message> =>
    (
      await expectStatus(
        await h.as(token).post(`/channels/${channelId}/messages`, { content }),
        200,
      )
    ).body as Message;
  const edit = async (token: string, id: number, content: string) =>
    expectStatus(
      await h.as(token).put(`/channels/${w.channelId}/messages/${id}`, { content }),
      200,
    );
  /** the person's mentionCount per channel (GET read states) */
  const counts = async (token: string): Promise<Map<number, number>> => {
    const r = await expectStatus(await h.people(token).get('/users/@me/read-states'), 200);
    return new Map(
      (r.body.readStates as Array<{ channelId: number; mentionCount: number }>).map((s) => [
        s.channelId,
        s.mentionCount,
      ]),
    );
  };
  const count = async (token: string, channelId = w.channelId) =>
    (await counts(token)).get(channelId) ?? 0;
  const read = async (token: string, channelId: number, messageId: number) =>
    expect((await h.people(token).put(`/channels/${channelId}/read`, { messageId })).status).toBe(
      204,
    );
  const readAll = async (token: string, channelId = w.channelId) => {
    const last = await say(w.owner.token, 'marker', channelId);
    await read(token, channelId, last.id);
  };

  describe('mention counts', () => {
    it('a direct mention counts for the one mentioned (a channel never marked: lastReadId 0)', async () => {
      await say(w.owner.token, `hi <@${w.human.id}>`);
      await say(w.bot.token, `from a bot <@${w.human.id}>`);
      const r = await expectStatus(
        await h.people(w.human.token).get('/users/@me/read-states'),
        200,
      );
      expect(r.body).toEqual({
        readStates: [{ channelId: w.channelId, lastReadId: 0, mentionCount: 2 }],
      });
      expect(await count(cat.token)).toBe(0);
      // the author never counts their own mention
      await say(w.human.token, `me <@${w.human.id}>`);
      expect(await count(w.human.token)).toBe(2);
    });

    it('a mention counts only for someone who can VIEW the channel, as their roles say at the time of the send', async () => {
      // #secret: @everyone may not VIEW, the role Cats may; the person's standing is the access
      // check's own (cached until a write changes it), so a role given or taken counts at once.
      const setRoles = async (roles: number[]) =>
        expect(
          (await h.admin.put(`/guilds/${w.guildId}/members/${w.human.id}`, { roles })).status,
        ).toBeLessThan(300);
      await readAll(cat.token, secretId);
      const before = {
        human: await count(w.human.token, secretId),
        cat: await count(cat.token, secretId),
      };
      await say(w.owner.token, `both <@${w.human.id}> <@${cat.id}>`, secretId);
      expect(await count(w.human.token, secretId)).toBe(before.human);
      expect(await count(cat.token, secretId)).toBe(before.cat + 1);
      await setRoles([roleId]);
      await say(w.owner.token, `now <@${w.human.id}>`, secretId);
      expect(await count(w.human.token, secretId)).toBe(before.human + 1);
      await setRoles([]);
      await say(w.owner.token, `again <@${w.human.id}>`, secretId);
      expect(await count(w.human.token, secretId)).toBe(before.human + 1);
      // as it was: nothing unread in #secret, and no role
      await readAll(cat.token, secretId);
      await setRoles([roleId]);
      await readAll(w.human.token, secretId);
      await setRoles([]);
    });

    it('reading resets to 0; reading part of the way leaves what is past the mark; MESSAGE_ACK carries it', async () => {
      const a = await say(w.owner.token, `one <@${w.human.id}>`);
      const b = await say(w.owner.token, `two <@${w.human.id}>`);
      expect(await count(w.human.token)).toBe(4);
      acks.length = 0;
      await read(w.human.token, w.channelId, a.id);
      expect(await count(w.human.token)).toBe(1);
      expect(acks).toHaveLength(1);
      expect(acks[0]?.audience).toEqual({ kind: 'users', userIds: [w.human.id] });
      expect(JSON.parse(acks[0]?.data ?? '')).toEqual({
        channelId: w.channelId,
        lastReadId: a.id,
        mentionCount: 1,
      });
      await read(w.human.token, w.channelId, b.id);
      expect(await count(w.human.token)).toBe(0);
      expect(JSON.parse(acks[1]?.data ?? '')).toEqual({
        channelId: w.channelId,
        lastReadId: b.id,
        mentionCount: 0,
      });
      // a mark older than the stored one changes nothing (D48), the count stays 0
      await read(w.human.token, w.channelId, a.id);
      expect(JSON.parse(acks[2]?.data ?? '')).toMatchObject({ lastReadId: b.id, mentionCount: 0 });
    });

    it('a role mention counts for its members only', async () => {
      await say(w.owner.token, `cats: <@&${roleId}>`);
      expect(await count(cat.token)).toBe(1);
      expect(await count(w.human.token)).toBe(0);
      await readAll(cat.token);
    });

    it('@everyone and @here count for everyone who can see the channel — only with MENTION_EVERYONE', async () => {
      await say(w.owner.token, '@everyone look');
      expect(await count(w.human.token)).toBe(1);
      expect(await count(cat.token)).toBe(1);
      expect(await count(w.owner.token)).toBe(0);
      await say(w.owner.token, '@here too');
      expect(await count(w.human.token)).toBe(2);
      expect(await count(cat.token)).toBe(2);
      // human lacks MENTION_EVERYONE (D57): nobody is mentioned
      await say(w.human.token, '@everyone and @here');
      expect(await count(cat.token)).toBe(2);
      expect(await count(w.owner.token)).toBe(0);
      // granted through a role, it counts
      await expectStatus(await h.admin.patch(`/roles/${roleId}`, { permissions: 8192 }), 200);
      await say(cat.token, '@everyone now');
      expect(await count(w.human.token)).toBe(3);
      expect(await count(w.owner.token)).toBe(1);
      await expectStatus(await h.admin.patch(`/roles/${roleId}`, { permissions: 0 }), 200);
      // #secret: only those who can VIEW it (cat through the role), not human
      await say(w.owner.token, '@everyone secret', secretId);
      expect(await count(cat.token, secretId)).toBe(1);
      expect(await count(w.human.token, secretId)).toBe(0);
      // a direct mention of someone who cannot see the channel reaches nobody
      await say(w.owner.token, `<@${w.human.id}> secret`, secretId);
      expect(await count(w.human.token, secretId)).toBe(0);
      await readAll(w.human.token);
      await readAll(cat.token);
      await readAll(w.owner.token);
    });

    it('an edit that adds a mention counts; one that removes it uncounts; not once read past', async () => {
      const m = await say(w.owner.token, 'plain');
      await edit(w.owner.token, m.id, `now <@${w.human.id}> and <@${cat.id}>`);
      expect(await count(w.human.token)).toBe(1);
      expect(await count(cat.token)).toBe(1);
      await edit(w.owner.token, m.id, `only <@${cat.id}>`);
      expect(await count(w.human.token)).toBe(0);
      expect(await count(cat.token)).toBe(1);
      // human reads past it: adding human back counts nothing; removing cat's still unread one does
      await read(w.human.token, w.channelId, m.id);
      await edit(w.owner.token, m.id, `back <@${w.human.id}>`);
      expect(await count(w.human.token)).toBe(0);
      expect(await count(cat.token)).toBe(0);
    });

    it('deleting an unread mentioning message uncounts it (author delete and moderation)', async () => {
      const m1 = await say(w.owner.token, `x <@${w.human.id}>`);
      const m2 = await say(w.bot.token, `y <@${w.human.id}>`);
      expect(await count(w.human.token)).toBe(2);
      expect(
        (await h.as(w.owner.token).delete(`/channels/${w.channelId}/messages/${m1.id}`)).status,
      ).toBe(204);
      expect(await count(w.human.token)).toBe(1);
      // the owner deletes the bot's (MANAGE_MESSAGES)
      expect(
        (await h.as(w.owner.token).delete(`/channels/${w.channelId}/messages/${m2.id}`)).status,
      ).toBe(204);
      expect(await count(w.human.token)).toBe(0);
    });

    it('allowedMentions that suppresses a mention leaves the count alone', async () => {
      await expectStatus(
        await h.as(w.owner.token).post(`/channels/${w.channelId}/messages`, {
          content: `quiet <@${w.human.id}>`,
          allowedMentions: { parse: [] },
        }),
        200,
      );
      expect(await count(w.human.token)).toBe(0);
    });

    it('in a DM every message of the other party counts; reading resets', async () => {
      const one = await expectStatus(
        await h.as(w.owner.token).post(`/dm/channels/${dmId}/messages`, { content: 'psst' }),
        200,
      );
      await expectStatus(
        await h.as(w.owner.token).post(`/dm/channels/${dmId}/messages`, { content: 'again' }),
        200,
      );
      expect(await count(w.human.token, dmId)).toBe(2);
      expect(await count(w.owner.token, dmId)).toBe(0);
      await read(w.human.token, dmId, one.body.id);
      expect(await count(w.human.token, dmId)).toBe(1);
    });
  });

  describe('notification settings', () => {
    const put = (token: string, body: unknown) =>
      h.people(token).put('/users/@me/notification-settings', body);

    it('validation: exactly one of guildId/channelId, a level, a date-time; unknown or invisible → 404', async () => {
      expectError(await put(w.human.token, { level: 'all' }), 400, 'VALIDATION_ERROR');
      expectError(
        await put(w.human.token, { guildId: w.guildId, channelId: w.channelId, level: 'all' }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await put(w.human.token, { guildId: w.guildId, level: 'loud' }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await put(w.human.token, { guildId: w.guildId, level: 'all', muteUntil: 'soon' }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await put(w.human.token, { guildId: w.guildId, level: 'all', extra: 1 }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(
        await put(w.human.token, { guildId: 'x', level: 'all' }),
        400,
        'VALIDATION_ERROR',
      );
      expectError(await put(w.human.token, { guildId: 999999999, level: 'all' }), 404, 'NOT_FOUND');
      expectError(
        await put(w.human.token, { channelId: secretId, level: 'all' }),
        404,
        'NOT_FOUND',
      );
      expectError(
        await put(w.human.token, { channelId: 999999999, level: 'all' }),
        404,
        'NOT_FOUND',
      );
      // someone else's DM
      expectError(await put(cat.token, { channelId: dmId, level: 'none' }), 404, 'NOT_FOUND');
      const stranger = await makeUser(h, 'stranger');
      expectError(
        await put(stranger.token, { guildId: w.guildId, level: 'none' }),
        404,
        'NOT_FOUND',
      );
      expectError(
        await h.people(undefined).get('/users/@me/notification-settings'),
        401,
        'UNAUTHORIZED',
      );
    });

    it('PUT → 204, GET lists them; a second PUT replaces the first', async () => {
      expect((await put(cat.token, { guildId: w.guildId, level: 'none' })).status).toBe(204);
      expect(
        (
          await put(cat.token, {
            channelId: secretId,
            level: 'all',
            muteUntil: '2030-01-01T00:00:00.000Z',
          })
        ).status,
      ).toBe(204);
      expect((await put(cat.token, { guildId: w.guildId, level: 'mentions' })).status).toBe(204);
      expect((await put(cat.token, { channelId: dmId, level: 'all' })).status).toBe(404);
      const r = await expectStatus(
        await h.people(cat.token).get('/users/@me/notification-settings'),
        200,
      );
      expect(r.body).toEqual({
        settings: [
          { guildId: w.guildId, level: 'mentions', muteUntil: null },
          { channelId: secretId, level: 'all', muteUntil: '2030-01-01T00:00:00.000Z' },
        ].sort((a, b) => (a.guildId ?? a.channelId ?? 0) - (b.guildId ?? b.channelId ?? 0)),
      });
      expect((await h.people(w.human.token).get('/users/@me/notification-settings')).body).toEqual({
        settings: [],
      });
    });

    it('notifyTargets: defaults, level, the channel winning over its guild, mutes, DMs', async () => {
      const d = h.services.domain;
      const targets = async (token: string, content: string, channelId = w.channelId) =>
        notifyTargets(d, await say(token, content, channelId));
      const human = w.human.id;
      // Defaults: a guild notifies mentions only; a plain message nobody.
      expect(await targets(w.owner.token, `hey <@${human}>`)).toEqual([
        { userId: human, reason: 'mention' },
      ]);
      expect(await targets(w.owner.token, 'plain')).toEqual([]);
      // The guild set to none: nothing, mentions included.
      expect((await put(w.human.token, { guildId: w.guildId, level: 'none' })).status).toBe(204);
      expect(await targets(w.owner.token, `hey <@${human}>`)).toEqual([]);
      // The channel set to all wins over its guild's none: every message, mentions as mentions.
      expect((await put(w.human.token, { channelId: w.channelId, level: 'all' })).status).toBe(204);
      expect(await targets(w.owner.token, 'plain')).toEqual([{ userId: human, reason: 'message' }]);
      expect(await targets(w.owner.token, `hey <@${human}>`)).toEqual([
        { userId: human, reason: 'mention' },
      ]);
      // never the author
      expect(await targets(w.human.token, 'mine')).toEqual([]);
      // Muted (the channel's row): nothing until the mute ends; a past mute is no mute.
      const future = new Date(d.clock.now() + 3_600_000).toISOString();
      const past = new Date(d.clock.now() - 1000).toISOString();
      expect(
        (await put(w.human.token, { channelId: w.channelId, level: 'all', muteUntil: future }))
          .status,
      ).toBe(204);
      expect(await targets(w.owner.token, `hey <@${human}>`)).toEqual([]);
      expect(
        (await put(w.human.token, { channelId: w.channelId, level: 'mentions', muteUntil: past }))
          .status,
      ).toBe(204);
      expect(await targets(w.owner.token, 'plain')).toEqual([]);
      expect(await targets(w.owner.token, `hey <@${human}>`)).toEqual([
        { userId: human, reason: 'mention' },
      ]);
      // Badges count whatever the settings (D66: mentionCount is not a notification).
      expect(await count(w.human.token)).toBeGreaterThan(0);
      // @everyone: every viewer but the author, as their settings say (cat: guild 'mentions').
      expect(await targets(w.owner.token, '@everyone')).toEqual(
        [
          { userId: human, reason: 'mention' },
          { userId: cat.id, reason: 'mention' },
        ].sort((a, b) => a.userId - b.userId),
      );
      // DMs: 'dm' by default; a DM muted notifies nothing.
      const dmSay = async (content: string) =>
        notifyTargets(
          d,
          (
            await expectStatus(
              await h.as(w.owner.token).post(`/dm/channels/${dmId}/messages`, { content }),
              200,
            )
          ).body as Message,
        );
      expect(await dmSay('hello')).toEqual([{ userId: human, reason: 'dm' }]);
      expect(
        (await put(w.human.token, { channelId: dmId, level: 'mentions', muteUntil: future }))
          .status,
      ).toBe(204);
      expect(await dmSay('hello?')).toEqual([]);
      expect((await put(w.human.token, { channelId: dmId, level: 'none' })).status).toBe(204);
      expect(await dmSay('hello??')).toEqual([]);
      expect((await put(w.human.token, { channelId: dmId, level: 'mentions' })).status).toBe(204);
      expect(await dmSay('hello!')).toEqual([{ userId: human, reason: 'dm' }]);
    });
  });
  it('leaving a guild drops its unread mentions and notification settings (a rejoin starts clean)', async () => {
    await say(w.owner.token, `bye <@${cat.id}>`);
    expect(await count(cat.token)).toBeGreaterThan(0);
    expect(
      (
        await h
          .people(cat.token)
          .put('/users/@me/notification-settings', { channelId: w.channelId, level: 'none' })
      ).status,
    ).toBe(204);
    expect((await h.admin.delete(`/guilds/${w.guildId}/members/${cat.id}`)).status).toBe(204);
    expect(await count(cat.token)).toBe(0);
    expect((await h.people(cat.token).get('/users/@me/notification-settings')).body).toEqual({
      settings: [],
    });
  });
});
