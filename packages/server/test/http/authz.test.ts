import { SignJWT } from 'jose';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Permission } from '@parley/protocol';
import {
  createHarness,
  dbDescribe,
  expectStatus,
  join,
  makeBot,
  makeUser,
  makeWorld,
  type Harness,
  type Reply,
  type World,
  expectError,
} from '../helpers/harness.js';

// Acceptance 6 (issue 2): authentication (D7–D10) and authorization (D11–D13, D21).

const { VIEW_CHANNEL, SEND_MESSAGES, READ_MESSAGE_HISTORY, ADMINISTRATOR } = Permission;

/** D5 + D7 + D9: exactly `{"error":{"code":"UNAUTHORIZED","message"}}` with WWW-Authenticate. */
function expect401(r: Reply, what = ''): void {
  expect(r.status, `${what} ${r.raw}`).toBe(401);
  expect(r.headers['www-authenticate']).toBe('Bearer');
  expect(r.body).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.any(String) } });
}

const b64 = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');

dbDescribe('authentication (D7–D10)', () => {
  let h: Harness;
  let w: World;
  let msgId: number;
  let dmId: number;

  beforeAll(async () => {
    h = await createHarness();
    w = await makeWorld(h);
    msgId = (
      await expectStatus(
        await h.as(w.bot.token).post(`/channels/${w.channelId}/messages`, { content: 'x' }),
        200,
      )
    ).body.id;
    dmId = (await expectStatus(await h.as(w.bot.token).post(`/users/${w.human.id}/dm`), 200)).body
      .channelId;
  });
  afterAll(async () => h.close());

  const get = (authorization: string | undefined, url = '/api/v1/bot/me') =>
    h.request({
      method: 'GET',
      url,
      headers: authorization === undefined ? {} : { authorization },
    });

  it('every /api/v1 endpoint answers 401 without a token', async () => {
    const routes: Array<['GET' | 'POST' | 'PUT' | 'DELETE', string, unknown?]> = [
      ['GET', '/bot/me'],
      ['POST', `/channels/${w.channelId}/messages`, { content: 'x' }],
      ['GET', `/channels/${w.channelId}/messages`],
      ['PUT', `/channels/${w.channelId}/messages/${msgId}`, { content: 'x' }],
      ['DELETE', `/channels/${w.channelId}/messages/${msgId}`],
      ['GET', `/guilds/${w.guildId}/channels`],
      ['GET', `/channels/${w.channelId}`],
      ['GET', `/guilds/${w.guildId}/members`],
      ['GET', `/guilds/${w.guildId}/members/${w.human.id}`],
      ['POST', `/users/${w.human.id}/dm`],
      ['POST', `/dm/channels/${dmId}/messages`, { content: 'x' }],
      ['GET', `/dm/channels/${dmId}/messages`],
      // Bad input behind a missing token is still a 401: authentication comes first.
      ['GET', '/channels/abc/messages?limit=0'],
    ];
    for (const [method, url, body] of routes) {
      const r = await h.request({
        method,
        url: `/api/v1${url}`,
        ...(body === undefined
          ? {}
          : { payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      });
      expect401(r, `${method} ${url}`);
    }
    // Nothing was changed by the refused calls.
    const list = await h.as(w.bot.token).get(`/channels/${w.channelId}/messages`);
    expect(list.body.messages.map((m: { id: number }) => m.id)).toEqual([msgId]);
  });

  it('missing, empty or malformed Authorization headers → 401 (D9)', async () => {
    for (const header of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      `Bearer${w.bot.token}`,
      `Bearer ${w.bot.token} extra`,
      'Bearer not-a-jwt',
      'Bearer a.b.c',
      'Bearer a.b',
      `Bearer ${w.bot.token}.x`,
      `Bearer ${w.bot.token.slice(0, -2)}`,
      `Bearer ${w.bot.token.split('.').slice(0, 2).join('.')}.`,
    ])
      expect401(await get(header), String(header));
  });

  it('another scheme (Basic, Token, Bot) → 401 even with the right token (D9)', async () => {
    const basic = Buffer.from(`bot:${w.bot.token}`).toString('base64');
    for (const header of [
      `Basic ${basic}`,
      `Basic ${w.bot.token}`,
      `Token ${w.bot.token}`,
      `Bot ${w.bot.token}`,
      w.bot.token,
    ])
      expect401(await get(header), header.slice(0, 6));
  });

  it('a token in the ?token= query is ignored (D9): unauthenticated → 401', async () => {
    expect401(await get(undefined, `/api/v1/bot/me?token=${w.bot.token}`));
    expect401(await get(undefined, `/api/v1/bot/me?access_token=${w.bot.token}`));
    // …and a valid header is not overridden by a bad query token.
    const ok = await get(`Bearer ${w.bot.token}`, '/api/v1/bot/me?token=garbage');
    expect(ok.status).toBe(200);
  });

  it('wrong signature, alg "none" and tampered claims → 401 (D8, D9)', async () => {
    const [head, payload] = w.bot.token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<
      string,
      unknown
    >;
    // Signed with another key.
    const otherKey = new TextEncoder().encode('a-different-secret-of-enough-length');
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(otherKey);
    expect401(await get(`Bearer ${forged}`), 'other key');
    // alg none, no signature.
    expect401(await get(`Bearer ${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`), 'alg none');
    // Claims changed, original signature kept.
    const tampered = `${head}.${b64({ ...claims, sub: String(w.bot.id + 1) })}.${w.bot.token.split('.')[2]}`;
    expect401(await get(`Bearer ${tampered}`), 'tampered');
  });

  it('a well-signed token for an unknown bot or a wrong generation → 401 (D8)', async () => {
    const now = Date.now();
    const unknown = await h.services.codec.sign({ botId: 12345, generation: 1 }, now);
    expect401(await get(`Bearer ${unknown}`), 'unknown bot');
    const future = await h.services.codec.sign({ botId: w.bot.id, generation: 2 }, now);
    expect401(await get(`Bearer ${future}`), 'future generation');
    const current = await h.services.codec.sign({ botId: w.bot.id, generation: 1 }, now);
    expect((await get(`Bearer ${current}`)).status).toBe(200);
  });

  it('a reset token → 401 on the very next request; the new one works (D8)', async () => {
    const owner = await makeUser(h, 'resetter');
    const bot = await makeBot(h, owner.id, 'reset-me');
    expect((await h.as(bot.token).get('/bot/me')).status).toBe(200);
    const reset = await expectStatus(await h.admin.post(`/bots/${bot.id}/token`), 200);
    expect401(await h.as(bot.token).get('/bot/me'), 'old token');
    expect((await h.as(reset.body.token).get('/bot/me')).body.id).toBe(bot.id);
  });

  it('unknown session tokens → 401; a bot user cannot hold a session', async () => {
    expect401(await get('Bearer pus_unknown'), 'unknown session');
    expect401(await get(`Bearer pus_${'A'.repeat(43)}`), 'unknown session');
    const r = await h.admin.post(`/users/${w.bot.userId}/sessions`);
    expectError(r, 400, 'VALIDATION_ERROR');
  });

  it('the scheme name is case-insensitive (RFC 9110): "bearer" works', async () => {
    expect((await get(`bearer ${w.bot.token}`)).status).toBe(200);
  });

  it('a human session token works on the same endpoints (D10) and gets 403 on /bot/me', async () => {
    const me = h.as(w.human.token);
    expectError(await me.get('/bot/me'), 403, 'FORBIDDEN');
    const sent = await expectStatus(
      await me.post(`/channels/${w.channelId}/messages`, { content: 'from a person' }),
      200,
    );
    expect(sent.body.author).toEqual({ id: w.human.id, name: 'human' });
    expect((await me.get(`/channels/${w.channelId}/messages`)).status).toBe(200);
    expect(
      (await me.put(`/channels/${w.channelId}/messages/${sent.body.id}`, { content: 'e' })).status,
    ).toBe(200);
    expect((await me.delete(`/channels/${w.channelId}/messages/${sent.body.id}`)).status).toBe(204);
    expect((await me.get(`/guilds/${w.guildId}/channels`)).status).toBe(200);
    expect((await me.get(`/channels/${w.channelId}`)).status).toBe(200);
    expect((await me.get(`/guilds/${w.guildId}/members`)).status).toBe(200);
    expect((await me.get(`/guilds/${w.guildId}/members/${w.bot.userId}`)).status).toBe(200);
    const dm = await expectStatus(await me.post(`/users/${w.bot.userId}/dm`), 200);
    expect(dm.body).toEqual({ channelId: dmId, recipientId: w.bot.userId });
    expect((await me.post(`/dm/channels/${dmId}/messages`, { content: 'hi bot' })).status).toBe(
      200,
    );
  });
});

dbDescribe('authorization (D11–D13)', () => {
  let h: Harness;
  let w: World;
  /** a bot that is in no guild */
  let outsider: World['bot'];

  beforeAll(async () => {
    h = await createHarness();
    w = await makeWorld(h);
    const owner2 = await makeUser(h, 'owner2');
    outsider = await makeBot(h, owner2.id, 'outsider');
  });
  afterAll(async () => h.close());

  const newChannel = async (name: string): Promise<number> =>
    (await expectStatus(await h.admin.post(`/guilds/${w.guildId}/channels`, { name }), 201)).body
      .id;
  const overwrite = async (channelId: number, roleId: number, allow: number, deny: number) =>
    expectStatus(
      await h.admin.put(`/channels/${channelId}/overwrites/${roleId}`, { allow, deny }),
      200,
    );
  const role = async (permissions: number): Promise<number> =>
    (
      await expectStatus(
        await h.admin.post(`/guilds/${w.guildId}/roles`, { name: `r${permissions}`, permissions }),
        201,
      )
    ).body.id;
  const send = (token: string, channelId: number) =>
    h.as(token).post(`/channels/${channelId}/messages`, { content: 'x' });
  const listed = async (token: string): Promise<number[]> =>
    (
      await expectStatus(await h.as(token).get(`/guilds/${w.guildId}/channels`), 200)
    ).body.channels.map((c: { id: number }) => c.id);

  it('a bot that is not a member gets 403 on the guild’s channels, members and messages (D12)', async () => {
    const msg = await expectStatus(await send(w.bot.token, w.channelId), 200);
    const o = h.as(outsider.token);
    for (const r of [
      await o.get(`/guilds/${w.guildId}/channels`),
      await o.get(`/channels/${w.channelId}`),
      await o.get(`/guilds/${w.guildId}/members`),
      await o.get(`/guilds/${w.guildId}/members/${w.human.id}`),
      await o.get(`/channels/${w.channelId}/messages`),
      await o.post(`/channels/${w.channelId}/messages`, { content: 'x' }),
      await o.put(`/channels/${w.channelId}/messages/${msg.body.id}`, { content: 'x' }),
      await o.delete(`/channels/${w.channelId}/messages/${msg.body.id}`),
    ])
      expectError(r, 403, 'FORBIDDEN');
  });

  it('a bot removed from the guild loses access at once (403)', async () => {
    const owner3 = await makeUser(h, 'owner3');
    const leaver = await makeBot(h, owner3.id, 'leaver');
    await join(h, w.guildId, leaver.userId);
    expect((await send(leaver.token, w.channelId)).status).toBe(200);
    expect((await h.admin.delete(`/guilds/${w.guildId}/members/${leaver.userId}`)).status).toBe(
      204,
    );
    expectError(await send(leaver.token, w.channelId), 403, 'FORBIDDEN');
    expectError(await h.as(leaver.token).get(`/guilds/${w.guildId}/members`), 403, 'FORBIDDEN');
  });

  it('unknown guild, channel, message or user → 404 (D4, D12)', async () => {
    const bot = h.as(w.bot.token);
    const nobody = 4_000_000_000_000;
    for (const r of [
      await bot.get(`/guilds/${nobody}/channels`),
      await bot.get(`/guilds/${nobody}/members`),
      await bot.get(`/guilds/${nobody}/members/${w.human.id}`),
      await bot.get(`/channels/${nobody}`),
      await bot.get(`/channels/${nobody}/messages`),
      await bot.post(`/channels/${nobody}/messages`, { content: 'x' }),
      await bot.put(`/channels/${w.channelId}/messages/${nobody}`, { content: 'x' }),
      await bot.delete(`/channels/${w.channelId}/messages/${nobody}`),
      await bot.get(`/guilds/${w.guildId}/members/${nobody}`),
      await bot.post(`/users/${nobody}/dm`),
      // A channel id is not a guild id, and a guild id is not a channel id.
      await bot.get(`/guilds/${w.channelId}/channels`),
      await bot.get(`/channels/${w.guildId}`),
    ])
      expectError(r, 404, 'NOT_FOUND', r.raw);
  });

  it('a user who is not a member → 404 on the single-member read (D20)', async () => {
    const stranger = await makeUser(h, 'stranger');
    expectError(
      await h.as(w.bot.token).get(`/guilds/${w.guildId}/members/${stranger.id}`),
      404,
      'NOT_FOUND',
    );
  });

  it('a message id from another channel → 404 on edit and delete (D13), guild and DM', async () => {
    const other = await newChannel('other');
    const there = await expectStatus(await send(w.bot.token, other), 200);
    const bot = h.as(w.bot.token);
    expectError(
      await bot.put(`/channels/${w.channelId}/messages/${there.body.id}`, { content: 'x' }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await bot.delete(`/channels/${w.channelId}/messages/${there.body.id}`),
      404,
      'NOT_FOUND',
    );
    const dm = (await expectStatus(await bot.post(`/users/${w.human.id}/dm`), 200)).body.channelId;
    // A guild message through the DM channel, and a DM message through a guild channel.
    expectError(
      await bot.put(`/dm/channels/${dm}/messages/${there.body.id}`, { content: 'x' }),
      404,
      'NOT_FOUND',
    );
    const inDm = await expectStatus(
      await bot.post(`/dm/channels/${dm}/messages`, { content: 'd' }),
      200,
    );
    expectError(
      await bot.delete(`/channels/${w.channelId}/messages/${inDm.body.id}`),
      404,
      'NOT_FOUND',
    );
    // Still there, untouched.
    const list = await bot.get(`/channels/${other}/messages`);
    expect(list.body.messages[0]).toEqual(there.body);
  });

  it('a guild channel id on /dm/channels → 404; a DM channel id on /channels → 404 (D21)', async () => {
    const bot = h.as(w.bot.token);
    const msg = await expectStatus(await send(w.bot.token, w.channelId), 200);
    const dm = (await expectStatus(await bot.post(`/users/${w.human.id}/dm`), 200)).body.channelId;
    const dmMsg = await expectStatus(
      await bot.post(`/dm/channels/${dm}/messages`, { content: 'd' }),
      200,
    );
    for (const r of [
      await bot.get(`/dm/channels/${w.channelId}/messages`),
      await bot.post(`/dm/channels/${w.channelId}/messages`, { content: 'x' }),
      await bot.put(`/dm/channels/${w.channelId}/messages/${msg.body.id}`, { content: 'x' }),
      await bot.delete(`/dm/channels/${w.channelId}/messages/${msg.body.id}`),
      await bot.get(`/channels/${dm}`),
      await bot.get(`/channels/${dm}/messages`),
      await bot.post(`/channels/${dm}/messages`, { content: 'x' }),
      await bot.put(`/channels/${dm}/messages/${dmMsg.body.id}`, { content: 'x' }),
      await bot.delete(`/channels/${dm}/messages/${dmMsg.body.id}`),
    ])
      expectError(r, 404, 'NOT_FOUND', r.raw);
  });

  it('editing another’s message → 403 even as owner or administrator (D13); deleting it → 403 without MANAGE_MESSAGES, 204 with it (revised by D59)', async () => {
    const adminRole = await role(ADMINISTRATOR);
    const admin = await makeUser(h, 'admin');
    await join(h, w.guildId, admin.id, [adminRole]);
    const botMsg = await expectStatus(await send(w.bot.token, w.channelId), 200);
    const humanMsg = await expectStatus(await send(w.human.token, w.channelId), 200);
    const url = (id: number) => `/channels/${w.channelId}/messages/${id}`;
    for (const token of [w.owner.token, admin.token, w.human.token]) {
      expectError(
        await h.as(token).put(url(botMsg.body.id), { content: 'mine' }),
        403,
        'FORBIDDEN',
      );
    }
    // D13 still holds for deleting without MANAGE_MESSAGES (D59 revises it only with the bit).
    expectError(await h.as(w.human.token).delete(url(botMsg.body.id)), 403, 'FORBIDDEN');
    expectError(
      await h.as(w.bot.token).put(url(humanMsg.body.id), { content: 'x' }),
      403,
      'FORBIDDEN',
    );
    expectError(await h.as(w.bot.token).delete(url(humanMsg.body.id)), 403, 'FORBIDDEN');
    // Unchanged and still there.
    const list = await h.as(w.bot.token).get(`/channels/${w.channelId}/messages?limit=5`);
    const ids = list.body.messages.map((m: { id: number }) => m.id);
    expect(ids).toContain(botMsg.body.id);
    expect(ids).toContain(humanMsg.body.id);
    expect(list.body.messages.find((m: { id: number }) => m.id === botMsg.body.id)).toEqual(
      botMsg.body,
    );
    // D59: the owner and an administrator hold MANAGE_MESSAGES: a moderation delete.
    await expectStatus(await h.as(admin.token).delete(url(botMsg.body.id)), 204);
    await expectStatus(await h.as(w.owner.token).delete(url(humanMsg.body.id)), 204);
    // The same in a DM: the other party cannot edit or delete.
    const dm = (await expectStatus(await h.as(w.bot.token).post(`/users/${w.human.id}/dm`), 200))
      .body.channelId;
    const d = await expectStatus(
      await h.as(w.bot.token).post(`/dm/channels/${dm}/messages`, { content: 'bot says' }),
      200,
    );
    expectError(
      await h.as(w.human.token).put(`/dm/channels/${dm}/messages/${d.body.id}`, { content: 'x' }),
      403,
      'FORBIDDEN',
    );
    expectError(
      await h.as(w.human.token).delete(`/dm/channels/${dm}/messages/${d.body.id}`),
      403,
      'FORBIDDEN',
    );
  });

  it('a hidden channel (@everyone denied VIEW_CHANNEL): left out of the list, reading it 403 (D12)', async () => {
    const hidden = await newChannel('hidden');
    await overwrite(hidden, w.guildId, 0, VIEW_CHANNEL);
    expect(await listed(w.bot.token)).not.toContain(hidden);
    expect(await listed(w.bot.token)).toContain(w.channelId);
    for (const r of [
      await h.as(w.bot.token).get(`/channels/${hidden}`),
      await h.as(w.bot.token).get(`/channels/${hidden}/messages`),
      await send(w.bot.token, hidden),
      await h.as(w.human.token).get(`/channels/${hidden}`),
    ])
      expectError(r, 403, 'FORBIDDEN');
    // Without VIEW_CHANNEL even one's own old message cannot be edited.
    const open = await newChannel('soon-hidden');
    const mine = await expectStatus(await send(w.bot.token, open), 200);
    await overwrite(open, w.guildId, 0, VIEW_CHANNEL);
    expectError(
      await h.as(w.bot.token).put(`/channels/${open}/messages/${mine.body.id}`, { content: 'x' }),
      403,
      'FORBIDDEN',
    );
  });

  it('no SEND_MESSAGES: sending 403, reading fine; no READ_MESSAGE_HISTORY: listing 403, sending fine (D12)', async () => {
    const readOnly = await newChannel('read-only');
    await overwrite(readOnly, w.guildId, 0, SEND_MESSAGES);
    expectError(await send(w.bot.token, readOnly), 403, 'FORBIDDEN');
    expect((await h.as(w.bot.token).get(`/channels/${readOnly}/messages`)).status).toBe(200);
    expect((await h.as(w.bot.token).get(`/channels/${readOnly}`)).status).toBe(200);
    expect(await listed(w.bot.token)).toContain(readOnly);

    const writeOnly = await newChannel('write-only');
    await overwrite(writeOnly, w.guildId, 0, READ_MESSAGE_HISTORY);
    expectError(await h.as(w.bot.token).get(`/channels/${writeOnly}/messages`), 403, 'FORBIDDEN');
    const sent = await expectStatus(await send(w.bot.token, writeOnly), 200);
    // The author may still edit and delete (VIEW_CHANNEL is enough for one's own messages).
    expect(
      (
        await h
          .as(w.bot.token)
          .put(`/channels/${writeOnly}/messages/${sent.body.id}`, { content: 'e' })
      ).status,
    ).toBe(200);
  });

  it('a role granting SEND_MESSAGES lets a member send where @everyone cannot (D11)', async () => {
    // The operator API has no route to change @everyone's bits; set them in the database.
    const db = h.services.domain.db;
    const sender = await role(SEND_MESSAGES);
    const g = w.guildId;
    const bot2Owner = await makeUser(h, 'owner-sender');
    const withRole = await makeBot(h, bot2Owner.id, 'with-role');
    await join(h, g, withRole.userId, [sender]);
    try {
      await db
        .updateTable('roles')
        .set({ permissions: VIEW_CHANNEL | READ_MESSAGE_HISTORY })
        .where('id', '=', g)
        .execute();
      expectError(await send(w.bot.token, w.channelId), 403, 'FORBIDDEN');
      expect((await send(withRole.token, w.channelId)).status).toBe(200);
      // Role changes take effect at once: removing the role removes the right.
      await expectStatus(
        await h.admin.put(`/guilds/${g}/members/${withRole.userId}`, { roles: [] }),
        200,
      );
      expectError(await send(withRole.token, w.channelId), 403, 'FORBIDDEN');
    } finally {
      await db
        .updateTable('roles')
        .set({ permissions: VIEW_CHANNEL | SEND_MESSAGES | READ_MESSAGE_HISTORY })
        .where('id', '=', g)
        .execute();
    }
  });

  it('ADMINISTRATOR overrides channel overwrites (D11)', async () => {
    const secret = await newChannel('secret');
    const adminRole = await role(ADMINISTRATOR);
    await overwrite(secret, w.guildId, 0, VIEW_CHANNEL | SEND_MESSAGES | READ_MESSAGE_HISTORY);
    // …also a deny aimed at the administrator's own role.
    await overwrite(secret, adminRole, 0, VIEW_CHANNEL | SEND_MESSAGES | READ_MESSAGE_HISTORY);
    const o = await makeUser(h, 'owner-admin');
    const adminBot = await makeBot(h, o.id, 'admin-bot');
    await join(h, w.guildId, adminBot.userId, [adminRole]);
    expect(await listed(adminBot.token)).toContain(secret);
    expect((await h.as(adminBot.token).get(`/channels/${secret}`)).status).toBe(200);
    expect((await send(adminBot.token, secret)).status).toBe(200);
    expect((await h.as(adminBot.token).get(`/channels/${secret}/messages`)).status).toBe(200);
    expectError(await send(w.bot.token, secret), 403, 'FORBIDDEN');
    expect(await listed(w.bot.token)).not.toContain(secret);
  });

  it('a channel overwrite allowing a role beats the @everyone deny (D11)', async () => {
    const staff = await newChannel('staff');
    const staffRole = await role(0);
    await overwrite(staff, w.guildId, 0, VIEW_CHANNEL | SEND_MESSAGES);
    await overwrite(staff, staffRole, VIEW_CHANNEL | SEND_MESSAGES, 0);
    const o = await makeUser(h, 'owner-staff');
    const staffBot = await makeBot(h, o.id, 'staff-bot');
    await join(h, w.guildId, staffBot.userId, [staffRole]);
    expect(await listed(staffBot.token)).toContain(staff);
    expect((await send(staffBot.token, staff)).status).toBe(200);
    expect((await h.as(staffBot.token).get(`/channels/${staff}/messages`)).status).toBe(200);
    // Members without the role stay locked out.
    expectError(await send(w.bot.token, staff), 403, 'FORBIDDEN');
    expect(await listed(w.bot.token)).not.toContain(staff);
    // A role overwrite that denies beats an @everyone allow.
    const muted = await role(0);
    const loud = await newChannel('loud');
    await overwrite(loud, w.guildId, SEND_MESSAGES, 0);
    await overwrite(loud, muted, 0, SEND_MESSAGES);
    await expectStatus(
      await h.admin.put(`/guilds/${w.guildId}/members/${staffBot.userId}`, { roles: [muted] }),
      200,
    );
    expectError(await send(staffBot.token, loud), 403, 'FORBIDDEN');
    expect((await send(w.bot.token, loud)).status).toBe(200);
  });
});
