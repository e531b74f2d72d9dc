import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresAvailable } from '../helpers/harness.js';
import {
  FaultClient,
  OwnDatabase,
  OwnRedis,
  readChannel,
  ReadyzWatch,
  Sender,
  type SendRecord,
} from '../helpers/faults.js';
import { openGateway, type Attempt } from '../helpers/live-server.js';
import {
  callOk,
  childEnv,
  CLI,
  freePort,
  REPO,
  runParley,
  startParley,
  stopParley,
  tempDir,
  type Running,
} from '../helpers/process.js';
import { redisAvailable } from '../helpers/redis.js';

// Issue 22 / D72: when PostgreSQL or Redis falters, no node dies and nobody misses a message.
// Two real server processes on PostgreSQL + Redis under a steady send load (two bots, 10 sends/s
// each, one per node), with bots and people connected to the gateway of each node. The suite
// owns what it breaks: its own redis-server on a free port, its own database (fault_<random>,
// dropped afterwards). Faults, one after the other: Redis stopped for 15 s; the database's
// backends terminated once, then three times in 10 s; the database refusing connections for
// 10 s; a node SIGKILLed and restarted. The figures are printed at the end (docs/deploy.md).
const ADMIN = 'fault-suite-admin-token-0123456789';
const SEND_EVERY_MS = 100;
const REDIS_DOWN_MS = 15_000;
const REFUSE_MS = 10_000;
/** after each fault, how long the load runs on before the next (and what "after" counts) */
const SETTLE_MS = 5_000;
/** how late a live delivery may be on a busy machine before it counts as missed */
const LAG_MS = 3_000;
/** a node's start-up (tsx compiles the server) can be slow on a busy shared machine */
const START_MS = 180_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pgOk = await postgresAvailable();
const redisOk = await redisAvailable();
// redis-server is what the suite stops and starts; in CI it must be there (like the services).
const redisServerOk = await new Promise<boolean>((resolve) => {
  import('node:child_process')
    .then(({ execFile }) => execFile('redis-server', ['--version'], (err) => resolve(!err)))
    .catch(() => resolve(false));
});
if (!redisServerOk && process.env['CI'] === 'true')
  throw new Error('redis-server is required in CI (the fault suite runs its own)');
const run = pgOk && redisOk && redisServerOk;

interface Figures {
  fault: string;
  /** when the fault began and ended (ms) */
  began: number;
  recovered: number;
  sends: { during: number; ok: number; refused503: number; nodeDown: number; other: number };
  after: { sends: number; ok: number };
  /** from the fault's end to the last sender's first success after its last failure (ms) */
  recoveryMs: number;
  /** log lines (warn and above) each node wrote from the fault's start to SETTLE_MS after it */
  logLines: number[];
  /** what else was measured (the node kill: how long the restart and the failover took) */
  note?: string;
  /** filled in at the end: acknowledged sends of the window not stored; per person, not live */
  lost?: number;
  missedLive?: number[];
}

describe.skipIf(!run)('D72 faults: two nodes on PostgreSQL + Redis under load', () => {
  let redis = new OwnRedis(0);
  const db = new OwnDatabase();
  const data = tempDir('parley-faults-');
  const nodes: Array<Running | undefined> = [undefined, undefined];
  /** processes that ended on their own (not by the suite's kill or stop) */
  const unexpectedExits: string[] = [];
  let env: (node: number) => Record<string, string>;
  let origins: string[] = [];
  let channelId = 0;
  let senders: Sender[] = [];
  let listeners: FaultClient[] = [];
  let people: FaultClient[] = [];
  let readyz: ReadyzWatch;
  /** a bot that first connects during the Redis outage */
  let newcomer = '';
  /** a bot of the guild, to read the channel back */
  let reader = '';
  const figures: Figures[] = [];
  /** Where each process's output stood (a restarted node is a new process: all of it counts). */
  type Offsets = Map<Running, number>;
  const logOffsets = (): Offsets =>
    new Map(nodes.flatMap((n) => (n ? [[n, n.stdout().length + n.stderr().length] as const] : [])));
  const logSince = (from: Offsets, n: Running): string =>
    (n.stdout() + n.stderr()).slice(from.get(n) ?? 0);
  const logLinesSince = (from: Offsets): number[] =>
    nodes.map((n) =>
      n
        ? logSince(from, n)
            .split('\n')
            // the banner of a restarted node is not a log line
            .filter((l) => l.startsWith('{') || /error|warn/i.test(l)).length
        : 0,
    );
  const logTextSince = (from: Offsets): string =>
    nodes.map((n) => (n ? logSince(from, n) : '')).join('\n');

  const watchExit = (i: number): void => {
    const n = nodes[i] as Running;
    void n.exited.then((e) => {
      if (nodes[i] === n) unexpectedExits.push(`node ${i + 1}: ${e.code ?? e.signal}`);
    });
  };

  beforeAll(async () => {
    redis = new OwnRedis(await freePort());
    await redis.start();
    await db.create();
    const ports = [await freePort(), await freePort()];
    origins = ports.map((p) => `http://127.0.0.1:${p}`);
    env = (node: number) => ({
      PARLEY_HOST: '127.0.0.1',
      PARLEY_PORT: String(ports[node]),
      PARLEY_NODE_ID: String(node + 1),
      PARLEY_DATA_DIR: data.path,
      PARLEY_DATABASE_URL: db.url,
      PARLEY_REDIS_URL: redis.url,
      PARLEY_ADMIN_TOKEN: ADMIN,
      PARLEY_LOG_LEVEL: 'warn',
      // Limits stay on (D72: decided per node while Redis is down), high enough for the load.
      PARLEY_RATE_GLOBAL: '200/400',
      PARLEY_RATE_MESSAGES: '200/400',
    });
    // One after the other: the first migrates.
    nodes[0] = await startParley(env(0), START_MS);
    nodes[1] = await startParley(env(1), START_MS);
    watchExit(0);
    watchExit(1);

    const o = origins[0] as string;
    const admin = (method: string, url: string, body?: unknown) =>
      callOk(o, method, `/admin/v1${url}`, ADMIN, body);
    const owner = await admin('POST', '/users', { name: 'owner' });
    const guild = await admin('POST', '/guilds', { name: 'Faults', ownerId: owner.id });
    const channel = await admin('POST', `/guilds/${guild.id}/channels`, { name: 'load' });
    channelId = channel.id;
    // D48: an account owns at most 3 bots: each bot here has an owner of its own.
    const bot = async (name: string) => {
      const mine = await admin('POST', '/users', { name: `owner-${name}` });
      const b = await admin('POST', '/bots', { ownerId: mine.id, name });
      await admin('PUT', `/guilds/${guild.id}/members/${b.bot.botUser.id}`, {});
      return b.token as string;
    };
    const person = async (name: string) => {
      const u = await admin('POST', '/users', { name });
      await admin('PUT', `/guilds/${guild.id}/members/${u.id}`, {});
      return (await admin('POST', `/users/${u.id}/sessions`)).token as string;
    };
    const s1 = await bot('sender1');
    const s2 = await bot('sender2');
    reader = await bot('reader');
    newcomer = await bot('newcomer');
    listeners = [
      new FaultClient('bot on node 1', origins, 0, await bot('listener1'), 'bot', channelId),
      new FaultClient('bot on node 2', origins, 1, await bot('listener2'), 'bot', channelId),
    ];
    people = [
      new FaultClient('person on node 1', origins, 0, await person('p1'), 'person', channelId),
      new FaultClient('person on node 2', origins, 1, await person('p2'), 'person', channelId),
    ];
    await Promise.all([...listeners, ...people].map((c) => c.start()));
    readyz = new ReadyzWatch(origins);
    readyz.start();
    senders = [
      new Sender('s1', origins, 0, s1, channelId, SEND_EVERY_MS),
      new Sender('s2', origins, 1, s2, channelId, SEND_EVERY_MS),
    ];
    for (const s of senders) s.start();
    await sleep(2000);
  }, 420_000);

  afterAll(async () => {
    readyz?.stop();
    for (const s of senders) await s.stop();
    for (const c of [...listeners, ...people]) c.stop();
    const all = [...nodes];
    nodes[0] = nodes[1] = undefined;
    await Promise.all(all.map((n) => stopParley(n, 'SIGKILL')));
    await redis.stop();
    await db.drop();
    data.remove();
  }, 60_000);

  const sends = (from: number, to: number): SendRecord[] =>
    senders.flatMap((s) => s.sent).filter((r) => r.at >= from && r.at < to);

  /**
   * Run a fault from `begin` until it has ended (`recovered` is when it did), let the load run
   * on for SETTLE_MS, and check what every fault must keep: every failed send is a 503 with
   * Retry-After (or a node that is down, `downNode`), and each sender succeeds again within 3 s
   * of the recovery and from then on.
   */
  const fault = async (
    name: string,
    act: () => Promise<{ began: number; recovered: number }>,
    downNode?: number,
  ): Promise<Figures> => {
    const logFrom = logOffsets();
    const { began, recovered } = await act();
    await sleep(SETTLE_MS);
    const during = sends(began, recovered);
    const after = sends(recovered, recovered + SETTLE_MS);
    for (const r of [...during, ...after]) {
      if (r.status === 200) continue;
      if (r.status === 0 && downNode !== undefined && r.node === downNode) continue;
      expect(
        { status: r.status, code: r.code, retryAfter: r.retryAfter !== null },
        `${name}: ${r.sender} → node ${r.node + 1}`,
      ).toEqual({ status: 503, code: 'SERVICE_UNAVAILABLE', retryAfter: true });
    }
    let recoveryMs = 0;
    for (const s of senders) {
      const mine = s.sent.filter((r) => r.at >= began && r.at < recovered + SETTLE_MS);
      const lastFail = mine.filter((r) => r.status !== 200).at(-1);
      if (!lastFail) continue;
      const back = mine.find((r) => r.at > lastFail.at && r.status === 200);
      expect(back, `${name}: ${s.name} never succeeded again`).toBeDefined();
      recoveryMs = Math.max(recoveryMs, (back as SendRecord).done - recovered);
      // D72: serving again within 2 s of the fault's end — no request sent later fails — and
      // answered within 3 s of it, unless this machine is so busy that one send takes longer
      // (then the send right after the last failure must succeed).
      expect(lastFail.at - recovered, `${name}: ${s.name} failed after recovery`).toBeLessThan(
        2000,
      );
      const latency = Math.max(...mine.map((r) => r.done - r.at));
      expect((back as SendRecord).done - recovered, `${name}: ${s.name} recovery`).toBeLessThan(
        Math.max(3000, 2000 + 2 * latency),
      );
    }
    const logLines = logLinesSince(logFrom);
    const f: Figures = {
      fault: name,
      began,
      recovered,
      sends: {
        during: during.length,
        ok: during.filter((r) => r.status === 200).length,
        refused503: during.filter((r) => r.status === 503).length,
        nodeDown: during.filter((r) => r.status === 0).length,
        other: during.filter((r) => r.status !== 200 && r.status !== 503 && r.status !== 0).length,
      },
      after: { sends: after.length, ok: after.filter((r) => r.status === 200).length },
      recoveryMs,
      logLines,
    };
    figures.push(f);
    console.log(`${name}:`, JSON.stringify(f), '\n', logTextSince(logFrom).slice(0, 4000));
    expect(unexpectedExits, `${name}: a node exited`).toEqual([]);
    return f;
  };

  it('Redis stopped for 15 s: everything keeps serving; /readyz 200 "degraded"; a new bot connects, D28 and D29 hold', async () => {
    const f = await fault('redis down 15 s', async () => {
      const began = Date.now();
      await redis.stop();
      let recovered = 0;
      try {
        await duringRedisOutage();
      } finally {
        // Back after 15 s, whatever was found meanwhile (the next faults need it).
        await sleep(Math.max(0, began + REDIS_DOWN_MS - Date.now()));
        recovered = Date.now();
        await redis.start();
      }
      return { began, recovered };
    });
    async function duringRedisOutage(): Promise<void> {
      await sleep(2000);
      // A new bot connects during the outage (D72), on both nodes at once: D28 holds across
      // nodes through the database — one attempt is accepted (READY), the other refused with 429.
      const token = newcomer;
      const gw = (node: number) => `${(origins[node] as string).replace(/^http/, 'ws')}/gateway`;
      const both = await Promise.all([openGateway(gw(1), token), openGateway(gw(0), token)]);
      const accepted = both.flatMap((a, i) => (a.kind === 'open' ? [{ a, node: 1 - i }] : []));
      const refused = both.flatMap((a) => (a.kind === 'refused' ? [a] : []));
      expect(
        { accepted: accepted.length, refused: refused.map((r) => r.status) },
        JSON.stringify(refused.map((r) => r.body)),
      ).toEqual({ accepted: 1, refused: [429] });
      const first = accepted[0] as { a: Extract<Attempt, { kind: 'open' }>; node: number };
      await first.a.client.ready();
      await sleep(1100);
      // D29: the newest connection wins, the other closes with 4010 — without Redis's signal.
      const second = await openGateway(gw(1 - first.node), token);
      if (second.kind !== 'open') throw new Error(`refused ${second.status}`);
      await second.client.ready();
      const replacedAt = Date.now();
      expect((await first.a.client.closed).code).toBe(4010);
      expect(Date.now() - replacedAt).toBeLessThan(3000);
      await second.client.close();
      // A bot and a person lose their connections during the outage: both resume (D31, D51).
      const listener = listeners[1] as FaultClient;
      const person = people[1] as FaultClient;
      const dropped = Date.now();
      listener.drop();
      person.drop();
      await sleep(3000);
      for (const c of [listener, person]) {
        const after = c.events.filter((e) => e.at > dropped).map((e) => e.what);
        expect(
          after.some((w) => w.startsWith('RESUMED on node 2')),
          `${c.name}: ${after.join(', ')}`,
        ).toBe(true);
      }
    }
    // Nothing failed while Redis was down.
    expect(f.sends.ok).toBe(f.sends.during);
    expect(f.sends.during).toBeGreaterThan(10);
    // /readyz: 200 on both nodes all along, "degraded" once the outage is seen, not after.
    const during = readyz.between(f.began + 1500, f.recovered - 500);
    expect(during.length).toBeGreaterThan(20);
    for (const s of during)
      expect({ status: s.status, body: s.body }).toEqual({
        status: 200,
        body: { ready: true, phase: 'ready', degraded: ['redis'] },
      });
    for (const s of readyz.between(f.recovered + 2500, Date.now()))
      expect({ status: s.status, body: s.body }).toEqual({
        status: 200,
        body: { ready: true, phase: 'ready' },
      });
    // One line when it began, one when it ended, per node.
    for (const n of f.logLines) expect(n).toBeLessThanOrEqual(3);
  }, 90_000);

  it('the database backends terminated once', async () => {
    const f = await fault('pg terminate ×1', async () => {
      const began = Date.now();
      expect(await db.terminate()).toBeGreaterThan(0);
      return { began, recovered: Date.now() };
    });
    for (const n of f.logLines) expect(n).toBeLessThanOrEqual(4);
  }, 60_000);

  it('the database backends terminated three times in 10 s', async () => {
    const f = await fault('pg terminate ×3 in 10 s', async () => {
      const began = Date.now();
      await db.terminate();
      await sleep(4500);
      await db.terminate();
      await sleep(4500);
      await db.terminate();
      return { began, recovered: Date.now() };
    });
    for (const n of f.logLines) expect(n).toBeLessThanOrEqual(8);
  }, 60_000);

  it('the database refusing connections for 10 s: 503 + Retry-After, /readyz 503 "database", back within 2 s', async () => {
    let refusedAt = 0;
    let allowedAt = 0;
    const f = await fault('pg refuses connections 10 s', async () => {
      refusedAt = Date.now();
      try {
        await db.refuse();
        await sleep(REFUSE_MS);
      } finally {
        await db.allow();
      }
      allowedAt = Date.now();
      return { began: refusedAt, recovered: allowedAt };
    });
    expect(f.sends.refused503).toBeGreaterThan(5);
    const during = readyz.between(refusedAt + 1500, allowedAt - 300);
    expect(during.length).toBeGreaterThan(20);
    for (const s of during)
      expect({ status: s.status, failing: s.body?.failing }).toEqual({
        status: 503,
        failing: 'database',
      });
    // D72: ready again within 2 s of the database's return, on both nodes.
    for (const node of [0, 1]) {
      const back = readyz
        .between(allowedAt, allowedAt + SETTLE_MS, node)
        .find((s) => s.status === 200);
      expect(back, `node ${node + 1} never ready again`).toBeDefined();
      expect((back as { at: number }).at - allowedAt).toBeLessThan(2000);
    }
    for (const n of f.logLines) expect(n).toBeLessThanOrEqual(4);
  }, 60_000);

  it('node 2 SIGKILLed and restarted: node 1 serves on, its clients move over and back', async () => {
    let killed = 0;
    let restartMs = 0;
    const f = await fault(
      'node 2 SIGKILL + restart',
      async () => {
        const began = Date.now();
        const victim = nodes[1] as Running;
        nodes[1] = undefined;
        await stopParley(victim, 'SIGKILL');
        killed = Date.now();
        await sleep(2000);
        const restarting = Date.now();
        nodes[1] = await startParley(env(1), START_MS);
        restartMs = Date.now() - restarting;
        watchExit(1);
        return { began, recovered: Date.now() };
      },
      1,
    );
    // Node 2's sender moved to node 1 (as a balancer would), and its gateway clients too.
    const s2 = senders[1] as Sender;
    const failover = s2.sent.find((r) => r.at >= killed && r.status === 200 && r.node === 0);
    expect(failover, 'node 2 sender never served by node 1').toBeDefined();
    const moved = [listeners[1], people[1]].map((c) => {
      const back = (c as FaultClient).events.find(
        (e) => e.at > killed && /^(RESUMED|READY) on node 1/.test(e.what),
      );
      expect(back, `${(c as FaultClient).name} never reconnected to node 1`).toBeDefined();
      return `${(c as FaultClient).name} on node 1 after ${(((back as { at: number }).at - killed) / 1000).toFixed(1)} s`;
    });
    f.note =
      `sender 2 served by node 1 after ${(((failover as SendRecord).done - killed) / 1000).toFixed(1)} s; ` +
      `${moved.join('; ')}; node 2 restarted in ${(restartMs / 1000).toFixed(1)} s`;
  }, 240_000);

  it('afterwards: no acknowledged message lost or duplicated; every bot and every person got every one', async () => {
    for (const s of senders) await s.stop();
    await sleep(2000); // the last dispatches
    const acked = senders.flatMap((s) => s.sent).filter((r) => r.status === 200);
    const stored = await readChannel(origins[0] as string, reader, channelId);
    const ids = stored.map((m) => m.id);
    expect(new Set(ids).size, 'a message id twice').toBe(ids.length);
    const contents = stored.map((m) => m.content);
    expect(new Set(contents).size, 'a send stored twice').toBe(contents.length);
    const have = new Set(ids);
    const lost = acked.filter((r) => !have.has(r.id as number));
    expect(lost, 'acknowledged but not stored').toEqual([]);
    for (const r of acked) expect(stored.find((m) => m.id === r.id)?.content).toBe(r.content);
    // Failed sends that were stored all the same (the answer was lost, not the write).
    const ambiguous = senders
      .flatMap((s) => s.sent)
      .filter((r) => r.status !== 200 && contents.includes(r.content)).length;
    const ackedIds = acked.map((r) => r.id as number);
    const report: Record<string, unknown> = { acked: acked.length, stored: ids.length, ambiguous };
    // Bots: every acknowledged message exactly once, across resumes (D31).
    for (const b of listeners) {
      const seen = new Map<number, number>();
      for (const id of b.dispatched) seen.set(id, (seen.get(id) ?? 0) + 1);
      const missing = ackedIds.filter((id) => !seen.has(id));
      const twice = [...seen].filter(([, n]) => n > 1).length;
      report[b.name] = { missing: missing.length, twice, closes: b.closes };
      expect({ missing: missing.length, twice }, b.name).toEqual({ missing: 0, twice: 0 });
    }
    // Per fault: acknowledged sends of its window lost, and not received live by each person.
    // The window ends LAG_MS before the next fault begins: a message acknowledged just before a
    // node is killed and not yet delivered is that kill's, not the fault before.
    for (const f of figures) {
      const windowAcked = acked.filter(
        (r) => r.at >= f.began && r.done < f.recovered + SETTLE_MS - LAG_MS,
      );
      f.lost = windowAcked.filter((r) => !have.has(r.id as number)).length;
      f.missedLive = people.map((p) => {
        const live = new Set(p.dispatched);
        return windowAcked.filter((r) => !live.has(r.id as number)).length;
      });
    }
    // Live means live: a person whose connection stayed up from a message's acknowledgement
    // until LAG_MS after it got that message on the socket — through every fault but the kill
    // of its own node (Redis down: from the log; PostgreSQL faults: after the reader's retry).
    for (const p of people) {
      const live = new Set(p.dispatched);
      const downs: Array<[number, number]> = [];
      let downSince: number | undefined;
      for (const e of p.events) {
        if (e.what.startsWith('closed') && downSince === undefined) downSince = e.at;
        if (/^(READY|RESUMED)/.test(e.what) && downSince !== undefined) {
          downs.push([downSince, e.at]);
          downSince = undefined;
        }
      }
      if (downSince !== undefined) downs.push([downSince, Infinity]);
      const connected = (from: number, to: number) => !downs.some(([a, b]) => a <= to && b >= from);
      const notLive = acked.filter(
        (r) =>
          r.done < Date.now() - LAG_MS &&
          connected(r.at, r.done + LAG_MS) &&
          !live.has(r.id as number),
      );
      expect(
        notLive.map((r) => ({ content: r.content, at: r.at })),
        `${p.name}: connected, yet not delivered live`,
      ).toEqual([]);
    }
    // People: every acknowledged message, live or by the refetch after op 9.
    for (const p of people) {
      const live = new Set(p.dispatched);
      const missedLive = ackedIds.filter((id) => !live.has(id));
      const missing = missedLive.filter((id) => !p.refetched.has(id));
      report[p.name] = {
        missedLive: missedLive.length,
        refetched: p.refetched.size,
        missing: missing.length,
        closes: p.closes,
        events: p.events.map((e) => e.what),
      };
      expect(missing.length, `${p.name} never got ${missing.length} messages`).toBe(0);
    }
    console.log('read back:', JSON.stringify(report, null, 1));
    console.log(
      [
        '| fault | sends during (ok / 503 / node down) | after: ok of sends | recovery | lost | missed live (person 1, 2) | log lines (node 1, 2) |',
        ...figures.map(
          (f) =>
            `| ${f.fault} | ${f.sends.during} (${f.sends.ok} / ${f.sends.refused503} / ${f.sends.nodeDown}) | ` +
            `${f.after.ok} of ${f.after.sends} | ${(f.recoveryMs / 1000).toFixed(1)} s | ${f.lost} | ` +
            `${(f.missedLive ?? []).join(', ')} | ${f.logLines.join(', ')} |`,
        ),
        ...figures.flatMap((f) => (f.note ? [`${f.fault}: ${f.note}`] : [])),
        `acknowledged ${acked.length}, stored ${ids.length}, stored though not acknowledged ${ambiguous}`,
      ].join('\n'),
    );
    expect(unexpectedExits).toEqual([]);
    for (const n of nodes) expect(n?.proc.exitCode ?? null).toBeNull();
  }, 60_000);

  it('a node started while the database refuses connections waits for it, then starts (one line); a missing database stops it at once', async () => {
    // …but a database that does not exist is a setting to fix (D42): one line, exit 1, no
    // waiting. Started alongside (each start compiles the server: the machine is shared).
    const missing = new URL(db.url);
    missing.pathname = `${missing.pathname}_missing`;
    const misconfigured = runParley(
      ['serve'],
      { ...env(0), PARLEY_PORT: String(await freePort()), PARLEY_DATABASE_URL: missing.toString() },
      180_000,
    );
    // After the load (the other nodes are idle now). The node may take a while to load on a busy
    // machine; the database refuses until it has said that it waits.
    await db.refuse();
    const port = await freePort();
    const third = spawn(process.execPath, ['--import', 'tsx', CLI, 'serve'], {
      cwd: REPO,
      env: childEnv({
        ...env(0),
        PARLEY_PORT: String(port),
        PARLEY_NODE_ID: '3',
        PARLEY_DRAIN_MS: '50',
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let errText = '';
    third.stdout.on('data', (c: Buffer) => (out += c.toString()));
    third.stderr.on('data', (c: Buffer) => (errText += c.toString()));
    const exited = new Promise<number | null>((resolve) => third.once('close', resolve));
    const waiting = () => errText.split('\n').filter((l) => l.includes('waiting for the database'));
    try {
      const deadline = Date.now() + 180_000;
      while (waiting().length === 0 && third.exitCode === null && Date.now() < deadline)
        await sleep(200);
      expect(third.exitCode, `it exited: ${errText}`).toBeNull();
      expect(waiting()).toHaveLength(1);
      await sleep(3000); // it retries with backoff meanwhile, silently
      expect(waiting()).toHaveLength(1);
      expect(third.exitCode).toBeNull();
      expect(out).not.toMatch(/Parley is running/);
    } finally {
      await db.allow();
    }
    try {
      const deadline = Date.now() + 60_000;
      while (!/^\s+Docs\s/m.test(out) && Date.now() < deadline) await sleep(200);
      expect(out).toMatch(/Parley is running \(postgres, node 3\)/);
      expect(errText).toMatch(/the database answers after \d+\.\d s; starting/);
      expect((await callOk(`http://127.0.0.1:${port}`, 'GET', '/readyz')).ready).toBe(true);
      third.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      if (third.exitCode === null) third.kill('SIGKILL');
    }
    const r = await misconfigured;
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/cannot open the database \(PARLEY_DATABASE_URL\): .*does not exist/);
    expect(r.stderr).not.toMatch(/waiting for the database/);
  }, 300_000);
});
