import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PG_URL, postgresAvailable } from '../helpers/harness.js';
import {
  connectPatiently,
  makeRemoteWorld,
  type Frame,
  type GatewayClient,
} from '../helpers/live-server.js';
import { callOk, startParley, stopParley, tempDir, type Running } from '../helpers/process.js';
import { dropPrefix, redisDescribe, redisUrlWithPrefix, uniquePrefix } from '../helpers/redis.js';

// Issue 15: the event log and per-session numbering hold across crashes and across nodes.
const ADMIN = 'event-log-admin-token-0123456789';
const quiet = {
  PARLEY_HOST: '127.0.0.1',
  PARLEY_PORT: '0',
  PARLEY_ADMIN_TOKEN: ADMIN,
  PARLEY_RATE_GLOBAL: 'off',
  PARLEY_RATE_MESSAGES: 'off',
  PARLEY_LOG_LEVEL: 'warn',
};

const post = (origin: string, channelId: number, token: string, content: string) =>
  callOk(origin, 'POST', `/api/v1/channels/${channelId}/messages`, token, { content });

async function messages(c: GatewayClient, n: number): Promise<Frame[]> {
  const out: Frame[] = [];
  while (out.length < n) out.push(await c.dispatch('MESSAGE_CREATE', 10_000));
  return out;
}

describe('a crash between checkpoints (SQLite, SIGKILL)', () => {
  const data = tempDir('parley-gw-ckpt-');
  let server: Running | undefined;
  afterAll(async () => {
    await stopParley(server, 'SIGKILL');
    data.remove();
  }, 30_000);

  it('the session resumes on the restarted process with every dispatch and its original s', async () => {
    const env = { ...quiet, PARLEY_DATA_DIR: data.path };
    server = await startParley(env);
    const w = await makeRemoteWorld(server.origin, ADMIN);
    const c = await connectPatiently(server.gatewayUrl, w.bot.token, { heartbeat: false });
    const { sessionId } = await c.ready();
    const sent: number[] = [];
    const say = async (o: string, tag: string) =>
      sent.push((await post(o, w.channelId, w.human.token, tag)).id);
    for (let i = 0; i < 6; i++) await say(server.origin, `a${i}`);
    const before = await messages(c, 6); // s 2…7
    // Checkpoint at s 7 (a heartbeat), then 6 more dispatches that no checkpoint covers.
    c.send({ op: 1, d: 7 });
    await c.next({ acks: true });
    for (let i = 0; i < 6; i++) await say(server.origin, `b${i}`);
    const after = await messages(c, 6); // s 8…13
    expect([...before, ...after].map((f) => f.s)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    // Crash: no release, no final checkpoint — only what was committed survives.
    await stopParley(server, 'SIGKILL');
    server = await startParley(env);
    for (let i = 0; i < 3; i++) await say(server.origin, `c${i}`);
    // The client had processed s 11 only: replay from there (past the last checkpoint, s 7).
    const r = await connectPatiently(server.gatewayUrl, w.bot.token, {
      query: `sessionId=${sessionId}&seq=11`,
    });
    expect((await r.next()).op).toBe(10);
    const replay: Frame[] = [];
    for (;;) {
      const f = await r.next({ timeoutMs: 10_000 });
      if (f.t === 'RESUMED') {
        expect(f.s).toBe(17);
        break;
      }
      replay.push(f);
    }
    expect(replay.map((f) => [f.t, f.s])).toEqual([
      ['MESSAGE_CREATE', 12],
      ['MESSAGE_CREATE', 13],
      ['MESSAGE_CREATE', 14],
      ['MESSAGE_CREATE', 15],
      ['MESSAGE_CREATE', 16],
    ]);
    expect(replay.map((f) => f.d.id)).toEqual(sent.slice(10));
    await say(server.origin, 'live');
    const live = await r.dispatch('MESSAGE_CREATE', 10_000);
    expect([live.s, live.d.id]).toEqual([18, sent[sent.length - 1]]);
    await r.close();
  }, 120_000);
});

const pgOk = await postgresAvailable();
const pgSuite = pgOk
  ? redisDescribe
  : (name: string, fn: () => void) => describe.skipIf(true)(`${name} [no PostgreSQL]`, fn);

pgSuite('a bot in 200 guilds, concurrent writers on two PostgreSQL nodes', () => {
  const schema = `log_${randomBytes(6).toString('hex')}`;
  const prefix = uniquePrefix();
  let a: Running | undefined;
  let b: Running | undefined;

  beforeAll(async () => {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`create schema ${schema}`);
    await c.end();
    const env = {
      ...quiet,
      PARLEY_DATA_DIR: `/tmp/parley-${schema}`,
      PARLEY_DATABASE_URL: `${PG_URL}?options=-c%20search_path%3D${schema}`,
      PARLEY_REDIS_URL: redisUrlWithPrefix(prefix),
    };
    a = await startParley({ ...env, PARLEY_NODE_ID: '1' });
    b = await startParley({ ...env, PARLEY_NODE_ID: '2' });
  }, 150_000);

  afterAll(async () => {
    await Promise.all([stopParley(a), stopParley(b)]);
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`drop schema if exists ${schema} cascade`);
    await c.end();
    await dropPrefix(prefix);
  }, 30_000);

  it('receives every message once, s gapless, each writer in its order; resumes across nodes', async () => {
    const A = a as Running;
    const B = b as Running;
    const w = await makeRemoteWorld(A.origin, ADMIN);
    const admin = (method: string, url: string, body?: unknown) =>
      callOk(A.origin, method, `/admin/v1${url}`, ADMIN, body);
    const WRITERS = 20;
    const GUILDS = 200;
    const writers = await Promise.all(
      Array.from({ length: WRITERS }, async (_, i) => {
        const u = await admin('POST', '/users', { name: `writer${i}` });
        const s = await admin('POST', `/users/${u.id}/sessions`);
        return { id: u.id as number, token: s.token as string, channels: [] as number[] };
      }),
    );
    // 200 guilds, each with the bot and one writer (10 guilds a writer).
    for (let g = 0; g < GUILDS; g += 10)
      await Promise.all(
        Array.from({ length: 10 }, async (_, k) => {
          const writer = writers[(g + k) % WRITERS];
          if (!writer) throw new Error('no writer');
          const guild = await admin('POST', '/guilds', { name: `G${g + k}`, ownerId: w.human.id });
          const channel = await admin('POST', `/guilds/${guild.id}/channels`, { name: 'c' });
          await admin('PUT', `/guilds/${guild.id}/members/${w.bot.userId}`, {});
          await admin('PUT', `/guilds/${guild.id}/members/${writer.id}`, {});
          writer.channels.push(channel.id);
        }),
      );

    const client = await connectPatiently(A.gatewayUrl, w.bot.token);
    const { sessionId } = await client.ready();
    // Each writer sends 40 messages one after another, alternating nodes and its guilds; all
    // writers at once: concurrent transactions on both nodes, every one with the bot as recipient.
    const PER = 40;
    const sentBy = new Map<number, number[]>();
    const writing = Promise.all(
      writers.map(async (wr) => {
        const ids: number[] = [];
        sentBy.set(wr.id, ids);
        for (let i = 0; i < PER; i++) {
          const node = i % 2 === 0 ? A : B;
          const ch = wr.channels[i % wr.channels.length] as number;
          ids.push((await post(node.origin, ch, wr.token, `${wr.id}:${i}`)).id);
        }
      }),
    );
    const total = WRITERS * PER;
    const frames: Frame[] = [];
    // Half way, the connection drops and the session resumes on node B.
    while (frames.length < total / 2) frames.push(await client.dispatch('MESSAGE_CREATE', 20_000));
    client.terminate();
    const last = frames[frames.length - 1]?.s ?? 0;
    const r = await connectPatiently(B.gatewayUrl, w.bot.token, {
      query: `sessionId=${sessionId}&seq=${last}`,
    });
    expect((await r.next()).op).toBe(10);
    let resumedS = 0;
    while (frames.length < total) {
      const f = await r.next({ timeoutMs: 20_000 });
      if (f.t === 'RESUMED') {
        resumedS = f.s ?? 0;
        continue;
      }
      expect(f.t).toBe('MESSAGE_CREATE');
      frames.push(f);
    }
    await writing;
    expect(resumedS).toBeGreaterThan(last);
    // s: 2, 3, … without a gap or a repeat, RESUMED's number included once.
    const s = [...frames.map((f) => f.s ?? 0), resumedS].sort((x, y) => x - y);
    expect(s).toEqual(Array.from({ length: total + 1 }, (_, i) => i + 2));
    // Each message exactly once, and each writer's messages in the order it sent them.
    const ids = frames.map((f) => f.d.id as number);
    expect(new Set(ids).size).toBe(total);
    for (const [writerId, sent] of sentBy) {
      const got = frames.filter((f) => f.d.author.id === writerId).map((f) => f.d.id as number);
      expect(got).toEqual(sent);
    }
    // Nothing more is owed.
    await expect(r.next({ timeoutMs: 500 })).rejects.toThrow();
    await r.close();
  }, 240_000);
});
