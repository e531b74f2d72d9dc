import { execFileSync, fork, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import http from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fileForm, pngOfSize } from '../../packages/server/test/helpers/media.js';
import { track } from '../lib/children.js';
import { connectGateway, type GatewayConnection } from '../lib/gateway-client.js';
import { HttpClient, mapLimit, type JsonReply } from '../lib/http-client.js';
import { Operator, type BotHandle } from '../lib/operator.js';
import { startParley } from '../lib/parley-server.js';
import { cpuMs, fdKinds, MiB, openFds, openFileLimit } from '../lib/rss.js';
import { seedPeople } from '../lib/seed-people.js';
import { nowMs, round, Samples, sleep, summarize } from '../lib/stats.js';
import { targetMet, type Figure, type TableRow } from '../lib/types.js';
import { WebhookReceiver, type ReceiverKind } from '../lib/webhook-receiver.js';
import type { HealthyJob, HealthyResult } from './healthy-client.js';
import { HostileLoad, HostilePeople } from './hostile.js';

/**
 * The soak (issue 10, "A soak test"): one real server process (what `npm start` runs, SQLite,
 * the server's default rate limits) under a few minutes of everything at once —
 *
 * - `bots` bots and `people` people holding gateway connections, spread over `guilds` guilds of
 *   `channelsPerGuild` channels;
 * - mixed REST traffic from them at fixed rates (open loop): message sends, edits and deletes of
 *   their own messages, history pages, uploads, typing (people), and one greedy bot that sends
 *   bursts past its `messages` bucket (its 429s show the limits are in force);
 * - hostile sockets (hostile.ts): slowloris and stalled uploads and sends;
 * - webhook receivers per guild that hang, fail (500), answer slowly — and one healthy one, the
 *   control (D39: the others must not delay it);
 * - healthy clients in a process of their own (healthy-client.ts) whose latency is measured.
 *
 * Then it checks: healthy p99; nothing acknowledged lost (every 2xx send is in history with its
 * last acknowledged edit, no acknowledged delete is, every acknowledged upload serves its bytes,
 * every connected socket got the MESSAGE_CREATE of every acknowledged send of its guild, the
 * healthy webhook receiver got them all); server RSS not rising after warm-up and the heap it
 * retains after full collections flat (no leak); the server's file
 * descriptors back to their start count once every client has gone. Every check is a figure with
 * a target; `failures` lists the missed ones.
 */
export interface SoakConfig {
  /** the traffic phase */
  readonly durationS: number;
  /** RSS samples before this (from the start of traffic) are warm-up */
  readonly warmupS: number;
  readonly bots: number;
  readonly people: number;
  readonly guilds: number;
  readonly channelsPerGuild: number;
  readonly hostileSockets: number;
  /** requests per second of each kind, over all load clients */
  readonly rates: {
    readonly send: number;
    readonly edit: number;
    readonly del: number;
    readonly history: number;
    readonly upload: number;
    readonly typing: number;
  };
  /** the greedy bot sends `greedyBurst` messages at once every `greedyEveryS` */
  readonly greedyBurst: number;
  readonly greedyEveryS: number;
  readonly healthyBots: number;
  readonly healthyPeople: number;
  /** each healthy client makes one request per interval */
  readonly healthyIntervalMs: number;
  readonly healthyP99TargetMs: number;
  /** the server's PARLEY_REQUEST_TIMEOUT_MS (D54); undefined: its default, 30 s */
  readonly requestTimeoutMs: number | undefined;
  readonly slowReceiverMs: number;
  /**
   * Sends per guild before the traffic phase (acknowledged and checked like the others): they
   * fill people's replay buffers (512 events per session), which otherwise fill during the
   * first minute — longer than the smoke's whole warm-up.
   */
  readonly prewarmSendsPerGuild: number;
  /**
   * Issue 21 (D70): hostile people on the gateway (hostile.ts HostilePeople), started halfway
   * through the traffic after warm-up, so the same run measures RSS without them, then with them.
   * null: none.
   */
  readonly hostilePeople: {
    readonly nonReaders: number;
    readonly socketsEach: number;
    readonly stormChannels: number;
    readonly renamesPerS: number;
    readonly churnEveryMs: number;
    readonly crowdEveryMs: number;
    readonly socketLifeMs: number;
  } | null;
  readonly log: (message: string) => void;
}

const MiB_ = 1024 * 1024;
/**
 * D70's caps for the hostile people a soak runs, in bytes: each non-reader's connected sockets
 * may hold 4 MiB unsent each and its (at most 16) sessions 1 MiB of replay each; the crowd holds
 * at most 16 connections, each 4 MiB unsent and 1 MiB of replay.
 */
export function hostileCapBytes(h: NonNullable<SoakConfig['hostilePeople']>): number {
  const nonReader = Math.min(16, h.socketsEach) * 4 * MiB_ + 16 * MiB_;
  const crowd = 16 * (4 * MiB_ + MiB_);
  return h.nonReaders * nonReader + crowd;
}

export function soakConfig(durationS: number, log: (m: string) => void): SoakConfig {
  return {
    durationS,
    // People's replay buffers (512 events per session) fill in the first minute or so at these
    // rates; memory grows until they are full, by design. Warm-up covers that.
    warmupS: Math.min(90, durationS / 3),
    bots: 200,
    people: 500,
    guilds: 4,
    channelsPerGuild: 2,
    hostileSockets: 200,
    rates: { send: 20, edit: 4, del: 2, history: 8, upload: 1, typing: 4 },
    greedyBurst: 30,
    greedyEveryS: 10,
    healthyBots: 2,
    healthyPeople: 2,
    healthyIntervalMs: 250,
    healthyP99TargetMs: 50,
    requestTimeoutMs: undefined,
    slowReceiverMs: 3000,
    prewarmSendsPerGuild: 0,
    hostilePeople: {
      nonReaders: 3,
      socketsEach: 4,
      stormChannels: 400,
      renamesPerS: 2,
      churnEveryMs: 500,
      crowdEveryMs: 1000,
      socketLifeMs: 60_000,
    },
    log,
  };
}

/**
 * The 30-second smoke `npm test` runs: the same code and every kind of traffic and check, with
 * fewer sockets (the 2 shared cores of CI also run the clients) and a 5 s request timeout so
 * hostile sockets are cut several times within the run. The healthy p99 bound is looser
 * (SMOKE_HEALTHY_P99_MS, the reason is with it); every other target is the full soak's.
 */
export function smokeConfig(log: (m: string) => void): SoakConfig {
  const full = soakConfig(30, log);
  return {
    ...full,
    warmupS: 10,
    bots: 60,
    people: 150,
    hostileSockets: 60,
    greedyEveryS: 5,
    requestTimeoutMs: 5000,
    slowReceiverMs: 2000,
    prewarmSendsPerGuild: 520,
    healthyP99TargetMs: SMOKE_HEALTHY_P99_MS,
  };
}

/**
 * The smoke's bound on the healthy clients' p99. The full soak asserts 50 ms. The machines the
 * smoke runs on (CI, and the development machines here) are shared: on 2 cores with a load
 * average of 4–10 from other work, five smoke runs measured a healthy p99 of 73, 193, 196, 211
 * and over 250 ms (p50 4–6 ms) while the server itself used about 35 % of one core — the tail is
 * time the server waits for a core, not work it does. So the smoke bounds it at 1 s: what the
 * bound is for still fails it (a server held up by hostile sockets, a dead webhook receiver or
 * a burst answers in seconds), the sharing does not. `npm run soak` keeps 50 ms.
 */
export const SMOKE_HEALTHY_P99_MS = 1000;

export interface SoakResult {
  readonly figures: Figure[];
  readonly table: TableRow[];
  readonly failures: string[];
  readonly warnings: string[];
  readonly details: Record<string, unknown>;
}

interface Actor {
  readonly kind: 'bot' | 'person';
  readonly token: string;
  readonly guild: number;
}

interface Acked {
  readonly id: number;
  readonly channelId: number;
  readonly guild: number;
}

interface Editable {
  readonly id: number;
  readonly channelId: number;
  readonly token: string;
  busy: boolean;
}

interface Sock {
  readonly guild: number;
  readonly kind: 'bot' | 'person';
  readonly got: Samples;
  conn?: GatewayConnection;
  /** the client end's port (says which socket a left-over server descriptor belongs to) */
  port?: number;
}

const HOOK_KINDS: readonly ReceiverKind[] = ['stalled', 'failing', 'slow', 'healthy'];
const pick = <T>(a: readonly T[]): T => a[Math.floor(Math.random() * a.length)] as T;
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

export async function runSoak(cfg: SoakConfig): Promise<SoakResult> {
  const log = cfg.log;
  const warnings: string[] = [];
  const details: Record<string, unknown> = { config: { ...cfg, log: undefined } };
  const fdRoom = openFileLimit() - 200;
  const socketsWanted = cfg.bots + cfg.people + cfg.hostileSockets + 100;
  if (socketsWanted > fdRoom)
    throw new Error(
      `soak: needs about ${socketsWanted} open files, the limit allows ${fdRoom} (ulimit -n)`,
    );

  const server = await startParley({
    label: 'soak server',
    rateLimits: 'default',
    env: {
      PARLEY_WEBHOOK_ALLOW_INSECURE: 'true',
      PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true',
      ...(cfg.requestTimeoutMs === undefined
        ? {}
        : { PARLEY_REQUEST_TIMEOUT_MS: String(cfg.requestTimeoutMs) }),
    },
  });
  const requestTimeoutMs = cfg.requestTimeoutMs ?? 30_000;
  const receivers: WebhookReceiver[] = [];
  const socks: Sock[] = [];
  const tmp = mkdtempSync(path.join(tmpdir(), 'parley-soak-'));
  let healthyChild: ChildProcess | undefined;
  let hostile: HostileLoad | undefined;
  let hostilePeopleStop: (() => void) | undefined;
  const load = new HttpClient(server.origin, 64);
  const check = new HttpClient(server.origin, 8);
  try {
    // ---- the world, through the operator API (D41); people straight into SQLite ----
    log(`soak: setting up ${cfg.guilds} guilds, ${cfg.bots} bots, ${cfg.people} people`);
    const op = new Operator(server, 16);
    const ownerId = await op.user('soak-owner');
    const guildIds: number[] = [];
    const channels: number[][] = [];
    for (let g = 0; g < cfg.guilds; g++) {
      const gid = await op.guild(`soak-${g}`, ownerId);
      guildIds.push(gid);
      const chs: number[] = [];
      for (let c = 0; c < cfg.channelsPerGuild; c++) chs.push(await op.channel(gid, `ch-${c}`));
      channels.push(chs);
    }
    const guildOfChannel = new Map<number, number>();
    channels.forEach((chs, g) => chs.forEach((c) => guildOfChannel.set(c, g)));
    const hookCount = cfg.guilds * HOOK_KINDS.length;
    const made = await op.bots(cfg.bots + hookCount + cfg.healthyBots + 1);
    const loadBots = made.slice(0, cfg.bots);
    const hookBots = made.slice(cfg.bots, cfg.bots + hookCount);
    const healthyBots = made.slice(cfg.bots + hookCount, cfg.bots + hookCount + cfg.healthyBots);
    const greedy = made[made.length - 1] as BotHandle;
    const botGuild = (b: BotHandle, i: number, set: 'load' | 'hook' | 'other'): number =>
      set === 'load' ? i % cfg.guilds : set === 'hook' ? Math.floor(i / HOOK_KINDS.length) : 0;
    for (let g = 0; g < cfg.guilds; g++) {
      const members = [
        ...loadBots.filter((b, i) => botGuild(b, i, 'load') === g),
        ...hookBots.filter((b, i) => botGuild(b, i, 'hook') === g),
        ...(g === 0 ? [...healthyBots, greedy] : []),
      ];
      await op.joinAll(
        guildIds[g] as number,
        members.map((b) => b.userId),
      );
    }
    // Webhook receivers: per guild one that hangs, one that fails, one slow, one healthy.
    const hookKindOf = new Map<number, ReceiverKind>();
    const healthyHooks: Array<{ r: WebhookReceiver; guild: number }> = [];
    for (const [i, b] of hookBots.entries()) {
      const kind = HOOK_KINDS[i % HOOK_KINDS.length] as ReceiverKind;
      const r = await WebhookReceiver.start(kind, cfg.slowReceiverMs);
      receivers.push(r);
      hookKindOf.set(receivers.length - 1, kind);
      if (kind === 'healthy') healthyHooks.push({ r, guild: botGuild(b, i, 'hook') });
      const set = await op.setWebhook(b.id, r.url);
      if (set.status !== 200) throw new Error(`soak: webhook refused: ${set.raw}`);
    }
    const personGuild = (i: number): number => (i >= cfg.people ? 0 : i % cfg.guilds);
    const personTokens = seedPeople(
      server.dbFile,
      (i) => guildIds[personGuild(i)] as number,
      cfg.people + cfg.healthyPeople,
      'soak-person',
    );
    // Issue 21: the hostile people's big guild (400 channels with 1 KiB topics) and accounts.
    let hostileSetup:
      | { owner: string; guildId: number; invite: string; readers: string[]; crowd: string }
      | undefined;
    const hp = cfg.hostilePeople;
    if (hp) {
      log(`soak: setting up the hostile people's guild of ${hp.stormChannels} channels`);
      const stormOwner = await op.user('storm-owner');
      const stormGuild = await op.guild('storm', stormOwner);
      const admin = { token: server.adminToken };
      await mapLimit(
        Array.from({ length: hp.stormChannels - 1 }, (_, i) => i),
        8,
        (i) =>
          op.http.expect('POST', `/admin/v1/guilds/${stormGuild}/channels`, 201, {
            ...admin,
            body: { name: `storm-${i}`, topic: 'x'.repeat(1024) },
          }),
      );
      const invite = await op.http.expect('POST', `/admin/v1/guilds/${stormGuild}/invites`, 201, {
        ...admin,
        body: {},
      });
      const member = async (name: string): Promise<string> => {
        const id = await op.user(name);
        await op.join(stormGuild, id);
        return op.session(id);
      };
      const readers: string[] = [];
      for (let i = 0; i < hp.nonReaders; i++) readers.push(await member(`hostile-reader-${i}`));
      hostileSetup = {
        owner: await op.session(stormOwner),
        guildId: stormGuild,
        invite: invite.body.code as string,
        readers,
        crowd: await member('hostile-crowd'),
      };
    }
    op.close();
    const bots: Actor[] = loadBots.map((b, i) => ({
      kind: 'bot',
      token: b.token,
      guild: botGuild(b, i, 'load'),
    }));
    const people: Actor[] = personTokens
      .slice(0, cfg.people)
      .map((token, i) => ({ kind: 'person', token, guild: personGuild(i) }));
    const actors = [...bots, ...people];

    await sleep(1000);
    const fdStart = openFds(server.proc.pid);
    const fdStartKinds = fdKinds(server.proc.pid);
    log(`soak: server has ${fdStart} open file descriptors before any client`);

    // ---- gateway: everyone connects (full clients: every MESSAGE_CREATE id is kept) ----
    let closing = false;
    const closedByServer: number[] = [];
    const connectStart = nowMs();
    await mapLimit(actors, 50, async (a) => {
      const s: Sock = { guild: a.guild, kind: a.kind, got: new Samples(256) };
      socks.push(s);
      s.conn = await connectGateway(server.gatewayUrl, a.token, {
        heartbeat: true,
        timeoutMs: 60_000,
        onDispatch: (f) => {
          if (f.t === 'MESSAGE_CREATE') s.got.push(f.d.id as number);
        },
        onClose: (code) => {
          if (!closing) closedByServer.push(code);
        },
      });
      const port = (s.conn.ws as unknown as { _socket?: { localPort?: number } })._socket
        ?.localPort;
      if (port !== undefined) s.port = port;
    });
    const connectS = (nowMs() - connectStart) / 1000;
    log(`soak: ${socks.length} gateway connections in ${connectS.toFixed(1)} s`);

    // ---- the traffic phase ----
    const acked: Acked[] = [];
    const editable: Editable[] = [];
    const lastEdit = new Map<number, string>();
    const deleted = new Set<number>();
    const uploads: Array<{ path: string; sha: string; size: number }> = [];
    const counts = new Map<string, number>();
    const unexpected: string[] = [];
    let unexpectedCount = 0;
    let inFlight = 0;
    let skipped = 0;
    let greedy429 = 0;
    let greedy429NoRetryAfter = 0;
    let seq = 0;
    const count = (k: string): void => void counts.set(k, (counts.get(k) ?? 0) + 1);
    const bad = (what: string, r: JsonReply | Error): void => {
      unexpectedCount += 1;
      if (unexpected.length < 20)
        unexpected.push(
          r instanceof Error
            ? `${what}: ${r.message}`
            : `${what} → ${r.status} ${r.raw.slice(0, 200)}`,
        );
    };
    const guarded = async (what: string, fn: () => Promise<void>): Promise<void> => {
      inFlight += 1;
      try {
        await fn();
      } catch (err) {
        bad(what, err instanceof Error ? err : new Error(String(err)));
      } finally {
        inFlight -= 1;
      }
    };
    const send = (a: Actor, greedyBot = false): Promise<void> =>
      guarded('send', async () => {
        const channelId = pick(channels[a.guild] as number[]);
        const content = `soak ${seq++}`;
        const r = await load.request('POST', `/api/v1/channels/${channelId}/messages`, {
          token: a.token,
          body: { content },
        });
        if (r.status === 200) {
          count(greedyBot ? 'greedy send 200' : 'send');
          acked.push({ id: r.body.id as number, channelId, guild: a.guild });
          if (!greedyBot)
            editable.push({ id: r.body.id as number, channelId, token: a.token, busy: false });
        } else if (greedyBot && r.status === 429) {
          greedy429 += 1;
          if (!r.headers['retry-after'] || r.body?.error?.code !== 'RATE_LIMIT_EXCEEDED')
            greedy429NoRetryAfter += 1;
        } else bad('send', r);
      });
    const freeEditable = (): Editable | undefined => {
      for (let tries = 0; tries < 5 && editable.length > 0; tries++) {
        const e = pick(editable);
        if (!e.busy) return e;
      }
      return undefined;
    };
    const actions: Record<keyof SoakConfig['rates'], () => Promise<void> | undefined> = {
      send: () => send(pick(actors)),
      edit: () => {
        const e = freeEditable();
        if (!e) return undefined;
        e.busy = true;
        return guarded('edit', async () => {
          const content = `soak ${e.id} edited ${seq++}`;
          const r = await load.request('PUT', `/api/v1/channels/${e.channelId}/messages/${e.id}`, {
            token: e.token,
            body: { content },
          });
          e.busy = false;
          if (r.status === 200) {
            count('edit');
            lastEdit.set(e.id, content);
          } else bad('edit', r);
        });
      },
      del: () => {
        const e = freeEditable();
        if (!e) return undefined;
        editable.splice(editable.indexOf(e), 1);
        return guarded('delete', async () => {
          const r = await load.request(
            'DELETE',
            `/api/v1/channels/${e.channelId}/messages/${e.id}`,
            { token: e.token },
          );
          if (r.status === 204) {
            count('delete');
            deleted.add(e.id);
          } else bad('delete', r);
        });
      },
      history: () =>
        guarded('history', async () => {
          const a = pick(actors);
          const before = acked.length > 0 && Math.random() < 0.5 ? pick(acked) : undefined;
          const channelId =
            before?.guild === a.guild ? before.channelId : pick(channels[a.guild] as number[]);
          const q = before?.guild === a.guild ? `&before=${before.id}` : '';
          const r = await load.request(
            'GET',
            `/api/v1/channels/${channelId}/messages?limit=50${q}`,
            { token: a.token },
          );
          if (r.status === 200) count('history');
          else bad('history', r);
        }),
      upload: () =>
        guarded('upload', async () => {
          const a = pick(actors);
          const bytes = pngOfSize(1000 + Math.floor(Math.random() * 63_000));
          const form = fileForm(`soak-${seq++}.png`, bytes);
          const r = await load.request('POST', '/api/v1/files/upload', {
            token: a.token,
            raw: { contentType: form.contentType, body: form.body },
          });
          if (r.status === 200) {
            count('upload');
            uploads.push({
              path: new URL(r.body.url as string).pathname,
              sha: sha(bytes),
              size: bytes.length,
            });
          } else bad('upload', r);
        }),
      typing: () =>
        guarded('typing', async () => {
          const p = pick(people);
          const r = await load.request(
            'POST',
            `/app/v1/channels/${pick(channels[p.guild] as number[])}/typing`,
            { token: p.token },
          );
          if (r.status === 204) count('typing');
          else bad('typing', r);
        }),
    };

    // Healthy clients: a process of their own.
    const healthyJob: HealthyJob = {
      origin: server.origin,
      intervalMs: cfg.healthyIntervalMs,
      clients: [
        ...healthyBots.map((b, i) => ({
          kind: 'bot' as const,
          token: b.token,
          channelId: channels[0]?.[i % cfg.channelsPerGuild] as number,
        })),
        ...personTokens.slice(cfg.people).map((token, i) => ({
          kind: 'person' as const,
          token,
          channelId: channels[0]?.[i % cfg.channelsPerGuild] as number,
        })),
      ],
    };
    const jobFile = path.join(tmp, 'healthy.json');
    writeFileSync(jobFile, JSON.stringify(healthyJob));
    const child = fork(fileURLToPath(new URL('./healthy-client.ts', import.meta.url)), [jobFile], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    healthyChild = child;
    track(child);
    const healthyResult = new Promise<HealthyResult>((resolve, reject) => {
      child.on('message', (m: { k: string }) => {
        if (m.k === 'result') resolve(m as HealthyResult);
      });
      child.once('exit', (code) => reject(new Error(`healthy clients exited with ${code}`)));
    });
    await new Promise<void>((resolve, reject) => {
      child.on('message', (m: { k: string }) => m.k === 'up' && resolve());
      child.once('exit', (code) => reject(new Error(`healthy clients exited with ${code}`)));
    });

    if (cfg.prewarmSendsPerGuild > 0) {
      log(`soak: pre-warming with ${cfg.prewarmSendsPerGuild} sends per guild`);
      const jobs = Array.from(
        { length: cfg.prewarmSendsPerGuild * cfg.guilds },
        (_, i) =>
          people.filter((p) => p.guild === i % cfg.guilds)[
            Math.floor(i / cfg.guilds) % Math.ceil(cfg.people / cfg.guilds)
          ] ?? pick(people),
      );
      await mapLimit(jobs, 16, (a) => send(a));
    }
    log(`soak: ${cfg.durationS} s of traffic (warm-up ${cfg.warmupS} s)`);
    hostile = new HostileLoad({
      origin: server.origin,
      sockets: cfg.hostileSockets,
      tokens: bots.map((b) => b.token),
      channelIds: channels.flat(),
      dribbleMs: 1000,
    });
    hostile.start();
    const rss: Array<{ t: number; rss: number }> = [];
    // The heap retained after the last full collection (the server's parley_heap_retained_bytes),
    // scraped every 2 s: the leak check that the collector's sawtooth does not move (below).
    const heap: Array<{ t: number; bytes: number }> = [];
    // The event-loop thread's CPU time and time spent runnable but waiting for a core
    // (/proc/<pid>/schedstat): a stall with little CPU and much waiting is the machine's, not
    // the server's.
    const sched0 = schedstat(server.proc.pid);
    const sched: Array<{ t: number; cpuPct: number; waitPct: number }> = [];
    let schedPrev = sched0;
    let fdPeak = 0;
    const t0 = nowMs();
    const cpu0 = cpuMs(server.proc.pid);
    const load0 = loadavg()[0] ?? 0;
    const issued: Record<string, number> = {};
    const MAX_IN_FLIGHT = 256;
    const sampler = setInterval(() => {
      rss.push({ t: (nowMs() - t0) / 1000, rss: server.proc.rss() });
      fdPeak = Math.max(fdPeak, openFds(server.proc.pid));
      const now = schedstat(server.proc.pid);
      const dt = now.at - schedPrev.at;
      sched.push({
        t: round((nowMs() - t0) / 1000, 1),
        cpuPct: round(((now.cpuNs - schedPrev.cpuNs) / 1e6 / dt) * 100, 1),
        waitPct: round(((now.waitNs - schedPrev.waitNs) / 1e6 / dt) * 100, 1),
      });
      schedPrev = now;
    }, 1000);
    const tick = setInterval(() => {
      const el = (nowMs() - t0) / 1000;
      for (const [k, rate] of Object.entries(cfg.rates)) {
        const want = Math.floor(el * rate) - (issued[k] ?? 0);
        for (let i = 0; i < want; i++) {
          issued[k] = (issued[k] ?? 0) + 1;
          if (inFlight >= MAX_IN_FLIGHT) skipped += 1;
          else void actions[k as keyof SoakConfig['rates']]();
        }
      }
    }, 20);
    const greedyActor: Actor = { kind: 'bot', token: greedy.token, guild: 0 };
    const greedyTimer = setInterval(() => {
      for (let i = 0; i < cfg.greedyBurst; i++) void send(greedyActor, true);
    }, cfg.greedyEveryS * 1000);
    let lastReport = 0;
    // Issue 21: the hostile people start halfway through the traffic after warm-up.
    const hostileAtS = cfg.warmupS + (cfg.durationS - cfg.warmupS) / 2;
    let hostilePeople: HostilePeople | undefined;
    let unsentMax = 0;
    let replayMax = 0;
    let lastScrape = 0;
    while (nowMs() - t0 < cfg.durationS * 1000) {
      await sleep(250);
      const el = (nowMs() - t0) / 1000;
      if (hp && hostileSetup && !hostilePeople && el >= hostileAtS) {
        log(`soak: hostile people start (${el.toFixed(0)} s)`);
        hostilePeople = new HostilePeople({
          origin: server.origin,
          gatewayUrl: server.gatewayUrl,
          nonReaders: hostileSetup.readers,
          socketsEach: hp.socketsEach,
          socketLifeMs: hp.socketLifeMs,
          crowd: hostileSetup.crowd,
          crowdEveryMs: hp.crowdEveryMs,
          owner: hostileSetup.owner,
          guildId: hostileSetup.guildId,
          invite: hostileSetup.invite,
          churnEveryMs: hp.churnEveryMs,
          renamesPerS: hp.renamesPerS,
        });
        hostilePeople.start();
        const started = hostilePeople;
        hostilePeopleStop = () => started.stop();
      }
      if (el - lastScrape >= 2) {
        lastScrape = el;
        const m = await scrape(server.origin, server.adminToken);
        const retained = m.get('parley_heap_retained_bytes');
        if (retained) heap.push({ t: el, bytes: retained });
        if (hostilePeople) {
          unsentMax = Math.max(unsentMax, m.get('parley_gateway_unsent_bytes') ?? 0);
          replayMax = Math.max(replayMax, m.get('parley_gateway_replay_bytes') ?? 0);
        }
      }
      if (el - lastReport >= 30) {
        lastReport = el;
        const last = rss[rss.length - 1];
        log(
          `soak: ${el.toFixed(0)} s — ${acked.length} sends acknowledged, ${inFlight} in flight, ` +
            `hostile open ${hostile.openNow} (cut ${hostile.closedByServer}), ` +
            `RSS ${last ? round(last.rss / MiB, 1) : '?'} MiB`,
        );
      }
    }
    clearInterval(tick);
    clearInterval(greedyTimer);
    const serverCpuShare = (cpuMs(server.proc.pid) - cpu0) / (nowMs() - t0);
    const sched1 = schedstat(server.proc.pid);
    const waitShare = (sched1.waitNs - sched0.waitNs) / 1e6 / (sched1.at - sched0.at);
    const load1 = loadavg()[0] ?? 0;
    const hostileOldest = hostile.stop();
    const closes = await scrape(server.origin, server.adminToken);
    hostilePeople?.stop();
    child.send({ k: 'stop' });
    const healthy = await healthyResult;
    const drainStart = nowMs();
    while (inFlight > 0 && nowMs() - drainStart < 30_000) await sleep(50);
    clearInterval(sampler);
    if (inFlight > 0)
      warnings.push(`${inFlight} load requests still unanswered 30 s after the end`);
    const trafficS = (nowMs() - t0) / 1000;
    for (const h of healthy.acked)
      acked.push({ id: h.id, channelId: h.channelId, guild: guildOfChannel.get(h.channelId) ?? 0 });
    log(`soak: traffic over; ${acked.length} sends acknowledged; checking`);

    // ---- checks: gateway receipt ----
    const perGuild: number[][] = Array.from({ length: cfg.guilds }, () => []);
    for (const a of acked) perGuild[a.guild]?.push(a.id);
    const settleStart = nowMs();
    while (
      socks.some((s) => s.got.length < (perGuild[s.guild]?.length ?? 0)) &&
      nowMs() - settleStart < 20_000
    )
      await sleep(100);
    let gatewayMissing = 0;
    let socketsShort = 0;
    for (const s of socks) {
      const got = new Set(s.got.values());
      let short = 0;
      for (const id of perGuild[s.guild] ?? []) if (!got.has(id)) short += 1;
      gatewayMissing += short;
      if (short > 0) socketsShort += 1;
    }
    // ---- healthy webhook receivers (D39) ----
    const hookMissing = async (): Promise<number> => {
      let missing = 0;
      for (const { r, guild } of healthyHooks) {
        const got = new Set(
          r.deliveries.filter((d) => d.type === 'MESSAGE_CREATE').map((d) => d.id),
        );
        for (const id of perGuild[guild] ?? []) if (!got.has(id)) missing += 1;
      }
      return missing;
    };
    const hookStart = nowMs();
    while ((await hookMissing()) > 0 && nowMs() - hookStart < 30_000) await sleep(250);
    const webhookMissing = await hookMissing();

    // ---- history: every acknowledged send there, with its last acknowledged edit ----
    const verifiers = (g: number): Actor[] => bots.filter((b) => b.guild === g);
    let vi = 0;
    const get = async (g: number, url: string): Promise<JsonReply> => {
      for (;;) {
        const v = verifiers(g);
        const r = await check.request('GET', url, { token: (v[vi++ % v.length] as Actor).token });
        if (r.status !== 429) return r;
        await sleep(Math.max(50, Number(r.body?.error?.retryAfter ?? 0.2) * 1000));
      }
    };
    const history = new Map<number, string>();
    for (const [g, chs] of channels.entries()) {
      for (const ch of chs) {
        let after = 0;
        for (;;) {
          const r = await get(g, `/api/v1/channels/${ch}/messages?after=${after}&limit=100`);
          if (r.status !== 200) throw new Error(`soak: history check → ${r.status} ${r.raw}`);
          const msgs = r.body.messages as Array<{ id: number; content: string }>;
          for (const m of msgs) history.set(m.id, m.content);
          if (!r.body.hasMore || msgs.length === 0) break;
          after = Math.max(...msgs.map((m) => m.id));
        }
      }
    }
    let historyMissing = 0;
    let editsLost = 0;
    for (const a of acked) {
      if (deleted.has(a.id)) continue;
      const content = history.get(a.id);
      if (content === undefined) historyMissing += 1;
      else if (lastEdit.has(a.id) && content !== lastEdit.get(a.id)) editsLost += 1;
    }
    let deletedPresent = 0;
    for (const id of deleted) if (history.has(id)) deletedPresent += 1;
    // ---- uploads: every acknowledged one serves its bytes ----
    let uploadsMissing = 0;
    await mapLimit(uploads, 8, async (u) => {
      const res = await getBytes(server.origin + u.path);
      if (res.status !== 200 || sha(res.body) !== u.sha) uploadsMissing += 1;
    });

    // ---- every client goes; the server's descriptors must come back to where they started ----
    closing = true;
    for (const s of socks) s.conn?.close();
    load.close();
    check.close();
    const webhookRequests: Record<string, number> = {};
    for (const [i, r] of receivers.entries()) {
      const k = hookKindOf.get(i) ?? '?';
      webhookRequests[k] = (webhookRequests[k] ?? 0) + r.requests;
    }
    await Promise.all(receivers.map((r) => r.close()));
    receivers.length = 0;
    const fdDeadline = nowMs() + 20_000;
    let fdEnd = openFds(server.proc.pid);
    while (fdEnd > fdStart && nowMs() < fdDeadline) {
      await sleep(250);
      fdEnd = openFds(server.proc.pid);
    }
    if (fdEnd !== fdStart) {
      const now = fdKinds(server.proc.pid);
      const diff = [...new Set([...now.keys(), ...fdStartKinds.keys()])]
        .map((k) => [k, (now.get(k) ?? 0) - (fdStartKinds.get(k) ?? 0)] as const)
        .filter(([, d]) => d !== 0)
        .map(([k, d]) => `${k} ${d > 0 ? '+' : ''}${d}`);
      warnings.push(`server file descriptors by kind, end − start: ${diff.join(', ')}`);
      const ours = new Map(socks.map((k) => [`127.0.0.1:${k.port}`, k]));
      warnings.push(
        ...tcpOf(server.proc.pid).map((l) => {
          const peer = /← (\S+)/.exec(l)?.[1] ?? '';
          const k = ours.get(peer);
          const what = k
            ? `gateway ${k.kind} socket of guild ${k.guild}, client readyState ${k.conn?.ws.readyState}`
            : `not a gateway socket (this process ${process.pid}, healthy clients ${healthyChild?.pid})`;
          return `server socket left: ${l} — ${what}`;
        }),
      );
    }
    const stagedLeft = countFiles(path.join(server.dataDir, 'files', 'tmp'));

    // ---- figures ----
    const h = summarize(healthy.latencies);
    // RSS flatness is judged without the hostile people; with them, against D70's caps.
    const hostileAt = hostilePeople ? hostileAtS : Number.POSITIVE_INFINITY;
    const post = rss.filter((s) => s.t >= cfg.warmupS && s.t < hostileAt);
    const withHostile = rss.filter((s) => s.t >= hostileAt);
    const rssWithout = post.reduce((m, s) => Math.max(m, s.rss), 0);
    const rssWith = withHostile.reduce((m, s) => Math.max(m, s.rss), 0);
    const capBytes = hp ? hostileCapBytes(hp) : 0;
    const hostileHealthy = summarize(
      healthy.latencies.filter((_, i) => (healthy.at[i] ?? 0) >= t0 + hostileAt * 1000),
    );
    const ref = summarize(post.slice(0, 5).map((s) => s.rss)).p50;
    const postSummary = summarize(post.map((s) => s.rss));
    const postMin = post.reduce((m, s) => Math.min(m, s.rss), Number.POSITIVE_INFINITY);
    // The retained heap, one value per full collection seen (a scrape repeats the last one until
    // the next). The value the first scrape finds was left by a collection during set-up, before
    // any traffic: lower than under load by the requests in flight (38 against 41–43 MiB in the
    // smoke), so it is no reference. The reference is the median of the warm-up's collections
    // (or the window's first, when the warm-up saw none); the figure, the window's highest.
    const collections = heap.filter(
      (s, i) => s.t < hostileAt && i > 0 && s.bytes !== heap[i - 1]?.bytes,
    );
    const warmupValues = collections.filter((s) => s.t < cfg.warmupS).map((s) => s.bytes);
    const windowValues = collections.filter((s) => s.t >= cfg.warmupS).map((s) => s.bytes);
    const heapRef = warmupValues.length
      ? summarize(warmupValues).p50
      : (windowValues[0] ?? Number.NaN);
    const heapMax = windowValues.reduce((m, v) => Math.max(m, v), heapRef);
    // V8 may run no full collection in a short run's traffic at all (it let the heap grow from 38
    // to 104 MiB once): then there is nothing to judge here, and the RSS bound above still holds.
    const heapJudged = Number.isFinite(heapRef);
    const holdLimitMs = requestTimeoutMs + Math.max(5000, requestTimeoutMs / 2);
    const held = summarize(hostile.held.values());
    const hostileMaxHold = Math.max(held.count ? held.max : 0, hostileOldest);
    const answers408 = [...hostile.answers]
      .filter(([s]) => / 408 /.test(s))
      .reduce((n, [, c]) => n + c, 0);
    const ms = (v: number): number => round(v, 2);
    const figures: Figure[] = [
      {
        id: 'healthy_p99',
        label: 'healthy clients p99',
        value: ms(h.p99),
        unit: 'ms',
        basis: `${h.count} requests by ${healthyJob.clients.length} clients`,
        target: { op: '<=', value: cfg.healthyP99TargetMs },
      },
      {
        id: 'server_cpu',
        label: 'server CPU during the traffic',
        value: round(serverCpuShare * 100, 1),
        unit: '% of one core',
        basis: `machine load average ${round(load0, 1)} at the start, ${round(load1, 1)} at the end (2 cores)`,
      },
      {
        id: 'server_runqueue_wait',
        label: "server's event-loop thread runnable but waiting for a core",
        value: round(waitShare * 100, 1),
        unit: '% of the traffic time',
        basis: '/proc/<pid>/schedstat; per second in details.sched',
      },
      { id: 'healthy_p50', label: 'healthy clients p50', value: ms(h.p50), unit: 'ms' },
      { id: 'healthy_max', label: 'healthy clients max', value: ms(h.max), unit: 'ms' },
      {
        id: 'healthy_unexpected',
        label: 'healthy client answers other than 200',
        value: healthy.unexpected.length,
        unit: 'count',
        target: { op: '<=', value: 0 },
      },
      {
        id: 'acked_sends',
        label: 'message sends acknowledged',
        value: acked.length,
        unit: 'count',
      },
      {
        id: 'history_missing',
        label: 'acknowledged sends missing from history',
        value: historyMissing,
        unit: 'count',
        basis: `${acked.length - deleted.size} expected (${deleted.size} deleted)`,
        target: { op: '<=', value: 0 },
      },
      {
        id: 'edits_lost',
        label: 'acknowledged edits not in history',
        value: editsLost,
        unit: 'count',
        basis: `${lastEdit.size} messages edited`,
        target: { op: '<=', value: 0 },
      },
      {
        id: 'deletes_present',
        label: 'acknowledged deletes still in history',
        value: deletedPresent,
        unit: 'count',
        target: { op: '<=', value: 0 },
      },
      {
        id: 'uploads_missing',
        label: 'acknowledged uploads not served back intact',
        value: uploadsMissing,
        unit: 'count',
        basis: `${uploads.length} uploads`,
        target: { op: '<=', value: 0 },
      },
      {
        id: 'gateway_missing',
        label: 'MESSAGE_CREATE missing at connected sockets',
        value: gatewayMissing,
        unit: 'count',
        basis: `${socks.length} sockets checked in full, ${socketsShort} short`,
        target: { op: '<=', value: 0 },
      },
      {
        id: 'gateway_closed',
        label: 'gateway connections closed by the server',
        value: closedByServer.length,
        unit: 'count',
        ...(closedByServer.length
          ? { basis: `codes ${[...new Set(closedByServer)].join(', ')}` }
          : {}),
        target: { op: '<=', value: 0 },
      },
      {
        id: 'webhook_missing',
        label: 'MESSAGE_CREATE missing at the healthy webhook receivers',
        value: webhookMissing,
        unit: 'count',
        basis: `beside receivers that hang, fail and take ${cfg.slowReceiverMs / 1000} s`,
        target: { op: '<=', value: 0 },
      },
      {
        id: 'rss_max_ratio',
        label: 'server RSS after warm-up, max / reference',
        value: round(postSummary.max / ref, 3),
        unit: 'x',
        basis: `${round(postSummary.max / MiB, 1)} MiB ÷ ${round(ref / MiB, 1)} MiB (median of the first 5 s after warm-up)`,
        target: { op: '<=', value: 1.1 },
      },
      {
        // No target: RSS falls when a full collection gives memory back, and in the smoke's 10 s
        // window the collector's sawtooth (±20 % under load, a full collection every 2–30 s)
        // decides the figure, not the server (bench/README "soak": it failed on builds whose
        // retained heap stayed flat). A leak makes memory rise: rss_max_ratio and
        // heap_retained_ratio judge that.
        id: 'rss_min_ratio',
        label: 'server RSS after warm-up, min / reference',
        value: round(postMin / ref, 3),
        unit: 'x',
        basis: `${round(postMin / MiB, 1)} MiB ÷ ${round(ref / MiB, 1)} MiB`,
      },
      {
        id: 'heap_retained_ratio',
        label: 'server heap retained after full collections, after warm-up: max / reference',
        value: heapJudged ? round(heapMax / heapRef, 3) : 1,
        unit: 'x',
        basis: heapJudged
          ? `${round(heapMax / MiB, 1)} MiB ÷ ${round(heapRef / MiB, 1)} MiB ` +
            `(parley_heap_retained_bytes every 2 s; reference: ` +
            (warmupValues.length
              ? `median of the warm-up's ${warmupValues.length} full collections`
              : `the window's first full collection (none in the warm-up)`) +
            `; ${windowValues.length} in the window)`
          : 'not judged: no full collection during the traffic before the hostile people',
        target: { op: '<=', value: 1.1 },
      },
      {
        id: 'rss_end_mib',
        label: 'server RSS at the end of the traffic',
        value: round((rss[rss.length - 1]?.rss ?? NaN) / MiB, 1),
        unit: 'MiB',
        basis: `${round((rss[0]?.rss ?? NaN) / MiB, 1)} MiB at the start`,
      },
      {
        id: 'fd_delta',
        label: 'server file descriptors after every client left − before any came',
        value: fdEnd - fdStart,
        unit: 'count',
        basis: `${fdEnd} − ${fdStart}; peak ${fdPeak}`,
        target: { op: '<=', value: 0 },
      },
      {
        id: 'staged_left',
        label: 'staged upload files left behind',
        value: stagedLeft,
        unit: 'count',
        target: { op: '<=', value: 0 },
      },
      {
        id: 'hostile_max_hold_ms',
        label: 'longest a hostile socket was held',
        value: Math.round(hostileMaxHold),
        unit: 'ms',
        basis: `request timeout ${requestTimeoutMs} ms; ${hostile.opened} sockets opened, ${hostile.closedByServer} cut by the server, ${answers408} answered 408`,
        target: { op: '<=', value: holdLimitMs },
      },
      {
        id: 'hostile_cut',
        label: 'hostile sockets cut by the server',
        value: hostile.closedByServer,
        unit: 'count',
        target: { op: '>=', value: 1 },
      },
      {
        id: 'load_unexpected',
        label: 'load answers other than the expected',
        value: unexpectedCount,
        unit: 'count',
        target: { op: '<=', value: 0 },
      },
      {
        id: 'greedy_429',
        label: "greedy bot's sends refused 429 (limits in force)",
        value: greedy429,
        unit: 'count',
        basis: `${counts.get('greedy send 200') ?? 0} accepted`,
        target: { op: '>=', value: 1 },
      },
      {
        id: 'greedy_429_malformed',
        label: '429s without Retry-After or RATE_LIMIT_EXCEEDED',
        value: greedy429NoRetryAfter,
        unit: 'count',
        target: { op: '<=', value: 0 },
      },
    ];
    if (hostilePeople && hp) {
      const closed = (code: number): number =>
        closes.get(`parley_gateway_connections_closed_total{kind="person",code="${code}"}`) ?? 0;
      figures.push(
        {
          id: 'hostile_people_rss_mib',
          label: 'server RSS with the hostile people (max)',
          value: round(rssWith / MiB, 1),
          unit: 'MiB',
          basis: `without them ${round(rssWithout / MiB, 1)} MiB (max, same run) + D70 caps of the hostile people ${round(capBytes / MiB, 0)} MiB (${hp.nonReaders} non-readers × (${Math.min(16, hp.socketsEach)} sockets × 4 MiB unsent + 16 sessions × 1 MiB replay) + a crowd of 16 × (4 + 1) MiB)`,
          target: { op: '<=', value: round((rssWithout + capBytes) / MiB, 1) },
        },
        {
          id: 'hostile_people_healthy_p99',
          label: 'healthy clients p99 while the hostile people run',
          value: ms(hostileHealthy.p99),
          unit: 'ms',
          basis: `${hostileHealthy.count} requests`,
          target: { op: '<=', value: cfg.healthyP99TargetMs },
        },
        {
          id: 'hostile_people_unsent_max_mib',
          label: "bytes queued for people's sockets (max of samples)",
          value: round(unsentMax / MiB, 2),
          unit: 'MiB',
          basis: `${hp.nonReaders * hp.socketsEach} non-reading sockets; a socket past 4 MiB closes`,
        },
        {
          id: 'hostile_people_replay_max_mib',
          label: "people's replay buffers (max of samples, events counted once)",
          value: round(replayMax / MiB, 2),
          unit: 'MiB',
        },
        {
          id: 'hostile_people_closed_4000',
          label: "people's sockets closed 4000 (too much unsent) / 4011 (17th connection)",
          value: closed(4000),
          unit: 'count',
          basis: `4011: ${closed(4011)}; ${hostilePeople.opened} hostile sockets opened, ${hostilePeople.refused} refused 429, ${hostilePeople.rejoins} rejoins, ${hostilePeople.renames} renames, ${hostilePeople.networkErrors} requests without an answer`,
        },
        {
          id: 'hostile_people_errors',
          label: 'hostile people: answers other than expected',
          value: hostilePeople.failures.length,
          unit: 'count',
          ...(hostilePeople.failures.length
            ? { basis: hostilePeople.failures.join('; ').slice(0, 300) }
            : {}),
          target: { op: '<=', value: 0 },
        },
      );
    }
    const table: TableRow[] = [
      {
        what: 'gateway connections',
        value: socks.length,
        note: `${cfg.bots} bots, ${cfg.people} people, opened in ${round(connectS, 1)} s`,
      },
      ...[...counts].map(([k, v]) => ({
        what: `${k} ok`,
        value: v,
        note: `${round(v / trafficS, 1)}/s`,
      })),
      { what: 'load requests skipped (256 in flight)', value: skipped, note: '' },
      ...Object.entries(webhookRequests).map(([k, v]) => ({
        what: `webhook requests, ${k} receivers`,
        value: v,
        note: '',
      })),
      ...[...hostile.byKind].map(([k, v]) => ({
        what: `hostile ${k} sockets opened`,
        value: v,
        note: '',
      })),
      ...[...hostile.answers].map(([k, v]) => ({
        what: `hostile answer: ${k}`,
        value: v,
        note: '',
      })),
      {
        what: 'hostile hold p50 / max',
        value: Math.round(held.p50),
        note: `${Math.round(held.max)} ms`,
      },
      ...[...hostile.maxHeldByKind].map(([k, v]) => ({
        what: `hostile ${k} longest hold`,
        value: Math.round(v),
        note: 'ms',
      })),
    ];
    // Sockets held past the limit: when they connected (s from the start of traffic), how long.
    details['hostileOverLimit'] = hostile.holds
      .filter((x) => x.ms > holdLimitMs)
      .map((x) => ({ kind: x.kind, t: round((x.at - t0) / 1000, 1), ms: Math.round(x.ms) }));
    details['rss'] = rss.map((s) => ({ t: round(s.t, 1), mib: round(s.rss / MiB, 1) }));
    details['heapRetained'] = heap.map((s) => ({ t: round(s.t, 1), mib: round(s.bytes / MiB, 1) }));
    details['healthyByKind'] = Object.fromEntries(
      Object.entries(healthy.byKind).map(([k, v]) => [k, summarize(v)]),
    );
    details['unexpected'] = [...unexpected, ...healthy.unexpected.slice(0, 20)];
    details['trafficS'] = round(trafficS, 1);
    details['sched'] = sched;
    const failures = figures
      .filter((f) => targetMet(f) === false)
      .map((f) => `${f.label} = ${f.value} ${f.unit}${f.basis ? ` (${f.basis})` : ''}`);
    return { figures, table, failures, warnings, details };
  } finally {
    hostile?.stop();
    hostilePeopleStop?.();
    for (const s of socks) s.conn?.close(true);
    load.close();
    check.close();
    await Promise.all(receivers.map((r) => r.close()));
    if (healthyChild?.connected) healthyChild.kill('SIGKILL');
    await server.dispose();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * The server's /metrics as `name{labels}` → value (the operator token opens it), on a connection
 * of its own closed after the answer (see getBytes).
 */
function scrape(origin: string, adminToken: string): Promise<Map<string, number>> {
  return new Promise((resolve) => {
    const out = new Map<string, number>();
    http
      .get(
        `${origin}/metrics`,
        { agent: false, headers: { authorization: `Bearer ${adminToken}` } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('error', () => resolve(out));
          res.on('end', () => {
            for (const line of text.split('\n')) {
              if (line.startsWith('#') || line === '') continue;
              const at = line.lastIndexOf(' ');
              out.set(line.slice(0, at), Number(line.slice(at + 1)));
            }
            resolve(out);
          });
        },
      )
      // a scrape that fails is a missing sample, not a failed soak
      .on('error', () => resolve(out));
  });
}

/** The main thread's CPU time and run-queue wait so far (ns), and when they were read (ms). */
function schedstat(pid: number): { cpuNs: number; waitNs: number; at: number } {
  const [cpu, wait] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(/\s+/);
  return { cpuNs: Number(cpu), waitNs: Number(wait), at: nowMs() };
}

/**
 * GET raw bytes on a connection of its own, closed after the answer (fetch would keep its
 * connections open in a pool the soak cannot close, and they would count as the server's
 * descriptors at the end).
 */
function getBytes(url: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

/**
 * The TCP sockets of a process as `ss` shows them (state, local and peer address), each with the
 * process holding the other end when that is on this machine: says which client left one open.
 */
function tcpOf(pid: number): string[] {
  try {
    const lines = execFileSync('ss', ['-tanpH'], { encoding: 'utf8' }).split('\n');
    const byLocal = new Map<string, string>();
    for (const l of lines) {
      const f = l.trim().split(/\s+/);
      if (f[3])
        byLocal.set(f[3], /users:\(\("([^"]+)",pid=(\d+)/.exec(l)?.slice(1).join(' ') ?? '?');
    }
    return lines
      .filter((l) => l.includes(`pid=${pid},`))
      .map((l) => {
        const f = l.trim().split(/\s+/);
        return `${f[0]} ${f[3]} ← ${f[4]} (${byLocal.get(f[4] ?? '') ?? 'no local peer'})`;
      });
  } catch {
    return [];
  }
}

function countFiles(dir: string): number {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  return entries.reduce(
    (n, e) => n + (e.isDirectory() ? countFiles(path.join(dir, e.name)) : 1),
    0,
  );
}
