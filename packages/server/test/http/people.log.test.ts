import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PeopleDispatch } from '../../src/domain/events/recorder.js';
import {
  createHarness,
  dbDescribe,
  dialect,
  expectStatus,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';

// D72: people's events are read from the event log, like bots', with Redis only as the wake-up.
// Two nodes on one database and NO Redis at all: an event committed through node A reaches the
// people's fan-out of node B by B's own reading of the log — a message (a bots' type) and a
// people-only event alike — and each node hands each event to its people exactly once (its own
// commits at once, not again when its reader passes them).
dbDescribe("people's events across nodes through the event log (D72)", () => {
  let a: Harness;
  let b: Harness;
  let w: World;
  let dir: string | undefined;
  const seenA: PeopleDispatch[] = [];
  const seenB: PeopleDispatch[] = [];

  beforeAll(async () => {
    if (dialect === 'sqlite') dir = mkdtempSync(path.join(tmpdir(), 'parley-people-log-'));
    a = await createHarness(
      dir ? { env: { PARLEY_DATABASE_URL: `sqlite:${path.join(dir, 'parley.db')}` } } : {},
    );
    b = await createHarness({ sameDatabaseAs: a, env: { PARLEY_NODE_ID: '2' } });
    a.services.events.onPeople((e) => seenA.push(e));
    b.services.events.onPeople((e) => seenB.push(e));
    w = await makeWorld(a);
  });

  afterAll(async () => {
    await b?.close();
    await a?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Wait until `list` holds an event matching `match` (the readers poll every 250 ms). */
  const arrival = async (
    list: PeopleDispatch[],
    match: (e: PeopleDispatch) => boolean,
  ): Promise<number> => {
    const started = Date.now();
    while (Date.now() - started < 5000) {
      if (list.some(match)) return Date.now() - started;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error('the event never reached the node');
  };
  const settle = () => new Promise((r) => setTimeout(r, 800)); // > 3 polls of both readers

  it('a message sent through A reaches the people of B without Redis, once on each node', async () => {
    const sent = await expectStatus(
      await a.as(w.human.token).post(`/channels/${w.channelId}/messages`, { content: 'via log' }),
      200,
    );
    const isIt = (e: PeopleDispatch) =>
      e.type === 'MESSAGE_CREATE' && (JSON.parse(e.data) as { id: number }).id === sent.body.id;
    // A's own people hear it at commit, before the answer.
    expect(seenA.filter(isIt)).toHaveLength(1);
    expect(await arrival(seenB, isIt)).toBeLessThan(2000);
    await settle();
    expect(seenA.filter(isIt)).toHaveLength(1);
    expect(seenB.filter(isIt)).toHaveLength(1);
    const got = seenB.find(isIt) as PeopleDispatch;
    expect(got.audience).toEqual({ kind: 'channel', guildId: w.guildId, channelId: w.channelId });
    expect(JSON.parse(got.data)).toMatchObject({ id: sent.body.id, content: 'via log' });
  });

  it('a people-only event (CHANNEL_UPDATE) is logged once with no recipient bot and reaches B', async () => {
    await expectStatus(
      await a.admin.patch(`/channels/${w.channelId}`, { topic: 'logged once' }),
      200,
    );
    const isIt = (e: PeopleDispatch) =>
      e.type === 'CHANNEL_UPDATE' &&
      (JSON.parse(e.data) as { topic: string | null }).topic === 'logged once';
    expect(seenA.filter(isIt)).toHaveLength(1);
    await arrival(seenB, isIt);
    await settle();
    expect(seenB.filter(isIt)).toHaveLength(1);
    const rows = await a.services.domain.db
      .selectFrom('event_log as e')
      .innerJoin('recipient_sets as r', 'r.id', 'e.recipients')
      .select(['e.data', 'e.audience', 'r.bots'])
      .where('e.type', '=', 'CHANNEL_UPDATE')
      .execute();
    const mine = rows.filter((r) => r.data.includes('logged once'));
    expect(mine).toHaveLength(1);
    expect(mine[0]?.bots).toBe(',');
    // D70 (revises this test's channel-wide audience): a channel's events go to the members who
    // can see it, named one by one.
    const audience = JSON.parse(mine[0]?.audience ?? 'null');
    expect(audience.kind).toBe('users');
    expect(audience.userIds).toEqual(expect.arrayContaining([w.owner.id, w.human.id]));
  });

  it('a rolled-back change logs nothing and tells nobody', async () => {
    const before = seenA.length + seenB.length;
    const d = a.services.domain;
    await expect(
      d.db.transaction().execute(async (trx) => {
        d.people.people(trx, {
          type: 'GUILD_UPDATE',
          data: { id: w.guildId, name: 'never' },
          audience: { kind: 'guild', guildId: w.guildId },
        });
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    await settle();
    expect(seenA.length + seenB.length).toBe(before);
    const rows = await d.db
      .selectFrom('event_log')
      .select('data')
      .where('type', '=', 'GUILD_UPDATE')
      .execute();
    expect(rows.filter((r) => r.data.includes('never'))).toHaveLength(0);
  });
});
