import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { HttpClient } from '../lib/http-client.js';
import { pngOfSize } from '../../packages/server/test/helpers/media.js';
import { nowMs, Samples } from '../lib/stats.js';

/**
 * Hostile clients for the soak (issue 10): `sockets` raw TCP connections kept open all the time,
 * each doing one of three things the server must cut (D54: a request whose headers and body have
 * not fully arrived within PARLEY_REQUEST_TIMEOUT_MS → 408 and the connection closes):
 *
 * - slowloris: a request line and headers dribbled one byte at a time, never finished;
 * - a stalled upload: an authenticated multipart upload that sends its part head and the start
 *   of a PNG, a little more a moment later, then nothing (Content-Length promises 1 MB);
 * - a stalled send: an authenticated JSON message send whose body stops half-way.
 *
 * When the server closes one, the slot opens the next (until `stop()`), so the server faces
 * `sockets` of them for the whole run. Each socket's hold time runs from its first byte to its
 * close; the status line the server answered with (if any) is counted.
 */
export interface HostileOptions {
  readonly origin: string;
  readonly sockets: number;
  /** bot or person tokens for the authenticated stalls (round-robin) */
  readonly tokens: readonly string[];
  readonly channelIds: readonly number[];
  /** one header byte per this many ms (slowloris) */
  readonly dribbleMs: number;
}

type Kind = 'slowloris' | 'stalled-upload' | 'stalled-send';
const KINDS: readonly Kind[] = ['slowloris', 'stalled-upload', 'stalled-send'];

export class HostileLoad {
  /** hold times (ms) of sockets the server closed */
  readonly held = new Samples(4096);
  /** the longest hold per kind, ms */
  readonly maxHeldByKind = new Map<Kind, number>();
  /** every closed socket: kind, when it connected (nowMs) and how long it was held */
  readonly holds: Array<{ kind: Kind; at: number; ms: number }> = [];
  opened = 0;
  closedByServer = 0;
  /** first status line per close, e.g. `HTTP/1.1 408 Request Timeout` → count */
  readonly answers = new Map<string, number>();
  readonly byKind = new Map<Kind, number>();
  private running = false;
  private readonly live = new Set<{ sock: Socket; startedAt: number; timers: NodeJS.Timeout[] }>();
  private next = 0;
  private readonly url: URL;

  constructor(private readonly o: HostileOptions) {
    this.url = new URL(o.origin);
  }

  start(): void {
    this.running = true;
    // Opened over a second, not all in one turn.
    for (let i = 0; i < this.o.sockets; i++)
      setTimeout(() => this.open(KINDS[i % KINDS.length] as Kind), (i * 1000) / this.o.sockets);
  }

  /** The oldest socket still open, in ms (0 when none). */
  oldestOpenMs(): number {
    const now = nowMs();
    let oldest = 0;
    for (const l of this.live) oldest = Math.max(oldest, now - l.startedAt);
    return oldest;
  }

  get openNow(): number {
    return this.live.size;
  }

  /** Stops opening sockets and drops every open one; returns the age of the oldest dropped. */
  stop(): number {
    this.running = false;
    const oldest = this.oldestOpenMs();
    for (const l of this.live) {
      for (const t of l.timers) clearTimeout(t);
      l.sock.destroy();
    }
    this.live.clear();
    return oldest;
  }

  private open(kind: Kind): void {
    if (!this.running) return;
    const sock = connect(Number(this.url.port), this.url.hostname);
    const entry = { sock, startedAt: nowMs(), timers: [] as NodeJS.Timeout[] };
    this.live.add(entry);
    this.opened += 1;
    this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + 1);
    let answer = '';
    sock.setNoDelay(true);
    sock.on('data', (c: Buffer) => {
      if (answer.length < 64) answer += c.toString('latin1');
    });
    sock.on('error', () => {});
    sock.once('connect', () => {
      entry.startedAt = nowMs();
      this.script(kind, sock, entry.timers);
    });
    sock.once('close', () => {
      for (const t of entry.timers) clearTimeout(t);
      if (!this.live.delete(entry)) return; // dropped by stop()
      this.closedByServer += 1;
      const ms = nowMs() - entry.startedAt;
      this.held.push(ms);
      this.holds.push({ kind, at: entry.startedAt, ms });
      this.maxHeldByKind.set(kind, Math.max(ms, this.maxHeldByKind.get(kind) ?? 0));
      const status = answer.split('\r\n')[0] || '(closed without an answer)';
      this.answers.set(status, (this.answers.get(status) ?? 0) + 1);
      // The next one of the same kind, a moment later (never a tight reconnect loop).
      const t = setTimeout(() => this.open(kind), 100);
      t.unref();
    });
  }

  private script(kind: Kind, sock: Socket, timers: NodeJS.Timeout[]): void {
    const host = `Host: ${this.url.host}\r\n`;
    const token = this.o.tokens[this.next++ % this.o.tokens.length] ?? '';
    const channelId = this.o.channelIds[this.next % this.o.channelIds.length] ?? 0;
    const later = (ms: number, fn: () => void): void => {
      const t = setTimeout(() => {
        if (!sock.destroyed) fn();
      }, ms);
      timers.push(t);
    };
    if (kind === 'slowloris') {
      sock.write(`GET /api/v1/bot/me HTTP/1.1\r\n${host}`);
      const header = 'X-Slow: ' + 'a'.repeat(10_000);
      let i = 0;
      const drip = (): void => {
        sock.write(header[i++ % header.length] as string);
        timers.length = 0;
        later(this.o.dribbleMs, drip);
      };
      later(this.o.dribbleMs, drip);
    } else if (kind === 'stalled-upload') {
      const boundary = `----soak${randomBytes(8).toString('hex')}`;
      sock.write(
        `POST /api/v1/files/upload HTTP/1.1\r\n${host}Authorization: Bearer ${token}\r\n` +
          `Content-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 1000000\r\n\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="stall.png"\r\n` +
          `Content-Type: image/png\r\n\r\n`,
      );
      const png = pngOfSize(12_000);
      sock.write(png.subarray(0, 8000));
      later(1500, () => sock.write(png.subarray(8000)));
    } else {
      const body = JSON.stringify({ content: 'this send never finishes '.repeat(4) });
      sock.write(
        `POST /api/v1/channels/${channelId}/messages HTTP/1.1\r\n${host}Authorization: Bearer ${token}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n` +
          body.slice(0, 20),
      );
    }
  }
}

/**
 * Issue 21 (D70): hostile people on the people's gateway, the attacks of the security review —
 * every one of them open to a single ordinary account:
 *
 * - non-readers: people whose sockets never read (the socket is paused after the upgrade; the
 *   client still heartbeats), each `socketsEach` of them, who leave and rejoin a big guild over
 *   and over (each join sends them the whole guild, ~0.5 MB, as GUILD_CREATE) so that unsent
 *   data piles up; every `socketLifeMs` a socket is dropped and opened again (a client that
 *   never reads cannot tell the server closed it);
 * - a crowd: one person opening a new socket every `crowdEveryMs` (each one READY with the big
 *   guild), far past the 16 a person may hold;
 * - a rename storm: the big guild's owner renaming it `renamesPerS` times a second.
 *
 * The server must close the non-readers' sockets (4000) and the crowd's oldest (4011), and keep
 * what it holds for them within D70's bounds.
 */
export interface HostilePeopleOptions {
  readonly origin: string;
  readonly gatewayUrl: string;
  readonly nonReaders: readonly string[];
  readonly socketsEach: number;
  readonly socketLifeMs: number;
  readonly crowd: string;
  readonly crowdEveryMs: number;
  readonly owner: string;
  readonly guildId: number;
  readonly invite: string;
  readonly churnEveryMs: number;
  readonly renamesPerS: number;
}

export class HostilePeople {
  opened = 0;
  refused = 0;
  renames = 0;
  rejoins = 0;
  /** answers other than expected (a status the server should not give) */
  readonly failures: string[] = [];
  /** requests that got no answer (a keep-alive connection closed under it: the client's race) */
  networkErrors = 0;
  private running = false;
  private readonly sockets = new Set<WebSocket>();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly http: HttpClient;

  constructor(private readonly o: HostilePeopleOptions) {
    this.http = new HttpClient(o.origin, 8);
  }

  start(): void {
    this.running = true;
    this.o.nonReaders.forEach((token, p) => {
      for (let i = 0; i < this.o.socketsEach; i++)
        this.later((p * this.o.socketsEach + i) * 150, () => this.nonReader(token));
      this.later(p * 200, () => this.churn(token));
    });
    this.every(this.o.crowdEveryMs, () => this.open(this.o.crowd, false));
    if (this.o.renamesPerS > 0) this.every(1000 / this.o.renamesPerS, () => this.rename());
  }

  stop(): void {
    this.running = false;
    for (const t of this.timers) clearTimeout(t);
    for (const ws of this.sockets) ws.terminate();
    this.sockets.clear();
    this.http.close();
  }

  private later(ms: number, fn: () => void): void {
    const t = setTimeout(() => this.running && fn(), ms);
    this.timers.push(t);
  }

  private every(ms: number, fn: () => void): void {
    const t = setInterval(() => this.running && fn(), ms);
    this.timers.push(t);
  }

  /** A socket that never reads, dropped and opened again after `socketLifeMs`. */
  private nonReader(token: string): void {
    const ws = this.open(token, true);
    this.later(this.o.socketLifeMs, () => {
      ws?.terminate();
      this.nonReader(token);
    });
  }

  private open(token: string, paused: boolean): WebSocket | undefined {
    if (!this.running) return undefined;
    const ws = new WebSocket(this.o.gatewayUrl, {
      headers: { authorization: `Bearer ${token}` },
      perMessageDeflate: false,
    });
    this.sockets.add(ws);
    ws.on('error', () => {});
    ws.on('unexpected-response', () => {
      this.refused += 1; // 429: reconnecting faster than D51 lets a person
      this.sockets.delete(ws);
    });
    ws.on('close', () => this.sockets.delete(ws));
    ws.on('open', () => {
      this.opened += 1;
      const raw = (ws as unknown as { _socket?: Socket })._socket;
      if (paused) raw?.pause();
      else ws.on('message', () => {});
      const beat = setInterval(() => {
        if (ws.readyState === WebSocket.OPEN) ws.send('{"op":1,"d":null}');
        else clearInterval(beat);
      }, 20_000);
      beat.unref();
    });
    return ws;
  }

  /** Leave the big guild and join it again by invite: a GUILD_CREATE of the whole guild. */
  private churn(token: string): void {
    void (async () => {
      const left = await this.http.request('DELETE', `/app/v1/users/@me/guilds/${this.o.guildId}`, {
        token,
      });
      if (left.status !== 204 && left.status !== 404 && left.status !== 429)
        this.fail(`leave → ${left.status}`);
      const joined = await this.http.request('POST', `/app/v1/invites/${this.o.invite}/accept`, {
        token,
      });
      if (joined.status === 200) this.rejoins += 1;
      else if (joined.status !== 429) this.fail(`rejoin → ${joined.status} ${joined.raw}`);
    })()
      .catch(() => void (this.networkErrors += 1))
      .finally(() => this.later(this.o.churnEveryMs, () => this.churn(token)));
  }

  private rename(): void {
    const name = `storm ${this.renames}`;
    void this.http
      .request('PATCH', `/app/v1/guilds/${this.o.guildId}`, {
        token: this.o.owner,
        body: { name },
      })
      .then((r) => {
        if (r.status === 200) this.renames += 1;
        else if (r.status !== 429) this.fail(`rename → ${r.status}`);
      })
      .catch(() => void (this.networkErrors += 1));
  }

  private fail(what: string): void {
    if (this.failures.length < 10) this.failures.push(what);
  }
}
