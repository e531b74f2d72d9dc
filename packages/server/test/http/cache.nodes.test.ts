import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getBot } from '../../src/domain/bots/bots.service.js';
import { FakeClock } from '../helpers/clock.js';
import {
  createHarness,
  dbDescribe,
  dialect,
  expectError,
  expectStatus,
  join,
  makeBot,
  makeUser,
  makeWorld,
  type Harness,
  type World,
} from '../helpers/harness.js';

// Issue 15: the derived cache (auth, access, recipients, webhook targets) is exact across nodes.
// Node B serves from memory what it has read, and a change committed through node A is in force
// on B for the very next request — no wait, no sleep: on PostgreSQL through the version sequence
// A bumps before answering (storage/pg-version.ts), on SQLite through the file's data_version.
dbDescribe('derived cache across two nodes on one database (issue 15)', () => {
  let a: Harness;
  let b: Harness;
  let w: World;
  let dir: string | undefined;
  // One clock for both nodes (D47's idle expiry below).
  const clock = new FakeClock();
  const say = (h: Harness, token: string, content: string) =>
    h.as(token).post(`/channels/${w.channelId}/messages`, { content });

  beforeAll(async () => {
    // SQLite: two servers on one file (in memory would be two databases).
    if (dialect === 'sqlite') dir = mkdtempSync(path.join(tmpdir(), 'parley-cache-nodes-'));
    a = await createHarness({
      clock,
      ...(dir ? { env: { PARLEY_DATABASE_URL: `sqlite:${path.join(dir, 'parley.db')}` } } : {}),
    });
    // Two nodes have distinct node ids (D3: ids made in the same millisecond never collide).
    b = await createHarness({ sameDatabaseAs: a, clock, env: { PARLEY_NODE_ID: '2' } });
    w = await makeWorld(a);
  });

  afterAll(async () => {
    await b?.close();
    await a?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('B serves repeated requests from memory: no load after the first', async () => {
    await expectStatus(await say(b, w.bot.token, 'one'), 200);
    const cache = b.services.domain.cache;
    const loads = cache.loads;
    const reads = cache.reads;
    await expectStatus(await say(b, w.bot.token, 'two'), 200);
    // SQLite: one version read each for authentication, the access check (channel, member,
    // overwrites) and the event's recipients and webhook targets (each costs nothing there).
    // PostgreSQL: one one-row query for all three — the version read to authenticate the request,
    // after it arrived, serves its access check and its event's recipients (Principal.pinned).
    expect(cache.reads - reads).toBe(dialect === 'postgres' ? 1 : 3);
    await expectStatus(await say(b, w.bot.token, 'three'), 200);
    // Auth, access, recipients and webhook targets all came from memory.
    expect(b.services.domain.cache.loads).toBe(loads);
  });

  it('a member removed through A cannot send through B on the next request', async () => {
    await expectStatus(await say(b, w.human.token, 'before'), 200);
    await expectStatus(await a.admin.delete(`/guilds/${w.guildId}/members/${w.human.id}`), 204);
    expectError(await say(b, w.human.token, 'after'), 403, 'FORBIDDEN', 'removed member on B');
  });

  it("a transaction's own lookups see its writes: a bot added gets its own GUILD_MEMBER_ADD", async () => {
    // Recipients of the guild's events are in A's cache after a first member joins...
    const x = await makeUser(a, 'x');
    await join(a, w.guildId, x.id);
    // ...and the next join adds a bot, then reads the recipients in the same transaction (D34:
    // every bot of the guild, the new one included).
    const bot2 = await makeBot(a, w.owner.id, 'second');
    await join(a, w.guildId, bot2.userId);
    const last = await a.services.domain.db
      .selectFrom('event_log as e')
      .innerJoin('recipient_sets as r', 'r.id', 'e.recipients')
      .select('r.bots')
      .where('e.type', '=', 'GUILD_MEMBER_ADD')
      .orderBy('e.pos', 'desc')
      .executeTakeFirstOrThrow();
    expect(last.bots).toBe(`,${[w.bot.id, bot2.id].sort((p, q) => p - q).join(',')},`);
  });

  it('D47: a session kept in use through A is not expired by B from its cached row', async () => {
    const DAY = 86_400_000;
    // B reads the session once (its row, with its last use, is cached there)...
    await expectStatus(await b.people(w.owner.token).get('/users/@me'), 200);
    // ...then the person works through A for 40 days: A writes the last use now and then, a
    // write that leaves the cache's version alone (derived-writes.ts SESSION_TOUCH_SQL).
    for (let i = 0; i < 2; i++) {
      clock.advance(20 * DAY);
      await expectStatus(await a.people(w.owner.token).get('/users/@me'), 200);
    }
    clock.advance(DAY);
    // 41 days after B's copy, 1 day after the last use: alive (PARLEY_SESSION_IDLE_DAYS=30).
    await expectStatus(await b.people(w.owner.token).get('/users/@me'), 200);
    // Then unused for longer than 30 days: expired on either node.
    clock.advance(30 * DAY + 1);
    expectError(await b.people(w.owner.token).get('/users/@me'), 401, 'UNAUTHORIZED');
    w.owner.token = '';
  });

  it('GET /bot/me comes from memory on B, and a rename through A shows on B at once', async () => {
    const me = () => b.as(w.bot.token).get('/bot/me');
    const before = (await expectStatus(await me(), 200)).body as { name: string };
    const loads = b.services.domain.cache.loads;
    expect((await expectStatus(await me(), 200)).body).toEqual(before);
    // the token, the bot's row and its view all from memory: nothing loaded, and the view is
    // the cache's own (frozen) value — on SQLite answered without a promise (PostgreSQL's
    // version check is a query)
    const view = getBot(b.services.domain, w.bot.id);
    if (dialect === 'sqlite') expect(view).not.toBeInstanceOf(Promise);
    expect(Object.isFrozen(await view)).toBe(true);
    expect(b.services.domain.cache.loads).toBe(loads);
    await expectStatus(await a.admin.patch(`/bots/${w.bot.id}`, { name: 'renamed-on-a' }), 200);
    const after = (await expectStatus(await me(), 200)).body as { name: string; botUser: unknown };
    expect(after.name).toBe('renamed-on-a');
    expect(after.botUser).toMatchObject({ name: 'renamed-on-a' });
    await expectStatus(await a.admin.patch(`/bots/${w.bot.id}`, { name: before.name }), 200);
    expect((await expectStatus(await me(), 200)).body).toEqual(before);
  });

  it('a bot token reset through A is refused by B at once (D8)', async () => {
    await expectStatus(await say(b, w.bot.token, 'old token'), 200);
    const reset = await expectStatus(await a.admin.post(`/bots/${w.bot.id}/token`), 200);
    expectError(await say(b, w.bot.token, 'old token again'), 401, 'UNAUTHORIZED', 'old token');
    await expectStatus(await say(b, reset.body.token as string, 'new token'), 200);
    w.bot.token = reset.body.token as string;
  });

  it("another node's sends: kept on PostgreSQL; on SQLite any commit of another connection invalidates", async () => {
    await expectStatus(await say(b, w.bot.token, 'warm'), 200);
    const loads = b.services.domain.cache.loads;
    for (let i = 0; i < 5; i++) await expectStatus(await say(a, w.bot.token, `from A ${i}`), 200);
    await expectStatus(await say(b, w.bot.token, 'after'), 200);
    if (dialect === 'postgres') expect(b.services.domain.cache.loads).toBe(loads);
    // SQLite's data_version moves with every commit of another connection (there a second
    // process is the CLI, not a node under message load): B loads again, and stays exact.
    else expect(b.services.domain.cache.loads).toBeGreaterThan(loads);
  });
});
