import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  expectError,
  expectStatus,
  makeBot,
  makeUser,
  join,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';

// D64: command declarations (global and per guild), the list a person may run in a channel.
dbDescribe('application commands: declarations (D64)', () => {
  let h: Harness;
  let w: World;

  beforeAll(async () => {
    h = await createHarness();
    w = await makeWorld(h);
  });
  afterAll(async () => h.close());

  const roll = {
    name: 'roll',
    description: 'Roll a die',
    options: [
      {
        type: 4,
        name: 'sides',
        description: 'How many sides',
        required: true,
        minValue: 2,
        maxValue: 100,
      },
    ],
  };

  it('D64: PUT the global list → 200 with ids; GET returns it; a kept name keeps its id', async () => {
    const put = await expectStatus(
      await h.as(w.bot.token).put('/applications/@me/commands', [roll]),
      200,
    );
    expect(put.body).toEqual([{ id: expect.any(Number), botId: w.bot.id, ...roll }]);
    const id = put.body[0].id;
    const again = await expectStatus(
      await h.as(w.bot.token).put('/applications/@me/commands', [
        { name: 'ping', description: 'Pong' },
        { ...roll, description: 'Roll dice' },
      ]),
      200,
    );
    expect(again.body.map((c: { name: string }) => c.name)).toEqual(['ping', 'roll']);
    expect(again.body[1].id).toBe(id);
    const got = await expectStatus(await h.as(w.bot.token).get('/applications/@me/commands'), 200);
    expect(got.body).toEqual(again.body);
  });

  it('D64: guild commands carry guildId; a bot outside the guild is 403, an unknown guild 404', async () => {
    const put = await expectStatus(
      await h
        .as(w.bot.token)
        .put(`/guilds/${w.guildId}/commands`, [{ name: 'local', description: 'Here only' }]),
      200,
    );
    expect(put.body[0]).toMatchObject({ guildId: w.guildId, botId: w.bot.id, name: 'local' });
    const stranger = await makeBot(h, w.owner.id, 'stranger');
    expectError(
      await h.as(stranger.token).put(`/guilds/${w.guildId}/commands`, []),
      403,
      'FORBIDDEN',
    );
    expectError(await h.as(w.bot.token).put(`/guilds/99999999/commands`, []), 404, 'NOT_FOUND');
    // a person does not declare commands
    expectError(await h.as(w.human.token).put('/applications/@me/commands', []), 403, 'FORBIDDEN');
  });

  it('D64: DELETE one command → 204, then 404', async () => {
    const put = await expectStatus(
      await h.as(w.bot.token).put(`/guilds/${w.guildId}/commands`, [
        { name: 'a', description: 'A' },
        { name: 'b', description: 'B' },
      ]),
      200,
    );
    const id = put.body[0].id;
    expect((await h.as(w.bot.token).delete(`/guilds/${w.guildId}/commands/${id}`)).status).toBe(
      204,
    );
    expectError(
      await h.as(w.bot.token).delete(`/guilds/${w.guildId}/commands/${id}`),
      404,
      'NOT_FOUND',
    );
    const got = await h.as(w.bot.token).get(`/guilds/${w.guildId}/commands`);
    expect(got.body.map((c: { name: string }) => c.name)).toEqual(['b']);
  });

  const bad: Array<[string, unknown, string]> = [
    ['name pattern', [{ name: 'Roll', description: 'x' }], '0.name'],
    ['empty description', [{ name: 'r', description: '' }], '0.description'],
    [
      'repeated command',
      [
        { name: 'r', description: 'x' },
        { name: 'r', description: 'y' },
      ],
      '[1].name',
    ],
    [
      'unknown option type',
      [{ name: 'r', description: 'x', options: [{ type: 2, name: 'o', description: 'o' }] }],
      'type',
    ],
    [
      'repeated option',
      [
        {
          name: 'r',
          description: 'x',
          options: [
            { type: 3, name: 'o', description: 'o' },
            { type: 3, name: 'o', description: 'p' },
          ],
        },
      ],
      '[0].options[1].name',
    ],
    [
      'required after optional',
      [
        {
          name: 'r',
          description: 'x',
          options: [
            { type: 3, name: 'a', description: 'a' },
            { type: 3, name: 'b', description: 'b', required: true },
          ],
        },
      ],
      '[0].options[1].required',
    ],
    [
      'minValue on a string',
      [
        {
          name: 'r',
          description: 'x',
          options: [{ type: 3, name: 'a', description: 'a', minValue: 1 }],
        },
      ],
      '[0].options[0].minValue',
    ],
    [
      'minLength on an integer',
      [
        {
          name: 'r',
          description: 'x',
          options: [{ type: 4, name: 'a', description: 'a', minLength: 1 }],
        },
      ],
      '[0].options[0].minLength',
    ],
    [
      'min > max',
      [
        {
          name: 'r',
          description: 'x',
          options: [{ type: 4, name: 'a', description: 'a', minValue: 5, maxValue: 1 }],
        },
      ],
      '[0].options[0].minValue',
    ],
    [
      'choice of the wrong type',
      [
        {
          name: 'r',
          description: 'x',
          options: [
            { type: 4, name: 'a', description: 'a', choices: [{ name: 'one', value: 'x' }] },
          ],
        },
      ],
      '[0].options[0].choices[0].value',
    ],
    [
      'choices with autocomplete',
      [
        {
          name: 'r',
          description: 'x',
          options: [
            {
              type: 3,
              name: 'a',
              description: 'a',
              autocomplete: true,
              choices: [{ name: 'one', value: 'x' }],
            },
          ],
        },
      ],
      '[0].options[0].autocomplete',
    ],
    [
      'choices on a boolean',
      [
        {
          name: 'r',
          description: 'x',
          options: [{ type: 5, name: 'a', description: 'a', choices: [{ name: 'one', value: 1 }] }],
        },
      ],
      '[0].options[0].choices',
    ],
    [
      'sub-command mixed with options',
      [
        {
          name: 'r',
          description: 'x',
          options: [
            { type: 1, name: 's', description: 's' },
            { type: 3, name: 'a', description: 'a' },
          ],
        },
      ],
      '[0].options',
    ],
    [
      'options on a leaf',
      [
        {
          name: 'r',
          description: 'x',
          options: [{ type: 3, name: 'a', description: 'a', options: [] }],
        },
      ],
      '[0].options[0].options',
    ],
    [
      'nested sub-command',
      [
        {
          name: 'r',
          description: 'x',
          options: [
            {
              type: 1,
              name: 's',
              description: 's',
              options: [{ type: 1, name: 't', description: 't' }],
            },
          ],
        },
      ],
      '[0].options[0].options',
    ],
    [
      'unknown permission bit',
      [{ name: 'r', description: 'x', defaultMemberPermissions: 1 << 30 }],
      '[0].defaultMemberPermissions',
    ],
    ['unknown field', [{ name: 'r', description: 'x', extra: 1 }], ''],
    [
      '26 options',
      [
        {
          name: 'r',
          description: 'x',
          options: Array.from({ length: 26 }, (_, i) => ({
            type: 3,
            name: `o${i}`,
            description: 'o',
          })),
        },
      ],
      '',
    ],
    [
      '101 commands',
      Array.from({ length: 101 }, (_, i) => ({ name: `c${i}`, description: 'c' })),
      '',
    ],
  ];
  for (const [what, body, field] of bad)
    it(`D64: a declaration with ${what} → 400 naming it`, async () => {
      const r = await h.as(w.bot.token).put('/applications/@me/commands', body);
      expectError(r, 400, 'VALIDATION_ERROR', what);
      if (field) expect(JSON.stringify(r.body.error), what).toContain(field);
    });

  it('D64: a list refused leaves the stored one as it was', async () => {
    const before = await h.as(w.bot.token).get('/applications/@me/commands');
    await h.as(w.bot.token).put('/applications/@me/commands', [
      { name: 'ok', description: 'x' },
      { name: 'ok', description: 'y' },
    ]);
    expect((await h.as(w.bot.token).get('/applications/@me/commands')).body).toEqual(before.body);
  });

  it("D64: GET /channels/:id/commands — the guild's bots' commands, filtered by USE_APPLICATION_COMMANDS and defaultMemberPermissions", async () => {
    await expectStatus(
      await h
        .as(w.bot.token)
        .put('/applications/@me/commands', [
          roll,
          { name: 'ban', description: 'Moderators only', defaultMemberPermissions: 128 },
          { name: 'admin', description: 'Administrators only', defaultMemberPermissions: 0 },
        ]),
      200,
    );
    await expectStatus(
      await h
        .as(w.bot.token)
        .put(`/guilds/${w.guildId}/commands`, [{ name: 'local', description: 'L' }]),
      200,
    );
    // another bot of another guild: its commands never show here
    const other = await makeBot(h, w.owner.id, 'other');
    await expectStatus(
      await h
        .as(other.token)
        .put('/applications/@me/commands', [{ name: 'elsewhere', description: 'E' }]),
      200,
    );

    const human = await expectStatus(
      await h.as(w.human.token).get(`/channels/${w.channelId}/commands`),
      200,
    );
    expect(human.body.commands.map((c: { name: string }) => c.name)).toEqual(['roll', 'local']);
    expect(human.body.bots).toEqual([{ id: w.bot.id, userId: w.bot.userId, name: 'bot' }]);
    // the owner holds every bit
    const owner = await expectStatus(
      await h.as(w.owner.token).get(`/channels/${w.channelId}/commands`),
      200,
    );
    expect(owner.body.commands.map((c: { name: string }) => c.name).sort()).toEqual([
      'admin',
      'ban',
      'local',
      'roll',
    ]);
    // without USE_APPLICATION_COMMANDS (32768) on @everyone: nothing
    const role = await expectStatus(await h.admin.get(`/guilds/${w.guildId}`), 200);
    const everyone = role.body.roles.find((r: { id: number }) => r.id === w.guildId);
    await expectStatus(
      await h.admin.patch(`/roles/${w.guildId}`, { permissions: everyone.permissions & ~32768 }),
      200,
    );
    const none = await expectStatus(
      await h.as(w.human.token).get(`/channels/${w.channelId}/commands`),
      200,
    );
    expect(none.body).toEqual({ commands: [], bots: [] });
    await expectStatus(
      await h.admin.patch(`/roles/${w.guildId}`, { permissions: everyone.permissions }),
      200,
    );
    // not a member: 403
    const outsider = await makeUser(h, 'outsider');
    expectError(
      await h.as(outsider.token).get(`/channels/${w.channelId}/commands`),
      403,
      'FORBIDDEN',
    );
  });

  it('D64: in a DM with a bot, its global commands unless dmPermission is false', async () => {
    await expectStatus(
      await h
        .as(w.bot.token)
        .put('/applications/@me/commands', [
          roll,
          { name: 'guildonly', description: 'G', dmPermission: false },
        ]),
      200,
    );
    const dm = await expectStatus(await h.as(w.human.token).post(`/users/${w.bot.userId}/dm`), 200);
    const r = await expectStatus(
      await h.as(w.human.token).get(`/channels/${dm.body.channelId}/commands`),
      200,
    );
    expect(r.body.commands.map((c: { name: string }) => c.name)).toEqual(['roll']);
  });

  it('D64: a bot that leaves the guild takes its commands out of the list', async () => {
    const u = await makeUser(h, 'leaver-owner');
    const leaver = await makeBot(h, u.id, 'leaver');
    await join(h, w.guildId, leaver.userId);
    await expectStatus(
      await h
        .as(leaver.token)
        .put('/applications/@me/commands', [{ name: 'bye', description: 'B' }]),
      200,
    );
    const r1 = await h.as(w.human.token).get(`/channels/${w.channelId}/commands`);
    expect(r1.body.commands.map((c: { name: string }) => c.name)).toContain('bye');
    await expectStatus(await h.admin.delete(`/guilds/${w.guildId}/members/${leaver.userId}`), 204);
    const r2 = await h.as(w.human.token).get(`/channels/${w.channelId}/commands`);
    expect(r2.body.commands.map((c: { name: string }) => c.name)).not.toContain('bye');
  });
});
