import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createHarness,
  dbDescribe,
  expectError,
  expectStatus,
  join,
  type Harness,
} from '../helpers/harness.js';
import { makeAppGuild, makePerson, type AppCaller } from '../helpers/guild-admin.js';

// D49 with D5/D6/D54: every guild-administration route refuses bad input with 400
// VALIDATION_ERROR in the error form — wrong types, unknown fields, missing or over-long names,
// control, format and bidi characters, bad ids — and changes nothing.
type Person = { id: number; token: string; app: AppCaller };

const BAD_NAMES: unknown[] = [
  '',
  'x'.repeat(101),
  'tab\there',
  'new\nline',
  'bell\u0007',
  'rtl\u202Eoverride',
  'isolate\u2066x',
  'zero\u200Bwidth',
  'bom\uFEFF',
  'line\u2028sep',
  42,
  null,
  true,
  ['general'],
  { name: 'x' },
];

dbDescribe('guild administration: bad input (D5, D6, D54)', () => {
  let h: Harness;
  let owner: Person;
  let other: Person;
  let g: { id: number; generalId: number };
  let roleId: number;

  beforeAll(async () => {
    h = await createHarness();
    owner = await makePerson(h, 'owner');
    other = await makePerson(h, 'other');
    g = await makeAppGuild(owner, 'Input');
    await join(h, g.id, other.id);
    roleId = (
      await expectStatus(
        await owner.app.post(`/guilds/${g.id}/roles`, { name: 'r', permissions: 1 }),
        201,
      )
    ).body.id;
  });
  afterAll(async () => h.close());

  const bad = async (r: Promise<unknown>, what: string) =>
    expectError((await r) as never, 400, 'VALIDATION_ERROR', what);

  it('names: empty, over 100 code points, control/format/bidi characters, wrong types → 400', async () => {
    for (const name of BAD_NAMES) {
      const w = JSON.stringify(name);
      await bad(owner.app.post('/guilds', { name }), `guild create ${w}`);
      await bad(owner.app.patch(`/guilds/${g.id}`, { name }), `guild rename ${w}`);
      await bad(owner.app.post(`/guilds/${g.id}/channels`, { name }), `channel create ${w}`);
      await bad(owner.app.patch(`/channels/${g.generalId}`, { name }), `channel patch ${w}`);
      await bad(owner.app.post(`/guilds/${g.id}/roles`, { name, permissions: 0 }), `role ${w}`);
      await bad(owner.app.patch(`/roles/${roleId}`, { name }), `role patch ${w}`);
    }
    // 100 code points (astral characters count once) are fine.
    const hundred = '😀'.repeat(100);
    const ok = await expectStatus(
      await owner.app.post(`/guilds/${g.id}/channels`, { name: hundred }),
      201,
    );
    expect(ok.body.name).toBe(hundred);
    // Nothing was renamed.
    const view = await expectStatus(await owner.app.get(`/guilds/${g.id}`), 200);
    expect(view.body.name).toBe('Input');
    expect(view.body.channels[0].name).toBe('general');
  });

  it('missing and unknown fields, empty patches, wrong shapes → 400', async () => {
    const cases: Array<[string, () => Promise<unknown>]> = [
      ['guild no name', () => owner.app.post('/guilds', {})],
      ['guild no body', () => owner.app.post('/guilds')],
      ['guild extra', () => owner.app.post('/guilds', { name: 'x', ownerId: other.id })],
      ['guild array', () => owner.app.post('/guilds', [])],
      ['rename extra', () => owner.app.patch(`/guilds/${g.id}`, { name: 'x', icon: 'y' })],
      ['rename empty', () => owner.app.patch(`/guilds/${g.id}`, {})],
      ['channel extra', () => owner.app.post(`/guilds/${g.id}/channels`, { name: 'x', type: 2 })],
      [
        'channel topic type',
        () => owner.app.post(`/guilds/${g.id}/channels`, { name: 'x', topic: 5 }),
      ],
      [
        'channel topic long',
        () => owner.app.post(`/guilds/${g.id}/channels`, { name: 'x', topic: 't'.repeat(1025) }),
      ],
      ['channel patch empty', () => owner.app.patch(`/channels/${g.generalId}`, {})],
      ['channel patch extra', () => owner.app.patch(`/channels/${g.generalId}`, { nsfw: true })],
      ['role no perms', () => owner.app.post(`/guilds/${g.id}/roles`, { name: 'x' })],
      [
        'role perms high',
        () => owner.app.post(`/guilds/${g.id}/roles`, { name: 'x', permissions: 131072 }),
      ],
      [
        'role perms neg',
        () => owner.app.post(`/guilds/${g.id}/roles`, { name: 'x', permissions: -1 }),
      ],
      [
        'role perms str',
        () => owner.app.post(`/guilds/${g.id}/roles`, { name: 'x', permissions: '8' }),
      ],
      [
        'role perms float',
        () => owner.app.post(`/guilds/${g.id}/roles`, { name: 'x', permissions: 1.5 }),
      ],
      [
        'role extra',
        () => owner.app.post(`/guilds/${g.id}/roles`, { name: 'x', permissions: 1, hoist: true }),
      ],
      ['role patch empty', () => owner.app.patch(`/roles/${roleId}`, {})],
      ['role patch extra', () => owner.app.patch(`/roles/${roleId}`, { position: 1 })],
      ['member roles none', () => owner.app.put(`/guilds/${g.id}/members/${other.id}/roles`, {})],
      [
        'member roles type',
        () => owner.app.put(`/guilds/${g.id}/members/${other.id}/roles`, { roles: roleId }),
      ],
      [
        'member roles dup',
        () =>
          owner.app.put(`/guilds/${g.id}/members/${other.id}/roles`, { roles: [roleId, roleId] }),
      ],
      [
        'member roles str',
        () =>
          owner.app.put(`/guilds/${g.id}/members/${other.id}/roles`, { roles: [String(roleId)] }),
      ],
      [
        'member roles extra',
        () => owner.app.put(`/guilds/${g.id}/members/${other.id}/roles`, { roles: [], nick: 'x' }),
      ],
      ['overwrite none', () => owner.app.put(`/channels/${g.generalId}/overwrites/${g.id}`, {})],
      [
        'overwrite high',
        () =>
          owner.app.put(`/channels/${g.generalId}/overwrites/${g.id}`, { allow: 1 << 17, deny: 0 }),
      ],
      [
        'overwrite extra',
        () =>
          owner.app.put(`/channels/${g.generalId}/overwrites/${g.id}`, { allow: 0, deny: 0, x: 1 }),
      ],
    ];
    cases.push([
      'ban with a reason',
      () => owner.app.put(`/guilds/${g.id}/bans/${other.id}`, { reason: 'x' }),
    ]);
    cases.push(['ban with an array', () => owner.app.put(`/guilds/${g.id}/bans/${other.id}`, [])]);
    for (const [what, call] of cases) await bad(call(), what);
    // Still a member: no bad request banned anyone. `{}` is a valid (empty) body.
    await expectStatus(await other.app.get(`/guilds/${g.id}`), 200);
    // Malformed JSON.
    const raw = await h.request({
      method: 'POST',
      url: '/app/v1/guilds',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
      payload: '{"name":',
    });
    expectError(raw, 400, 'VALIDATION_ERROR');
    // The member's roles were not touched by any of it.
    const m = await expectStatus(
      await h.as(owner.token).get(`/guilds/${g.id}/members/${other.id}`),
      200,
    );
    expect(m.body.roles).toEqual([]);
  });

  it('ids in paths: non-canonical or too large → 400; well-formed but unknown → 404', async () => {
    for (const id of ['0', '01', '-1', '1e3', '9007199254740992', 'abc', '1.0']) {
      await bad(owner.app.get(`/guilds/${id}`), `guild ${id}`);
      await bad(owner.app.patch(`/channels/${id}`, { name: 'x' }), `channel ${id}`);
      await bad(owner.app.delete(`/roles/${id}`), `role ${id}`);
      await bad(owner.app.delete(`/guilds/${g.id}/members/${id}`), `member ${id}`);
      await bad(owner.app.put(`/guilds/${g.id}/bans/${id}`), `ban ${id}`);
      await bad(owner.app.delete(`/channels/${g.generalId}/messages/${id}`), `message ${id}`);
    }
    expectError(
      await owner.app.delete(`/guilds/${g.id}/members/9007199254740991`),
      404,
      'NOT_FOUND',
    );
    expectError(
      await owner.app.delete(`/channels/${g.generalId}/messages/9007199254740991`),
      404,
      'NOT_FOUND',
    );
  });
});
