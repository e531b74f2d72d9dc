import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  expectError,
  makeBot,
  makeUser,
  type Harness,
} from '../helpers/harness.js';

// Issue #10, finding 9 (D54): suspected weaknesses, each now refused.

dbDescribe('unauthenticated buckets: IPv6 clients by their /64 (D54, D25)', () => {
  let h: Harness;
  beforeAll(async () => {
    // burst 3 and a slow refill: exact counts
    h = await createHarness({ env: { PARLEY_RATE_GLOBAL: '0.01/3' } });
  });
  afterAll(async () => h.close());

  const from = (remoteAddress: string) =>
    h.request({ method: 'GET', url: '/api/v1/bot/me', remoteAddress });

  it('addresses of one /64 share one bucket; another /64 has its own', async () => {
    const statuses: number[] = [];
    for (const a of [
      '2001:db8:1:2::1',
      '2001:db8:1:2::2',
      '2001:db8:1:2:ffff:1:2:3',
      '2001:db8:1:2::99',
    ])
      statuses.push((await from(a)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect((await from('2001:db8:1:3::1')).status).toBe(401);
  });

  it('an IPv4-mapped IPv6 address is its IPv4 address', async () => {
    const statuses: number[] = [];
    for (const a of ['198.51.100.7', '::ffff:198.51.100.7', '198.51.100.7', '::ffff:c633:6407'])
      statuses.push((await from(a)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    expect((await from('198.51.100.8')).status).toBe(401);
  });
});

dbDescribe('operator input: safe names and http(s) avatars (D54)', () => {
  let h: Harness;
  let ownerId = 0;
  let guildId = 0;
  beforeAll(async () => {
    h = await createHarness();
    ownerId = (await makeUser(h, 'owner')).id;
    guildId = (await h.admin.post('/guilds', { name: 'Guild', ownerId })).body.id;
  });
  afterAll(async () => h.close());

  const badNames = [
    ['bidi override', 'evil\u202Egnp.exe'],
    ['bidi isolate', 'a\u2066b'],
    ['zero-width joiner', 'a\u200Db'],
    ['control character', 'bell\u0007'],
    ['newline', 'two\nlines'],
    ['BOM', '\uFEFFname'],
  ] as const;
  const badAvatars = [
    'javascript:alert(1)',
    'JAVASCRIPT:alert(1)',
    'data:image/png;base64,AAAA',
    'file:///etc/passwd',
    'ftp://example.com/a.png',
    'vbscript:msgbox(1)',
  ];

  it.each(badNames)(
    'names with a %s → 400 on users, bots, guilds, channels and roles',
    async (_, name) => {
      const tries = [
        await h.admin.post('/users', { name }),
        await h.admin.post('/bots', { ownerId, name }),
        await h.admin.post('/guilds', { name, ownerId }),
        await h.admin.post(`/guilds/${guildId}/channels`, { name }),
        await h.admin.post(`/guilds/${guildId}/roles`, { name, permissions: 1 }),
      ];
      for (const r of tries) expectError(r, 400, 'VALIDATION_ERROR', name);
    },
  );

  it.each(badAvatars)('avatar %s → 400 on users and bots', async (avatar) => {
    expectError(await h.admin.post('/users', { name: 'someone', avatar }), 400, 'VALIDATION_ERROR');
    expectError(
      await h.admin.post('/bots', { ownerId, name: 'b', avatar }),
      400,
      'VALIDATION_ERROR',
    );
  });

  it('ordinary names and http(s) avatars are still accepted', async () => {
    const u = await h.admin.post('/users', {
      name: 'Zoë 👋 Ünïcödé',
      avatar: 'https://example.com/a.png',
    });
    expect(u.status).toBe(201);
    expect(u.body.avatar).toBe('https://example.com/a.png');
    const b = await h.admin.post('/bots', {
      ownerId: (await makeUser(h, 'fresh-owner')).id, // at most 3 bots per owner
      name: 'x',
      avatar: 'http://example.com/b.png',
    });
    expect(b.status).toBe(201);
  });
});

dbDescribe('a bot user never owns a guild (D54)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness();
  });
  afterAll(async () => h.close());

  it('creating a guild with a bot user as owner → 400 VALIDATION_ERROR naming ownerId, nothing created', async () => {
    const owner = await makeUser(h, 'owner');
    const bot = await makeBot(h, owner.id);
    const count = async () =>
      Number(
        (
          await h.services.domain.db
            .selectFrom('guilds')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await count();
    const r = await h.admin.post('/guilds', { name: 'Bot land', ownerId: bot.userId });
    expectError(r, 400, 'VALIDATION_ERROR');
    expect(r.body.error.details).toEqual([
      { field: 'ownerId', problem: expect.stringMatching(/bot/) },
    ]);
    expect(await count()).toBe(before);
    // a person still can
    expect((await h.admin.post('/guilds', { name: 'People', ownerId: owner.id })).status).toBe(201);
  });
});
