import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  expectError,
  expectStatus,
  makeUser,
  join,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';
import { FakeClock } from '../helpers/clock.js';
import { PeopleEvents } from '../helpers/guild-admin.js';

// D64–D65: invoking, validation against the declaration, INTERACTION_CREATE, the callbacks
// (exactly once), ephemeral replies, deferral, follow-ups and @original for 15 minutes.
dbDescribe('interactions (D64–D65)', () => {
  let h: Harness;
  let w: World;
  let clock: FakeClock;
  let people: PeopleEvents;
  let rollId: number;
  let toolId: number;
  let otherGuildChannel: number;
  let roleId: number;

  beforeAll(async () => {
    clock = new FakeClock(Date.now());
    h = await createHarness({ clock });
    w = await makeWorld(h);
    people = new PeopleEvents(h);
    const put = await expectStatus(
      await h.as(w.bot.token).put('/applications/@me/commands', [
        {
          name: 'roll',
          description: 'Roll a die',
          options: [
            {
              type: 4,
              name: 'sides',
              description: 'Sides',
              required: true,
              minValue: 2,
              maxValue: 100,
            },
            { type: 3, name: 'label', description: 'Label', maxLength: 5 },
            {
              type: 3,
              name: 'colour',
              description: 'Colour',
              choices: [{ name: 'Red', value: 'red' }],
            },
            { type: 5, name: 'loud', description: 'Loud' },
            { type: 10, name: 'bias', description: 'Bias', minValue: 0, maxValue: 1 },
            { type: 6, name: 'user', description: 'Someone' },
            { type: 7, name: 'channel', description: 'Somewhere' },
            { type: 8, name: 'role', description: 'Some role' },
            { type: 3, name: 'search', description: 'Search', autocomplete: true },
          ],
        },
        {
          name: 'tool',
          description: 'Tools',
          options: [
            {
              type: 1,
              name: 'add',
              description: 'Add',
              options: [{ type: 4, name: 'n', description: 'N', required: true }],
            },
            { type: 1, name: 'list', description: 'List' },
          ],
        },
      ]),
      200,
    );
    rollId = put.body[0].id;
    toolId = put.body[1].id;
    const g2 = await expectStatus(
      await h.admin.post('/guilds', { name: 'Other', ownerId: w.owner.id }),
      201,
    );
    const c2 = await expectStatus(
      await h.admin.post(`/guilds/${g2.body.id}/channels`, { name: 'x' }),
      201,
    );
    otherGuildChannel = c2.body.id;
    const role = await expectStatus(
      await h
        .people(w.owner.token)
        .post(`/guilds/${w.guildId}/roles`, { name: 'dice', permissions: 0 }),
      201,
    );
    roleId = role.body.id;
  });
  afterAll(async () => {
    people.stop();
    await h.close();
  });
  beforeEach(() => people.clear());

  const run = (options: unknown[] = [{ name: 'sides', value: 6 }], token = w.human.token) =>
    h
      .as(token)
      .post('/interactions', { type: 2, channelId: w.channelId, commandId: rollId, options });

  /** The INTERACTION_CREATE rows of the event log (the bot's gateway and webhook read them). */
  const delivered = async (): Promise<
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- checked field by field
    Array<{ data: any; bots: string; audience: string | null }>
  > => {
    const rows = await h.services.domain.db
      .selectFrom('event_log as e')
      .innerJoin('recipient_sets as r', 'r.id', 'e.recipients')
      .select(['e.data', 'r.bots', 'e.audience'])
      .where('e.type', '=', 'INTERACTION_CREATE')
      .execute();
    return rows.map((r) => ({ data: JSON.parse(r.data), bots: r.bots, audience: r.audience }));
  };
  const interactionOf = async (id: number) => {
    const all = await delivered();
    const it = all.find((r) => r.data.id === id);
    if (!it) throw new Error(`no INTERACTION_CREATE for ${id}`);
    return it;
  };
  const history = async () =>
    (
      await expectStatus(
        await h.as(w.human.token).get(`/channels/${w.channelId}/messages?limit=100`),
        200,
      )
    ).body.messages as Array<{
      id: number;
      content: string;
      interaction?: unknown;
      flags?: number;
    }>;

  it('D64: a valid invocation → 202 {id}; INTERACTION_CREATE to that bot alone (no person), with the checked options', async () => {
    const r = await expectStatus(
      await run([
        { name: 'sides', value: 20 },
        { name: 'label', value: 'abc' },
        { name: 'loud', value: true },
        { name: 'user', value: w.human.id },
        { name: 'channel', value: w.channelId },
        { name: 'role', value: roleId },
      ]),
      202,
    );
    expect(r.body).toEqual({ id: expect.any(Number) });
    const it = await interactionOf(r.body.id);
    expect(it.bots).toBe(`,${w.bot.id},`);
    // no people's audience at all: the interaction is the bot's alone (as D71's bots-only events)
    expect(it.audience).toBeNull();
    expect(it.data).toMatchObject({
      id: r.body.id,
      token: expect.stringMatching(/^pit_/),
      type: 2,
      channelId: w.channelId,
      guildId: w.guildId,
      user: { id: w.human.id, name: 'human' },
      member: { roles: [], permissions: expect.any(Number) },
      data: {
        commandId: rollId,
        name: 'roll',
        options: [
          { name: 'sides', type: 4, value: 20 },
          { name: 'label', type: 3, value: 'abc' },
          { name: 'loud', type: 5, value: true },
          { name: 'user', type: 6, value: w.human.id },
          { name: 'channel', type: 7, value: w.channelId },
          { name: 'role', type: 8, value: roleId },
        ],
      },
    });
    expect(people.all).toEqual([]); // nobody but the bot hears of it
  });

  const refused: Array<[string, unknown[], string]> = [
    ['a required option missing', [], 'options.sides'],
    [
      'an unknown option',
      [
        { name: 'sides', value: 6 },
        { name: 'nope', value: 1 },
      ],
      'options.nope',
    ],
    [
      'an option given twice',
      [
        { name: 'sides', value: 6 },
        { name: 'sides', value: 7 },
      ],
      'options.sides',
    ],
    ['a string for an integer', [{ name: 'sides', value: '6' }], 'options.sides'],
    ['a fraction for an integer', [{ name: 'sides', value: 6.5 }], 'options.sides'],
    ['an integer below minValue', [{ name: 'sides', value: 1 }], 'options.sides'],
    ['an integer above maxValue', [{ name: 'sides', value: 101 }], 'options.sides'],
    [
      'a number above maxValue',
      [
        { name: 'sides', value: 6 },
        { name: 'bias', value: 1.5 },
      ],
      'options.bias',
    ],
    [
      'a string over maxLength',
      [
        { name: 'sides', value: 6 },
        { name: 'label', value: 'abcdef' },
      ],
      'options.label',
    ],
    [
      'a value outside the choices',
      [
        { name: 'sides', value: 6 },
        { name: 'colour', value: 'blue' },
      ],
      'options.colour',
    ],
    [
      'a number for a boolean',
      [
        { name: 'sides', value: 6 },
        { name: 'loud', value: 1 },
      ],
      'options.loud',
    ],
    [
      'a user who is not a member',
      [
        { name: 'sides', value: 6 },
        { name: 'user', value: 999999 },
      ],
      'options.user',
    ],
    [
      'a channel of another guild',
      [
        { name: 'sides', value: 6 },
        { name: 'channel', value: 0 },
      ],
      'options.channel',
    ],
    [
      'a role of another guild',
      [
        { name: 'sides', value: 6 },
        { name: 'role', value: 123456789 },
      ],
      'options.role',
    ],
    [
      'a focused option outside autocomplete',
      [
        { name: 'sides', value: 6 },
        { name: 'search', value: 'a', focused: true },
      ],
      'options.search',
    ],
  ];
  for (const [what, options, field] of refused)
    it(`D64: ${what} → 400 naming the option`, async () => {
      const opts = options.map((o) =>
        (o as { name: string }).name === 'channel'
          ? { name: 'channel', value: otherGuildChannel }
          : o,
      );
      const r = await run(opts);
      expectError(r, 400, 'VALIDATION_ERROR', what);
      expect(JSON.stringify(r.body.error), what).toContain(field);
    });

  it('D64: sub-commands — exactly one, its own options checked', async () => {
    const ok = await expectStatus(
      await h.as(w.human.token).post('/interactions', {
        type: 2,
        channelId: w.channelId,
        commandId: toolId,
        options: [{ name: 'add', options: [{ name: 'n', value: 3 }] }],
      }),
      202,
    );
    expect((await interactionOf(ok.body.id)).data.data.options).toEqual([
      { name: 'add', type: 1, options: [{ name: 'n', type: 4, value: 3 }] },
    ]);
    const bad = async (options: unknown[], field: string) => {
      const r = await h
        .as(w.human.token)
        .post('/interactions', { type: 2, channelId: w.channelId, commandId: toolId, options });
      expectError(r, 400, 'VALIDATION_ERROR');
      expect(JSON.stringify(r.body.error)).toContain(field);
    };
    await bad([], 'options');
    await bad([{ name: 'add', options: [] }], 'options.add.n');
    await bad([{ name: 'nope', options: [] }], 'options.nope');
  });

  it('D64: an unknown command 404; a bot invoking 403; a non-member 403; without USE_APPLICATION_COMMANDS 403', async () => {
    expectError(
      await h
        .as(w.human.token)
        .post('/interactions', { type: 2, channelId: w.channelId, commandId: 424242, options: [] }),
      404,
      'NOT_FOUND',
    );
    expectError(await run(undefined, w.bot.token), 403, 'FORBIDDEN');
    const outsider = await makeUser(h, 'outsider');
    expectError(await run(undefined, outsider.token), 403, 'FORBIDDEN');
    // a command of a bot that is not in the guild does not run there
    expectError(
      await h.as(w.owner.token).post('/interactions', {
        type: 2,
        channelId: otherGuildChannel,
        commandId: rollId,
        options: [{ name: 'sides', value: 6 }],
      }),
      404,
      'NOT_FOUND',
    );
    await expectStatus(
      await h.admin.put(`/channels/${w.channelId}/overwrites/${w.guildId}`, {
        allow: 0,
        deny: 32768,
      }),
      200,
    );
    expectError(await run(), 403, 'FORBIDDEN');
    await expectStatus(
      await h.admin.put(`/channels/${w.channelId}/overwrites/${w.guildId}`, { allow: 0, deny: 0 }),
      200,
    );
    await expectStatus(await run(), 202);
  });

  it('D65: reply (4) → a stored message with interaction {id, name, userId}; a second callback → 409', async () => {
    const r = await expectStatus(await run(), 202);
    const { token } = (await interactionOf(r.body.id)).data;
    const cb = await h.as(undefined).post(`/interactions/${r.body.id}/${token}/callback`, {
      type: 4,
      data: { content: 'You rolled 4' },
    });
    expect(cb.status, cb.raw).toBe(204);
    const m = (await history()).find((x) => x.content === 'You rolled 4');
    expect(m?.interaction).toEqual({ id: r.body.id, name: 'roll', userId: w.human.id });
    expect(m).toMatchObject({ author: { id: w.bot.userId, isBot: true } });
    expect(people.of('MESSAGE_CREATE').map((e) => e.audience)).toEqual([
      { kind: 'channel', guildId: w.guildId, channelId: w.channelId },
    ]);
    expectError(
      await h.as(undefined).post(`/interactions/${r.body.id}/${token}/callback`, {
        type: 4,
        data: { content: 'again' },
      }),
      409,
      'CONFLICT',
    );
  });

  it('D65: a wrong token, another interaction’s token, or a malformed one → 404 / 400; nothing answered', async () => {
    const a = await expectStatus(await run(), 202);
    const b = await expectStatus(await run(), 202);
    const tb = (await interactionOf(b.body.id)).data.token as string;
    expectError(
      await h.as(undefined).post(`/interactions/${a.body.id}/${tb}/callback`, { type: 5 }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await h
        .as(undefined)
        .post(`/interactions/${a.body.id}/pit_${'A'.repeat(43)}/callback`, { type: 5 }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await h.as(undefined).post(`/interactions/${a.body.id}/nope/callback`, { type: 5 }),
      400,
      'VALIDATION_ERROR',
    );
    // an empty reply, and an update (7) of a command, are refused without using the callback up
    const ta = (await interactionOf(a.body.id)).data.token as string;
    expectError(
      await h
        .as(undefined)
        .post(`/interactions/${a.body.id}/${ta}/callback`, { type: 4, data: {} }),
      400,
      'VALIDATION_ERROR',
    );
    expectError(
      await h
        .as(undefined)
        .post(`/interactions/${a.body.id}/${ta}/callback`, { type: 7, data: { content: 'x' } }),
      400,
      'VALIDATION_ERROR',
    );
    expect(
      (
        await h
          .as(undefined)
          .post(`/interactions/${a.body.id}/${ta}/callback`, { type: 4, data: { content: 'ok' } })
      ).status,
    ).toBe(204);
  });

  it('D65: exactly once under 20 concurrent callbacks: one 204, nineteen 409, one message', async () => {
    const r = await expectStatus(await run(), 202);
    const { token } = (await interactionOf(r.body.id)).data;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        h.as(undefined).post(`/interactions/${r.body.id}/${token}/callback`, {
          type: 4,
          data: { content: `race ${i}` },
        }),
      ),
    );
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses.filter((s) => s === 204)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(19);
    expect((await history()).filter((m) => m.content.startsWith('race '))).toHaveLength(1);
  });

  it('D65: an ephemeral reply reaches only the invoker (a users audience), is never in history, and @original edits it for them alone', async () => {
    const r = await expectStatus(await run(), 202);
    const { token } = (await interactionOf(r.body.id)).data;
    await expectStatus(
      await h.as(undefined).post(`/interactions/${r.body.id}/${token}/callback`, {
        type: 4,
        data: { content: 'secret roll', flags: 1 },
      }),
      204,
    );
    const created = people.of('MESSAGE_CREATE');
    expect(created).toHaveLength(1);
    expect(created[0]?.audience).toEqual({ kind: 'users', userIds: [w.human.id] });
    expect(created[0]?.data).toMatchObject({
      content: 'secret roll',
      flags: 1,
      interaction: { id: r.body.id, name: 'roll', userId: w.human.id },
    });
    // nothing logged for bots
    const rows = await h.services.domain.db
      .selectFrom('event_log as e')
      .innerJoin('recipient_sets as s', 's.id', 'e.recipients')
      .select(['s.bots'])
      .where('e.data', 'like', '%secret roll%')
      .execute();
    expect(rows.map((x) => x.bots)).toEqual([',']);
    expect((await history()).some((m) => m.content.includes('secret roll'))).toBe(false);
    const edited = await expectStatus(
      await h.as(undefined).patch(`/webhooks/${w.bot.id}/${token}/messages/@original`, {
        content: 'secret roll, edited',
      }),
      200,
    );
    expect(edited.body).toMatchObject({
      id: created[0]?.data.id,
      flags: 1,
      editedTimestamp: expect.any(String),
    });
    expect(people.of('MESSAGE_UPDATE').map((e) => e.audience)).toEqual([
      { kind: 'users', userIds: [w.human.id] },
    ]);
    // an ephemeral follow-up likewise
    await expectStatus(
      await h.as(undefined).post(`/webhooks/${w.bot.id}/${token}`, { content: 'psst', flags: 1 }),
      200,
    );
    expect(people.of('MESSAGE_CREATE').at(-1)?.audience).toEqual({
      kind: 'users',
      userIds: [w.human.id],
    });
    expect((await history()).some((m) => m.content === 'psst')).toBe(false);
  });

  it('D65: defer (5) → "thinking…" for the invoker; the answer takes its id (MESSAGE_UPDATE to the invoker, MESSAGE_CREATE to the channel)', async () => {
    const r = await expectStatus(await run(), 202);
    const { token } = (await interactionOf(r.body.id)).data;
    // a follow-up before any callback is refused
    expectError(
      await h.as(undefined).post(`/webhooks/${w.bot.id}/${token}`, { content: 'early' }),
      409,
      'CONFLICT',
    );
    await expectStatus(
      await h.as(undefined).post(`/interactions/${r.body.id}/${token}/callback`, { type: 5 }),
      204,
    );
    const thinking = people.of('MESSAGE_CREATE');
    expect(thinking).toHaveLength(1);
    expect(thinking[0]?.audience).toEqual({ kind: 'users', userIds: [w.human.id] });
    expect(thinking[0]?.data).toMatchObject({ content: '', flags: 129 });
    const id = thinking[0]?.data.id as number;
    people.clear();
    clock.advance(10 * 60 * 1000); // no 3-second cliff: ten minutes later
    const answer = await expectStatus(
      await h
        .as(undefined)
        .patch(`/webhooks/${w.bot.id}/${token}/messages/@original`, { content: 'Slow answer' }),
      200,
    );
    expect(answer.body).toMatchObject({
      id,
      content: 'Slow answer',
      interaction: { id: r.body.id, name: 'roll', userId: w.human.id },
    });
    expect(answer.body.flags).toBeUndefined();
    expect(people.of('MESSAGE_CREATE').map((e) => [e.data.id, e.audience.kind])).toEqual([
      [id, 'channel'],
    ]);
    expect(people.toUser('MESSAGE_UPDATE', w.human.id).map((e) => e.data.id)).toEqual([id]);
    expect((await history()).find((m) => m.id === id)?.content).toBe('Slow answer');
    // later edits of @original edit the stored message
    await expectStatus(
      await h
        .as(undefined)
        .patch(`/webhooks/${w.bot.id}/${token}/messages/@original`, { content: 'Edited' }),
      200,
    );
    expect((await history()).find((m) => m.id === id)?.content).toBe('Edited');
  });

  it('D65: follow-ups and @original work until 15 minutes have passed (fake clock), then 404', async () => {
    const r = await expectStatus(await run(), 202);
    const { token } = (await interactionOf(r.body.id)).data;
    clock.advance(14 * 60 * 1000);
    await expectStatus(
      await h.as(undefined).post(`/interactions/${r.body.id}/${token}/callback`, {
        type: 4,
        data: { content: 'late' },
      }),
      204,
    );
    clock.advance(59 * 1000 + 999);
    const f = await expectStatus(
      await h.as(undefined).post(`/webhooks/${w.bot.id}/${token}`, { content: 'follow-up' }),
      200,
    );
    expect(f.body.interaction).toEqual({ id: r.body.id, name: 'roll', userId: w.human.id });
    clock.advance(1); // 15:00.000
    expectError(
      await h.as(undefined).post(`/webhooks/${w.bot.id}/${token}`, { content: 'too late' }),
      404,
      'NOT_FOUND',
    );
    expectError(
      await h
        .as(undefined)
        .patch(`/webhooks/${w.bot.id}/${token}/messages/@original`, { content: 'too late' }),
      404,
      'NOT_FOUND',
    );
    // a callback past the window likewise
    const s = await expectStatus(await run(), 202);
    const t2 = (await interactionOf(s.body.id)).data.token;
    clock.advance(15 * 60 * 1000);
    expectError(
      await h.as(undefined).post(`/interactions/${s.body.id}/${t2}/callback`, { type: 5 }),
      404,
      'NOT_FOUND',
    );
    // and the bot id in the path must be the interaction's
    expectError(
      await h.as(undefined).post(`/webhooks/1/${t2}`, { content: 'x' }),
      404,
      'NOT_FOUND',
    );
  });

  it('D65: components — a bot message with buttons and a select; a click → INTERACTION_CREATE (type 3); update (7) edits the message', async () => {
    const bad = await h.as(w.human.token).post(`/channels/${w.channelId}/messages`, {
      content: 'x',
      components: [{ type: 1, components: [{ type: 2, style: 1, label: 'A', customId: 'a' }] }],
    });
    expectError(bad, 400, 'VALIDATION_ERROR'); // only bots send components
    expectError(
      await h.as(w.bot.token).post(`/channels/${w.channelId}/messages`, {
        content: 'x',
        components: [
          { type: 1, components: [{ type: 2, style: 5, label: 'Link', customId: 'a' }] },
        ],
      }),
      400,
      'VALIDATION_ERROR',
    );
    const sent = await expectStatus(
      await h.as(w.bot.token).post(`/channels/${w.channelId}/messages`, {
        content: 'Pick',
        components: [
          {
            type: 1,
            components: [
              { type: 2, style: 1, label: 'Again', customId: 'roll:again' },
              { type: 2, style: 4, label: 'Off', customId: 'off', disabled: true },
              { type: 2, style: 5, label: 'Docs', url: 'https://example.com' },
            ],
          },
          {
            type: 1,
            components: [
              {
                type: 3,
                customId: 'pick',
                options: [
                  { label: 'One', value: '1' },
                  { label: 'Two', value: '2' },
                ],
                maxValues: 2,
              },
            ],
          },
        ],
      }),
      200,
    );
    expect(sent.body.components).toHaveLength(2);
    const click = (body: object) =>
      h.as(w.human.token).post('/interactions', { type: 3, messageId: sent.body.id, ...body });
    expectError(await click({ customId: 'nope' }), 400, 'VALIDATION_ERROR');
    expectError(await click({ customId: 'off' }), 400, 'VALIDATION_ERROR');
    expectError(await click({ customId: 'pick', values: ['3'] }), 400, 'VALIDATION_ERROR');
    expectError(await click({ customId: 'pick', values: [] }), 400, 'VALIDATION_ERROR');
    expectError(await click({ customId: 'roll:again', values: ['1'] }), 400, 'VALIDATION_ERROR');
    const sel = await expectStatus(await click({ customId: 'pick', values: ['1', '2'] }), 202);
    expect((await interactionOf(sel.body.id)).data.data).toEqual({
      customId: 'pick',
      componentType: 3,
      values: ['1', '2'],
    });
    const r = await expectStatus(await click({ customId: 'roll:again' }), 202);
    const it = (await interactionOf(r.body.id)).data;
    expect(it).toMatchObject({
      type: 3,
      data: { customId: 'roll:again', componentType: 2 },
      message: { id: sent.body.id, content: 'Pick' },
    });
    people.clear();
    await expectStatus(
      await h.as(undefined).post(`/interactions/${r.body.id}/${it.token}/callback`, {
        type: 7,
        data: { content: 'Rolled again: 5', components: [] },
      }),
      204,
    );
    const upd = people.of('MESSAGE_UPDATE');
    expect(upd).toHaveLength(1);
    expect(upd[0]?.data).toMatchObject({ id: sent.body.id, content: 'Rolled again: 5' });
    expect(upd[0]?.data.components).toBeUndefined();
  });

  it('D65: deferred update (6), then @original edits the component’s message', async () => {
    const sent = await expectStatus(
      await h.as(w.bot.token).post(`/channels/${w.channelId}/messages`, {
        content: 'Vote',
        components: [
          { type: 1, components: [{ type: 2, style: 3, label: 'Yes', customId: 'vote:yes' }] },
        ],
      }),
      200,
    );
    const r = await expectStatus(
      await h
        .as(w.human.token)
        .post('/interactions', { type: 3, messageId: sent.body.id, customId: 'vote:yes' }),
      202,
    );
    const { token } = (await interactionOf(r.body.id)).data;
    await expectStatus(
      await h.as(undefined).post(`/interactions/${r.body.id}/${token}/callback`, { type: 6 }),
      204,
    );
    const e = await expectStatus(
      await h
        .as(undefined)
        .patch(`/webhooks/${w.bot.id}/${token}/messages/@original`, { content: 'Vote (1 yes)' }),
      200,
    );
    expect(e.body).toMatchObject({ id: sent.body.id, content: 'Vote (1 yes)' });
  });

  it('D64: autocomplete (type 4) answers the bot’s choices (callback 8); none after 3 s of silence', async () => {
    const ask = h.as(w.human.token).post('/interactions', {
      type: 4,
      channelId: w.channelId,
      commandId: rollId,
      options: [{ name: 'search', value: 'ap', focused: true }],
    });
    // the bot answers as soon as the interaction is in the log
    const answer = (async () => {
      for (let i = 0; i < 100; i++) {
        const all = await delivered();
        const it = all.find((x) => x.data.type === 4);
        if (it) {
          expect(it.data.data.options).toEqual([
            { name: 'search', type: 3, value: 'ap', focused: true },
          ]);
          return h.as(undefined).post(`/interactions/${it.data.id}/${it.data.token}/callback`, {
            type: 8,
            data: {
              choices: [
                { name: 'apple', value: 'apple' },
                { name: 'apricot', value: 'apricot' },
              ],
            },
          });
        }
        await new Promise((res) => setTimeout(res, 20));
      }
      throw new Error('no autocomplete interaction');
    })();
    const [r, cb] = await Promise.all([ask, answer]);
    expect(cb.status).toBe(204);
    expect(r.status, r.raw).toBe(200);
    expect(r.body.choices).toEqual([
      { name: 'apple', value: 'apple' },
      { name: 'apricot', value: 'apricot' },
    ]);
    // a reply (4) does not answer an autocomplete request
    const silent = await expectStatus(
      await h.as(w.human.token).post('/interactions', {
        type: 4,
        channelId: w.channelId,
        commandId: rollId,
        options: [{ name: 'search', value: 'zz', focused: true }],
      }),
      200,
    );
    expect(silent.body.choices).toEqual([]);
    // exactly one focused option, declared with autocomplete
    expectError(
      await h.as(w.human.token).post('/interactions', {
        type: 4,
        channelId: w.channelId,
        commandId: rollId,
        options: [{ name: 'label', value: 'a', focused: true }],
      }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('D64: in a DM with the bot its global commands run; the reply is a DM message', async () => {
    const dm = await expectStatus(await h.as(w.human.token).post(`/users/${w.bot.userId}/dm`), 200);
    const r = await expectStatus(
      await h.as(w.human.token).post('/interactions', {
        type: 2,
        channelId: dm.body.channelId,
        commandId: rollId,
        options: [{ name: 'sides', value: 6 }],
      }),
      202,
    );
    const it = (await interactionOf(r.body.id)).data;
    expect(it.guildId).toBeUndefined();
    expect(it.member).toBeUndefined();
    people.clear();
    await expectStatus(
      await h.as(undefined).post(`/interactions/${r.body.id}/${it.token}/callback`, {
        type: 4,
        data: { content: 'dm roll' },
      }),
      204,
    );
    expect(people.of('DM_MESSAGE_CREATE')[0]?.data).toMatchObject({
      content: 'dm roll',
      interaction: { id: r.body.id },
    });
  });

  it('D56: a plain message carries none of the new fields', async () => {
    const m = await expectStatus(
      await h.as(w.human.token).post(`/channels/${w.channelId}/messages`, { content: 'plain' }),
      200,
    );
    expect(Object.keys(m.body).sort()).toEqual([
      'author',
      'channelId',
      'content',
      'guildId',
      'id',
      'timestamp',
    ]);
  });

  it('joins: a person who just joined may run commands', async () => {
    const late = await makeUser(h, 'late');
    await join(h, w.guildId, late.id);
    await expectStatus(await run(undefined, late.token), 202);
  });
});
