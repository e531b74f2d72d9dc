import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventEnvelope, Message } from '@parley/protocol';
import { GatewayClient, ParleyError, RestClient, verifyWebhook } from '../src/index.js';
import { freePort, REPO } from '../../server/test/helpers/process.js';
import { eventually, makeWorld, startServer, type TestServer, type World } from './world.js';

// Issue 14: the SDK against a real server process at the default limits (D25: messages 10/s
// burst 20, global 5/s burst 10; D29: one reconnect per second).
describe('@parley/sdk end to end', () => {
  let server: TestServer;
  let w: World;
  let human: RestClient;

  beforeAll(async () => {
    server = await startServer({
      PARLEY_WEBHOOK_ALLOW_INSECURE: 'true',
      PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true',
    });
    w = await makeWorld(server.origin);
    human = new RestClient({ token: w.human.token, url: server.origin }); // D10: people use /api/v1 too
  }, 90_000);

  afterAll(async () => {
    await server?.stop();
  }, 30_000);

  it('a 5,000-character send arrives as 3 messages, in order, that join to the original (D14)', async () => {
    const bot = await w.addBot();
    const rest = new RestClient({ token: bot.token, url: server.origin });
    const words = Array.from({ length: 1100 }, (_, i) => `w${String(i).padStart(4, '0')}`);
    const content = words.join(' ').slice(0, 5000);
    expect(Array.from(content)).toHaveLength(5000);
    const sent = await rest.messages.send(w.channelId, content);
    expect(sent).toHaveLength(3);
    expect(sent.map((m) => m.content).join('')).toBe(content);
    for (const m of sent) expect(Array.from(m.content).length).toBeLessThanOrEqual(2000);
    // cut at word boundaries: every part but the last ends with the space it was cut after
    for (const m of sent.slice(0, -1)) expect(m.content.endsWith(' ')).toBe(true);
    const page = await rest.messages.list(w.channelId, { limit: 3 });
    expect(page.messages.map((m) => m.id)).toEqual(sent.map((m) => m.id).reverse()); // D16
    expect(sent[0]!.id).toBeLessThan(sent[1]!.id);
    expect(sent[1]!.id).toBeLessThan(sent[2]!.id);
  });

  it('a burst of 100 sends finishes with no 429 reaching the app, and none on the wire', async () => {
    const bot = await w.addBot();
    const limited: string[] = [];
    const rest = new RestClient({
      token: bot.token,
      url: server.origin,
      onRateLimited: (i) => limited.push(i.route),
    });
    const started = Date.now();
    const results = await Promise.allSettled(
      Array.from({ length: 100 }, (_, i) => rest.messages.send(w.channelId, `burst ${i}`)),
    );
    const failed = results.filter((r) => r.status === 'rejected');
    expect(failed).toEqual([]);
    expect(limited).toEqual([]);
    // 20 at once, then 10 a second: about 8 s; the queue neither stalled nor overran
    expect(Date.now() - started).toBeGreaterThan(7000);
    expect(Date.now() - started).toBeLessThan(20_000);
    const seen = new Set<number>();
    for await (const m of rest.messages.history(w.channelId)) {
      if (m.content.startsWith('burst ')) seen.add(Number(m.content.slice(6)));
      if (seen.size === 100) break;
    }
    expect(seen.size).toBe(100);
  }, 40_000);

  it('pages history both ways and members with async iterators (D16, D20)', async () => {
    const bot = await w.addBot();
    const rest = new RestClient({ token: bot.token, url: server.origin });
    const mine: Message[] = [];
    for (let i = 0; i < 7; i++) mine.push(...(await rest.messages.send(w.channelId, `page ${i}`)));
    const newestFirst: number[] = [];
    for await (const m of rest.messages.history(w.channelId, {
      before: mine[6]!.id + 1,
      pageSize: 2,
    })) {
      newestFirst.push(m.id);
      if (newestFirst.length === 7) break;
    }
    expect(newestFirst).toEqual(mine.map((m) => m.id).reverse());
    const oldestFirst: number[] = [];
    for await (const m of rest.messages.history(w.channelId, {
      after: mine[0]!.id - 1,
      pageSize: 3,
    }))
      oldestFirst.push(m.id);
    expect(oldestFirst).toEqual(mine.map((m) => m.id));
    const members: number[] = [];
    for await (const m of rest.members.all(w.guildId, 1)) members.push(m.user.id);
    expect(members).toContain(w.human.id);
    expect(members).toContain(bot.userId);
    expect([...members].sort((a, b) => a - b)).toEqual(members);
  });

  it('errors are ParleyErrors with code, status and requestId (D5, D7)', async () => {
    const bot = await w.addBot();
    const rest = new RestClient({ token: bot.token, url: server.origin });
    const err = await rest.channels.get(Number.MAX_SAFE_INTEGER).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ParleyError);
    expect(err).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    expect((err as ParleyError).requestId).toMatch(/^[0-9a-f-]{36}$/);
    const bad = await new RestClient({ token: 'nope', url: server.origin }).bot
      .me()
      .catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
  });

  it('uploads from a Buffer and a stream, sends them with the matching msgType, and talks in a DM (D15, D21, D22)', async () => {
    const bot = await w.addBot();
    const rest = new RestClient({ token: bot.token, url: server.origin });
    const bytes = readFileSync(new URL('../examples/cat.png', import.meta.url));
    const fromBuffer = await rest.files.upload(bytes, { filename: 'a.png' });
    expect(fromBuffer).toMatchObject({ filename: 'a.png', size: bytes.length });
    const { file, message } = await rest.messages.sendFile(w.channelId, Readable.from([bytes]), {
      filename: 'b.png',
    });
    expect(message.content).toBe(file.url);
    const quota = await rest.files.quota();
    expect(quota.dailyUsed).toBe(2 * bytes.length);
    const dm = await rest.dms.open(w.human.id);
    expect(await rest.dms.open(w.human.id)).toEqual(dm); // D21: the same channel every time
    const [sent] = await rest.dms.send(dm.channelId, 'hello in private');
    expect(sent).not.toHaveProperty('guildId'); // D17
    const seen = await human.dms.list(dm.channelId);
    expect(seen.messages[0]).toEqual(sent);
  });

  describe('examples', () => {
    const children: ChildProcess[] = [];
    afterAll(() => {
      for (const c of children) c.kill('SIGTERM');
    });
    const run = (file: string, env: Record<string, string>): Promise<ChildProcess> => {
      const child = spawn(process.execPath, ['--import', 'tsx', `packages/sdk/examples/${file}`], {
        cwd: REPO,
        env: { ...process.env, PARLEY_URL: server.origin, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      children.push(child);
      let out = '';
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${file} did not start: ${out}`)), 30_000);
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString();
          if (/online|listening/.test(out)) {
            clearTimeout(timer);
            resolve(child);
          }
        });
        child.stderr.on('data', (c: Buffer) => (out += c.toString()));
        child.once('exit', (code) => reject(new Error(`${file} exited ${code}: ${out}`)));
      });
    };
    const answerTo = async (text: string, authorId: number): Promise<Message> => {
      const [asked] = await human.messages.send(w.channelId, text);
      return eventually(async () => {
        const page = await human.messages.list(w.channelId, { after: asked!.id });
        return page.messages.find((m) => m.author.id === authorId);
      });
    };

    it('echo-bot.ts answers with the same text', async () => {
      const bot = await w.addBot('echo');
      await run('echo-bot.ts', { PARLEY_TOKEN: bot.token });
      const answer = await answerTo('hello echo', bot.userId);
      expect(answer.content).toBe('hello echo');
    }, 60_000);

    it('cat-bot.ts answers !cat with an uploaded image that the CDN serves (D15, D22)', async () => {
      const bot = await w.addBot('cat');
      await run('cat-bot.ts', { PARLEY_TOKEN: bot.token });
      const answer = await answerTo('!cat', bot.userId);
      expect(answer.content).toMatch(new RegExp(`^${server.origin}/cdn/files/\\d+/cat\\.png$`));
      const res = await fetch(answer.content);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('image/png');
    }, 60_000);

    it('webhook-bot.ts verifies signed deliveries and answers (D38)', async () => {
      const bot = await w.addBot('hook');
      const port = await freePort();
      await run('webhook-bot.ts', {
        PARLEY_TOKEN: bot.token,
        PARLEY_WEBHOOK_SECRET: bot.webhookSecret,
        PORT: String(port),
      });
      await w.admin('PUT', `/bots/${bot.id}/webhook`, { url: `http://127.0.0.1:${port}/` });
      const answer = await answerTo('hello hook', bot.userId);
      expect(answer.content).toBe('hello hook');
    }, 60_000);
  });

  it('D68: a real delivery verifies with the standardwebhooks package and with verifyWebhook; replayed 6 minutes later the SDK refuses it', async () => {
    const bot = await w.addBot('standard');
    const got: { headers: IncomingHttpHeaders; body: Buffer }[] = [];
    const receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        got.push({ headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(200).end();
      });
    }).listen(0, '127.0.0.1');
    await new Promise((r) => receiver.once('listening', r));
    const port = (receiver.address() as AddressInfo).port;
    await w.admin('PUT', `/bots/${bot.id}/webhook`, { url: `http://127.0.0.1:${port}/` });
    await w.admin('POST', `/bots/${bot.id}/webhook/test`);
    const d = await eventually(async () => got[0]);
    receiver.close();
    const headers = d.headers as Record<string, string>;
    const body = d.body.toString('utf8');
    // A third-party verifier, given the secret exactly as Parley shows it.
    const third = new Webhook(bot.webhookSecret).verify(body, headers) as { type: string };
    expect(third.type).toBe('WEBHOOK_TEST');
    expect(verifyWebhook(bot.webhookSecret, d.body, headers).type).toBe('WEBHOOK_TEST');

    // The replay: the same bytes and headers 6 minutes later, X-Service-Timestamp made fresh
    // (it is not signed by D38) — the signed webhook-timestamp still says when it was sent.
    const sentAt = Number(headers['webhook-timestamp']);
    const later = () => (sentAt + 360) * 1000;
    const replay = { ...headers, 'x-service-timestamp': String(sentAt + 360) };
    expect(() => verifyWebhook(bot.webhookSecret, d.body, replay, { now: later })).toThrow(
      expect.objectContaining({ code: 'BAD_SIGNATURE' }),
    );
    expect(() => verifyWebhook(bot.webhookSecret, d.body, headers, { now: later })).toThrow(
      expect.objectContaining({ code: 'STALE_TIMESTAMP' }),
    );
    // Both timestamps made fresh: the standard signature no longer matches.
    const forged = { ...replay, 'webhook-timestamp': String(sentAt + 360) };
    expect(() => verifyWebhook(bot.webhookSecret, d.body, forged, { now: later })).toThrow(
      expect.objectContaining({ code: 'BAD_SIGNATURE', message: expect.stringMatching(/D68/) }),
    );
    expect(() => new Webhook(bot.webhookSecret).verify(body, forged)).toThrow();
  }, 30_000);

  it('resumes across a server restart and loses no event (D31, D33)', async () => {
    const bot = await w.addBot('resumer');
    const client = new GatewayClient({
      token: bot.token,
      url: server.origin,
      reconnect: { maxMs: 4000 },
    });
    const got: EventEnvelope[] = [];
    const meta: string[] = [];
    // the human's messages only (example bots may still be answering in the channel)
    client.on('event', (e) => {
      if (e.type === 'MESSAGE_CREATE' && e.data.author.id === w.human.id) got.push(e);
    });
    client.on('resumed', () => void meta.push('resumed'));
    client.on('invalidSession', () => void meta.push('invalid'));
    client.on('ready', () => void meta.push('ready'));
    await client.connect();
    const sent: number[] = [];
    const send = async (text: string) =>
      sent.push(...(await human.messages.send(w.channelId, text)).map((m) => m.id));
    for (let i = 0; i < 5; i++) await send(`before ${i}`);
    await eventually(async () => (got.length >= 5 ? true : undefined));

    // stopped with SIGTERM (op 7, close), started again on the same data directory and port
    const stopping = server.restart();
    await eventually(async () => (client.sessionId && meta.length ? true : undefined));
    await stopping;
    for (let i = 0; i < 5; i++) await send(`after ${i}`);
    await eventually(async () => (got.length >= 10 ? true : undefined), 30_000);

    const ids = got.map((e) => (e.data as Message).id);
    expect(ids).toEqual(sent);
    expect(meta).toEqual(['ready', 'resumed']);
    await client.close();
  }, 90_000);

  it('a token reset stops the client with a clear error (4004, D8, D33)', async () => {
    const bot = await w.addBot('reset');
    const client = new GatewayClient({ token: bot.token, url: server.origin });
    await client.connect();
    const stopped = new Promise<ParleyError | undefined>((r) => client.on('stopped', r));
    const reconnects: unknown[] = [];
    client.on('reconnecting', (i) => void reconnects.push(i));
    await w.admin('POST', `/bots/${bot.id}/token`);
    const err = await stopped;
    expect(err).toBeInstanceOf(ParleyError);
    expect(err).toMatchObject({ code: 'AUTHENTICATION_FAILED', status: 4004 });
    expect(err!.message).toMatch(/token was reset/);
    expect(reconnects).toEqual([]);
    // and a new client with the old token is refused at the upgrade (D28): it stops, no retries
    const again = new GatewayClient({ token: bot.token, url: server.origin });
    await expect(again.connect()).rejects.toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
  }, 30_000);
});
