import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { PG_URL, postgresAvailable } from '../helpers/harness.js';
import {
  connectPatiently,
  makeRemoteWorld,
  type Frame,
  type GatewayClient,
  type RemoteWorld,
} from '../helpers/live-server.js';
import { fileForm, pngOfSize } from '../helpers/media.js';
import { call, startParley, stopParley, tempDir, type Running } from '../helpers/process.js';
import { Receiver } from '../helpers/receiver.js';

// Issue #10, "What to build" 3 (D31, D36, D39): a crash loop. A real server process is killed
// with SIGKILL 20 times under mixed load — a person sending messages, the bot uploading files,
// webhook deliveries to a local receiver, the bot's gateway session — and started again on the
// same database (SQLite file; PostgreSQL schema). After each restart every acknowledged message
// and upload is there and every message so far has reached the webhook receiver; the gateway
// session resumes each time, and in the end it has received every committed message exactly once,
// in order (checked against the channel's whole history).

const ADMIN = 'crash-loop-admin-token-0123456789';
const CYCLES = Number(process.env['PARLEY_CRASH_CYCLES'] ?? 20);
const trace = (msg: string): void => {
  if (process.env['PARLEY_CRASH_TRACE'])
    process.stderr.write(`${new Date().toISOString()} ${msg}\n`);
};
const pgOk = await postgresAvailable();
/** a start is 1–2 s on a quiet machine; a loaded one (shared CI runners) can take far longer */
const START_MS = 180_000;

interface Upload {
  path: string; // /cdn/files/<id>/<name> (the origin changes with every process)
  bytes: Buffer;
}

async function crashLoop(env: Record<string, string>): Promise<void> {
  const started = Date.now();
  const receiver = await new Receiver().listen();
  let server: Running | undefined;
  let client: GatewayClient | undefined;
  try {
    server = await startParley(env, START_MS);
    const w: RemoteWorld = await makeRemoteWorld(server.origin, ADMIN);
    const set = await call(server.origin, 'PUT', `/admin/v1/bots/${w.bot.id}/webhook`, ADMIN, {
      url: receiver.url,
    });
    expect(set.status).toBe(200);

    const frames: Frame[] = []; // every dispatch the bot's session received, across connections
    let sessionId = '';
    let lastSeq = 0;
    const acked: number[] = []; // message ids whose send answered 200
    const uploads: Upload[] = []; // uploads that answered 200
    let n = 0;

    /** Connect (first cycle) or resume (later ones); collect dispatches until the socket dies. */
    const attach = async (origin: Running): Promise<void> => {
      const query = sessionId ? `sessionId=${sessionId}&seq=${lastSeq}` : undefined;
      client = await connectPatiently(origin.gatewayUrl, w.bot.token, query ? { query } : {});
      const hello = await client.next();
      expect(hello.op).toBe(10);
      if (!sessionId) {
        const ready = await client.dispatch('READY');
        sessionId = ready.d.sessionId as string;
        lastSeq = ready.s ?? 0;
      } else {
        // D31: every dispatch after `seq`, in order, then RESUMED — never op 9 (no loss allowed)
        for (;;) {
          const f = await client.next({ timeoutMs: 15_000 });
          expect(f.op, `resume refused: ${JSON.stringify(f)}`).toBe(0);
          lastSeq = f.s ?? lastSeq;
          if (f.t === 'RESUMED') break;
          expect(f.t).toBe('MESSAGE_CREATE');
          frames.push(f);
        }
      }
      const c = client;
      void (async () => {
        for (;;) {
          let f: Frame;
          try {
            f = await c.next({ timeoutMs: 600_000 });
          } catch {
            return; // closed (killed)
          }
          if (f.op !== 0) continue;
          expect(f.t).toBe('MESSAGE_CREATE');
          frames.push(f);
          lastSeq = f.s ?? lastSeq;
        }
      })();
    };

    /** Load until `stop` resolves: a person's sends (one at a time: commit order = id order) and the bot's uploads. */
    const load = async (origin: string, stop: Promise<void>): Promise<void> => {
      let running = true;
      void stop.then(() => (running = false));
      const sender = (async () => {
        while (running) {
          const r = await call(
            origin,
            'POST',
            `/api/v1/channels/${w.channelId}/messages`,
            w.human.token,
            {
              content: `m${n++}`,
            },
          ).catch(() => undefined);
          if (r?.status === 200) acked.push(r.body.id as number);
          else if (r) throw new Error(`send answered ${r.status} ${r.text}`);
        }
      })();
      const uploader = (async () => {
        while (running) {
          const bytes = pngOfSize(1000 + Math.floor(Math.random() * 20_000));
          const form = fileForm(`f${n}.png`, bytes);
          const r = await fetch(`${origin}/api/v1/files/upload`, {
            method: 'POST',
            headers: { authorization: `Bearer ${w.bot.token}`, 'content-type': form.contentType },
            body: form.body,
          }).catch(() => undefined);
          if (!r) continue;
          const body = (await r.json().catch(() => undefined)) as { url?: string } | undefined;
          if (r.status !== 200 || !body?.url) throw new Error(`upload answered ${r.status}`);
          uploads.push({ path: new URL(body.url).pathname, bytes });
        }
      })();
      await Promise.all([sender, uploader]);
    };

    const delivered = (): Set<number> => {
      const ids = new Set<number>();
      for (const r of receiver.received) {
        const env = JSON.parse(r.body.toString('utf8')) as { type: string; data: { id: number } };
        if (env.type === 'MESSAGE_CREATE') ids.add(env.data.id);
      }
      return ids;
    };

    /** After a restart: what was acknowledged before is all there. */
    const checkDurable = async (origin: string, fromMsg: number, fromUpload: number) => {
      const want = acked.slice(fromMsg);
      if (want.length > 0) {
        const first = Math.min(...want);
        const seen = new Set<number>();
        let after = first - 1;
        for (;;) {
          const page = await call(
            origin,
            'GET',
            `/api/v1/channels/${w.channelId}/messages?after=${after}&limit=100`,
            w.human.token,
          );
          const ids = (page.body.messages as Array<{ id: number }>).map((m) => m.id);
          for (const id of ids) seen.add(id);
          if (!page.body.hasMore || ids.length === 0) break;
          after = Math.max(...ids);
        }
        for (const id of want) expect(seen.has(id), `acknowledged message ${id} lost`).toBe(true);
      }
      for (const u of uploads.slice(fromUpload)) {
        const r = await fetch(origin + u.path);
        expect(r.status, `acknowledged upload ${u.path}`).toBe(200);
        expect(Buffer.from(await r.arrayBuffer()).equals(u.bytes)).toBe(true);
      }
      // D39: every acknowledged message reaches the receiver (at least once), even when its
      // delivery was in flight when the process died.
      const deadline = Date.now() + 15_000;
      for (;;) {
        const got = delivered();
        const missing = acked.filter((id) => !got.has(id));
        if (missing.length === 0) break;
        if (Date.now() > deadline)
          throw new Error(`webhook never delivered messages ${missing.join(',')}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };

    let msgMark = 0;
    let uploadMark = 0;
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const s: Running = server;
      trace(`cycle ${cycle}: up`);
      await attach(s);
      trace(`cycle ${cycle}: attached (${frames.length} frames)`);
      await checkDurable(s.origin, msgMark, uploadMark);
      trace(`cycle ${cycle}: checked (${acked.length} acked, ${uploads.length} uploads)`);
      msgMark = acked.length;
      uploadMark = uploads.length;
      // load, then SIGKILL at a random moment with requests in flight
      let kill!: () => void;
      const stop = new Promise<void>((r) => (kill = r));
      const loading = load(s.origin, stop);
      // Kill once this cycle has acknowledged a few sends and an upload (counts, not timing: a
      // slow machine gets the same load), a random moment later, with requests in flight.
      const until = Date.now() + 10_000;
      while ((acked.length - msgMark < 3 || uploads.length - uploadMark < 1) && Date.now() < until)
        await new Promise((r) => setTimeout(r, 10));
      await new Promise((r) => setTimeout(r, Math.random() * 200));
      s.proc.kill('SIGKILL');
      await s.exited;
      kill();
      await loading;
      trace(`cycle ${cycle}: killed`);
      server = await startParley(env, START_MS);
    }

    // The last process: resume, check, then a marker message ends the stream.
    const s = server;
    await attach(s);
    await checkDurable(s.origin, msgMark, uploadMark);
    const end = await call(
      s.origin,
      'POST',
      `/api/v1/channels/${w.channelId}/messages`,
      w.human.token,
      { content: 'the end' },
    );
    expect(end.status).toBe(200);
    const deadline = Date.now() + 15_000;
    while (!frames.some((f) => f.d.id === end.body.id)) {
      if (Date.now() > deadline) throw new Error('the end marker never arrived');
      await new Promise((r) => setTimeout(r, 20));
    }

    // The channel's whole history, oldest first.
    const history: number[] = [];
    let after = 0;
    for (;;) {
      const page = await call(
        s.origin,
        'GET',
        `/api/v1/channels/${w.channelId}/messages?after=${after}&limit=100`,
        w.human.token,
      );
      const ids = (page.body.messages as Array<{ id: number }>).map((m) => m.id).reverse();
      history.push(...ids);
      if (!page.body.hasMore) break;
      after = ids[ids.length - 1] ?? after;
    }
    // Every committed message exactly once, in order, over 21 connections of one session.
    expect(frames.map((f) => f.d.id as number)).toEqual(history);
    const seqs = frames.map((f) => f.s ?? 0);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]).toBeGreaterThan(seqs[i - 1] as number);
    for (const id of acked) expect(history).toContain(id);
    expect(acked.length).toBeGreaterThan(CYCLES); // there was load in every cycle, roughly
    expect(uploads.length).toBeGreaterThan(CYCLES / 2);
    console.log(
      `crash loop (${env['PARLEY_DATABASE_URL']?.startsWith('postgres') ? 'postgres' : 'sqlite'}): ` +
        `${CYCLES} SIGKILLs, ${history.length} messages committed (${acked.length} acknowledged), ` +
        `${uploads.length} uploads, ${receiver.received.length} webhook requests, ` +
        `${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
  } finally {
    client?.terminate();
    await stopParley(server, 'SIGKILL');
    await receiver.close();
  }
}

const base = (dataDir: string): Record<string, string> => ({
  PARLEY_HOST: '127.0.0.1',
  PARLEY_PORT: '0',
  PARLEY_DATA_DIR: dataDir,
  PARLEY_ADMIN_TOKEN: ADMIN,
  PARLEY_RATE_GLOBAL: 'off',
  PARLEY_RATE_MESSAGES: 'off',
  PARLEY_LOG_LEVEL: 'warn',
  PARLEY_WEBHOOK_ALLOW_INSECURE: 'true',
  PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true',
  PARLEY_WEBHOOK_RETRY_S: '0.2,0.2,0.5,1,1,1,1,1,1,1',
});

describe('crash loop: 20 × SIGKILL under mixed load [sqlite]', () => {
  const data = tempDir('parley-crash-loop-');
  afterAll(() => data.remove());
  it('loses nothing acknowledged; the gateway session resumes every time', async () => {
    await crashLoop(base(data.path));
  }, 600_000);
});

describe.skipIf(!pgOk)('crash loop: 20 × SIGKILL under mixed load [postgres]', () => {
  const data = tempDir('parley-crash-loop-pg-');
  const schema = `crash_${randomBytes(6).toString('hex')}`;
  afterAll(async () => {
    data.remove();
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`drop schema if exists ${schema} cascade`);
    await c.end();
  });
  it('loses nothing acknowledged; the gateway session resumes every time', async () => {
    const c = new pg.Client({ connectionString: PG_URL });
    await c.connect();
    await c.query(`create schema ${schema}`);
    await c.end();
    await crashLoop({
      ...base(data.path),
      PARLEY_DATABASE_URL: `${PG_URL}?options=-c%20search_path%3D${schema}`,
    });
  }, 600_000);
});
