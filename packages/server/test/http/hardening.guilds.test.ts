import { Permission } from '@parley/protocol';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MAX_CHANNELS } from '../../src/domain/channels/channel-limit.js';
import { MAX_ROLES } from '../../src/domain/guilds/roles.service.js';
import {
  createHarness,
  dbDescribe,
  expectError,
  expectStatus,
  join,
  type Harness,
} from '../helpers/harness.js';
import { makeAppGuild, makePerson, PeopleEvents } from '../helpers/guild-admin.js';

// Issue 21 (D70): a guild holds at most 500 channels and 250 roles (409 CONFLICT), whoever
// creates them (a person with the right, the operator); a channel can be created private in one
// step, with its overwrites, and its CHANNEL_CREATE reaches only those who can see it.

dbDescribe('guild limits and private channels (D70)', () => {
  let h: Harness;
  let ev: PeopleEvents;
  let owner: Awaited<ReturnType<typeof makePerson>>;
  let member: Awaited<ReturnType<typeof makePerson>>;

  beforeAll(async () => {
    h = await createHarness();
    ev = new PeopleEvents(h);
    owner = await makePerson(h, 'owner');
    member = await makePerson(h, 'member');
  });
  afterAll(async () => {
    ev.stop();
    await h.close();
  });

  it('500 channels at most: the 501st → 409 CONFLICT (people and operator alike)', async () => {
    const g = await makeAppGuild(owner);
    const d = h.services.domain;
    // #general and 498 more, straight into the database: 499.
    const rows = Array.from({ length: MAX_CHANNELS - 2 }, (_, i) => ({
      id: d.ids.next(),
      guild_id: g.id,
      type: 0,
      name: `c${i}`,
      topic: '',
      dm_user_low: null,
      dm_user_high: null,
      created_at: d.clock.now(),
    }));
    for (let i = 0; i < rows.length; i += 100)
      await d.db
        .insertInto('channels')
        .values(rows.slice(i, i + 100))
        .execute();
    // The 500th is fine.
    await expectStatus(await owner.app.post(`/guilds/${g.id}/channels`, { name: 'last' }), 201);
    const r = await owner.app.post(`/guilds/${g.id}/channels`, { name: 'one-too-many' });
    expectError(r, 409, 'CONFLICT');
    expect(r.body.error.message).toContain('500');
    expectError(await h.admin.post(`/guilds/${g.id}/channels`, { name: 'op' }), 409, 'CONFLICT');
    // Nothing was written by the refusals.
    const { n } = await d.db
      .selectFrom('channels')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('guild_id', '=', g.id)
      .executeTakeFirstOrThrow();
    expect(Number(n)).toBe(MAX_CHANNELS);
    // Deleting one makes room again.
    const one = (await owner.app.get(`/guilds/${g.id}`)).body.channels[1].id as number;
    await expectStatus(await owner.app.delete(`/channels/${one}`), 204);
    await expectStatus(await owner.app.post(`/guilds/${g.id}/channels`, { name: 'again' }), 201);
  });

  it('250 roles at most, @everyone included: the 251st → 409 CONFLICT', async () => {
    const g = await makeAppGuild(owner);
    const d = h.services.domain;
    const rows = Array.from({ length: MAX_ROLES - 2 }, (_, i) => ({
      id: d.ids.next(),
      guild_id: g.id,
      name: `r${i}`,
      permissions: 0,
      created_at: d.clock.now(),
    }));
    for (let i = 0; i < rows.length; i += 100)
      await d.db
        .insertInto('roles')
        .values(rows.slice(i, i + 100))
        .execute();
    await expectStatus(
      await owner.app.post(`/guilds/${g.id}/roles`, { name: 'last', permissions: 0 }),
      201,
    );
    const r = await owner.app.post(`/guilds/${g.id}/roles`, { name: 'extra', permissions: 0 });
    expectError(r, 409, 'CONFLICT');
    expect(r.body.error.message).toContain('250');
    expectError(
      await h.admin.post(`/guilds/${g.id}/roles`, { name: 'op', permissions: 0 }),
      409,
      'CONFLICT',
    );
  });

  it('create with overwrites: private from the start; CHANNEL_CREATE only to who can VIEW it', async () => {
    const g = await makeAppGuild(owner);
    await join(h, g.id, member.id);
    ev.clear();
    const r = await expectStatus(
      await owner.app.post(`/guilds/${g.id}/channels`, {
        name: 'private',
        topic: 'secret plans',
        overwrites: [{ roleId: g.id, allow: 0, deny: Permission.VIEW_CHANNEL }],
      }),
      201,
    );
    expect(r.body).toStrictEqual({
      id: r.body.id,
      guildId: g.id,
      name: 'private',
      type: 0,
      topic: 'secret plans',
    });
    expect(ev.all).toEqual([
      { type: 'CHANNEL_CREATE', data: r.body, audience: { kind: 'users', userIds: [owner.id] } },
    ]);
    expect(
      (await member.app.get(`/guilds/${g.id}`)).body.channels.map((c: { id: number }) => c.id),
    ).toEqual([g.generalId]);
    const ows = await h.services.domain.db
      .selectFrom('channel_overwrites')
      .select(['role_id', 'allow', 'deny'])
      .where('channel_id', '=', r.body.id)
      .execute();
    expect(ows.map((o) => [Number(o.role_id), o.allow, o.deny])).toEqual([[g.id, 0, 1]]);
  });

  it('create with overwrites: a role of another guild → 404, a role twice → 400, nothing created', async () => {
    const g = await makeAppGuild(owner);
    const other = await makeAppGuild(owner);
    expectError(
      await owner.app.post(`/guilds/${g.id}/channels`, {
        name: 'x',
        overwrites: [{ roleId: other.id, allow: 0, deny: 1 }],
      }),
      404,
      'NOT_FOUND',
    );
    const twice = await owner.app.post(`/guilds/${g.id}/channels`, {
      name: 'x',
      overwrites: [
        { roleId: g.id, allow: 0, deny: 1 },
        { roleId: g.id, allow: 1, deny: 0 },
      ],
    });
    expectError(twice, 400, 'VALIDATION_ERROR');
    expect(twice.body.error.details[0].field).toBe('overwrites');
    expectError(
      await owner.app.post(`/guilds/${g.id}/channels`, {
        name: 'x',
        overwrites: [{ roleId: g.id, allow: 0, deny: 1, extra: true }],
      }),
      400,
      'VALIDATION_ERROR',
    );
    expect((await owner.app.get(`/guilds/${g.id}`)).body.channels).toHaveLength(1);
  });
});
