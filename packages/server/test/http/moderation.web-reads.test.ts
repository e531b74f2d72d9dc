import { Permission } from '@parley/protocol';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  expectError,
  expectStatus,
  join,
  makeUser,
  type Harness,
} from '../helpers/harness.js';

// The two reads the web app's moderation screens need (issue 23, web part): the members page
// with each member's roles and running time-out when asked (`withRoles=true`; D56: without it,
// exactly the entries of before), for names coloured by their top role (D58) and the member
// menu's rank check; and a channel's overwrites (MANAGE_CHANNELS) for its "Permissions" tab.
dbDescribe('web moderation reads: members with roles, channel overwrites (D56–D59)', () => {
  let h: Harness;
  let owner: { id: number; token: string };
  let member: { id: number; token: string };
  let guildId: number;
  let channelId: number;
  let mods: number;

  beforeAll(async () => {
    h = await createHarness();
    owner = await makeUser(h, 'owner');
    member = await makeUser(h, 'member');
    const g = await expectStatus(await h.people(owner.token).post('/guilds', { name: 'G' }), 201);
    guildId = g.body.id;
    channelId = g.body.channels[0].id;
    mods = (
      await expectStatus(
        await h.as(owner.token).post(`/guilds/${guildId}/roles`, {
          name: 'mods',
          permissions: Permission.MODERATE_MEMBERS,
          color: 0xaa3300,
        }),
        201,
      )
    ).body.id;
    await join(h, guildId, member.id, [mods]);
  });
  afterAll(async () => h.close());

  it('D56: without withRoles the entries are exactly {user, joinedAt}; with it they gain roles and a running timeoutUntil', async () => {
    const plain = await expectStatus(
      await h.as(member.token).get(`/guilds/${guildId}/members`),
      200,
    );
    for (const e of plain.body.members) expect(Object.keys(e).sort()).toEqual(['joinedAt', 'user']);
    const until = new Date(Date.now() + 3_600_000).toISOString();
    await expectStatus(
      await h.as(owner.token).patch(`/guilds/${guildId}/members/${member.id}`, {
        timeoutUntil: until,
      }),
      200,
    );
    const rich = await expectStatus(
      await h.as(member.token).get(`/guilds/${guildId}/members?withRoles=true`),
      200,
    );
    const byId = new Map(rich.body.members.map((e: { user: { id: number } }) => [e.user.id, e]));
    expect(byId.get(owner.id)).toEqual({
      user: plain.body.members[0].user,
      joinedAt: plain.body.members[0].joinedAt,
      roles: [],
    });
    expect(byId.get(member.id)).toMatchObject({ roles: [mods] });
    expect(Date.parse((byId.get(member.id) as { timeoutUntil: string }).timeoutUntil)).toBe(
      Date.parse(until),
    );
    // paging keeps working with it: one member per page, the roles of each
    const p1 = await expectStatus(
      await h.as(member.token).get(`/guilds/${guildId}/members?withRoles=true&limit=1`),
      200,
    );
    expect(p1.body.hasMore).toBe(true);
    const p2 = await expectStatus(
      await h
        .as(member.token)
        .get(
          `/guilds/${guildId}/members?withRoles=true&limit=1&after=${p1.body.members[0].user.id}`,
        ),
      200,
    );
    expect(p2.body).toMatchObject({ hasMore: false, members: [{ roles: [mods] }] });
    expectError(
      await h.as(member.token).get(`/guilds/${guildId}/members?withRoles=maybe`),
      400,
      'VALIDATION_ERROR',
    );
  });

  it("GET a channel's overwrites: MANAGE_CHANNELS (403 without), /api/v1 and /app/v1 alike", async () => {
    const empty = await expectStatus(
      await h.as(owner.token).get(`/channels/${channelId}/overwrites`),
      200,
    );
    expect(empty.body).toEqual({ overwrites: [] });
    await expectStatus(
      await h.people(owner.token).put(`/channels/${channelId}/overwrites/${mods}`, {
        allow: Permission.MANAGE_MESSAGES,
        deny: Permission.ATTACH_FILES,
      }),
      200,
    );
    await expectStatus(
      await h.people(owner.token).put(`/channels/${channelId}/overwrites/${guildId}`, {
        allow: 0,
        deny: Permission.SEND_MESSAGES,
      }),
      200,
    );
    const list = await expectStatus(
      await h.people(owner.token).get(`/channels/${channelId}/overwrites`),
      200,
    );
    expect(list.body.overwrites).toEqual(
      [
        { channelId, roleId: guildId, allow: 0, deny: Permission.SEND_MESSAGES },
        {
          channelId,
          roleId: mods,
          allow: Permission.MANAGE_MESSAGES,
          deny: Permission.ATTACH_FILES,
        },
      ].sort((a, b) => a.roleId - b.roleId),
    );
    expectError(
      await h.as(member.token).get(`/channels/${channelId}/overwrites`),
      403,
      'FORBIDDEN',
    );
    expectError(
      await h.as(undefined).get(`/channels/${channelId}/overwrites`),
      401,
      'UNAUTHORIZED',
    );
    expectError(await h.as(owner.token).get(`/channels/999999999/overwrites`), 404, 'NOT_FOUND');
  });
});
