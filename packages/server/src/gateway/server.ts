import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ErrorCode } from '@parley/protocol';
import { authenticate, bearerToken, unauthorized } from '../domain/auth/authenticate.js';
import { hashSessionToken, SESSION_PREFIX } from '../domain/auth/session-token.js';
import type { BotTokenCodec } from '../domain/auth/bot-token.js';
import type { Domain } from '../domain/context.js';
import { AppError, databaseUnavailable } from '../errors/app-error.js';
import type { EventsRuntime } from '../events/runtime.js';
import { Health } from '../health/health.js';
import { isDatabaseUnreachable } from '../storage/unreachable.js';
import { clientAddress } from '../http/client-address.js';
import { chargeBucket } from '../http/plugins/rate-limit.js';
import type { RateLimiter } from '../ratelimit/limiter.js';
import { Close } from './close-codes.js';
import { connectionClosed, connectionOpened, rateLimitRefused } from '../metrics/metrics.js';
import { GatewayConnection, type BotIdentity } from './connection.js';
import { PeopleGateway } from './people-gateway.js';
import type { PersonIdentity } from './person-connection.js';
import { PresenceTracker } from './presence.js';
import type { VisibilityTracker } from '../push/visibility.js';
import { GatewayRegistry } from './registry.js';
import { releaseNode } from './session-store.js';
import { takeConnectSlot } from './connect-attempts.js';

export interface GatewayDeps {
  readonly domain: Domain;
  readonly codec: BotTokenCodec;
  readonly limiter: RateLimiter;
  readonly events: EventsRuntime;
  /** D72: outages are logged once there, not per connection or per check */
  readonly health?: Health | undefined;
  /** D66: the push sender runs on serving nodes; visibility (op 3) is tracked per node */
  readonly push?: { sender: { start(): void }; visibility: VisibilityTracker } | undefined;
}

export const GATEWAY_PATH = '/gateway';
/** D28: at least 1 s between a bot's connection attempts, on every node (shared limiter). */
const RECONNECT_SPEC = { rate: 1, burst: 1 } as const;
/**
 * D51: a person opens several connections at once (tabs, devices, a browser restoring its
 * windows), so D28's one-per-second would bite them: per person, 10 attempts at once and then
 * 2 per second. Still a bound on a client stuck in a reconnect loop.
 */
const PERSON_RECONNECT_SPEC = { rate: 2, burst: 10 } as const;
/** D47: the session cookie (http/plugins/person-auth.ts SESSION_COOKIE; not imported: layers). */
const SESSION_COOKIE = 'parley_session';
/**
 * D32: a frame over 4096 bytes closes with 4002. `ws` refuses it from the frame header, before
 * reading the payload (a client cannot make us buffer megabytes), but closes with 1009;
 * `closeTooBigWith4002` turns that close into 4002.
 */
const MAX_FRAME_BYTES = 4096;
const CANONICAL_INT = /^(0|[1-9][0-9]{0,15})$/;

/**
 * The gateway on the HTTP server's port (D1): the upgrade is handled here, before `ws`, so every
 * refusal is a plain HTTP answer in the D5 error form (D28). Started when the app is ready;
 * on close (preClose, before the HTTP server stops) every client gets op 7 and its session stays
 * resumable.
 */
export function installGateway(app: FastifyInstance, deps: GatewayDeps): void {
  const { domain, codec, limiter, events } = deps;
  const config = domain.config;
  const health = deps.health ?? new Health({ redis: config.redisUrl !== undefined });
  // D72: an error that belongs to a database or Redis outage is that outage's (logged once when
  // it begins and once when it ends), not a line per connection, check or retry.
  const log = (err: unknown, msg: string): void => {
    if (!health.quiet(err)) app.log.error({ err }, msg);
  };
  const registry = new GatewayRegistry(domain.db, events, log);
  // D51: presence counts bots' connections too; people get their own fan-out.
  const presence = new PresenceTracker(domain, {
    nodeId: config.nodeId,
    redisUrl: config.redisUrl,
    log,
    ...(health.redis ? { health: health.redis } : {}),
  });
  const people = new PeopleGateway(
    domain,
    events,
    presence,
    log,
    (fields, msg) => app.log.info(fields, msg),
    deps.push?.visibility,
  );
  const wss = new WebSocketServer({
    noServer: true,
    maxPayload: MAX_FRAME_BYTES,
    perMessageDeflate: false,
  });
  let closing = false;

  const upgrade = async (req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    // Until ws owns it, an error on the raw socket must not crash the process.
    socket.on('error', () => {});
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://gateway.invalid');
    } catch {
      // D54: a malformed upgrade request is a 400 in the error form, not a thrown error.
      return refuse(socket, new AppError('VALIDATION_ERROR', 'Malformed URL'));
    }
    if (url.pathname !== GATEWAY_PATH)
      return refuse(socket, new AppError('NOT_FOUND', `No route GET ${url.pathname}`));
    if (closing)
      return refuse(
        socket,
        new AppError('SERVICE_UNAVAILABLE', 'Server is shutting down; reconnect', {
          headers: { 'retry-after': '1' },
        }),
      );
    let bot: BotIdentity | undefined;
    let person: PersonIdentity | undefined;
    try {
      // D9: the Authorization header; D51: or a person's session cookie, from this site only.
      // A token in the query or a subprotocol is ignored.
      const header = req.headers.authorization;
      const cookie =
        header === undefined || header === ''
          ? cookieValue(req.headers.cookie, SESSION_COOKIE)
          : undefined;
      let token: string;
      if (cookie !== undefined) {
        if (req.headers.origin !== domain.urls.origin)
          throw new AppError(
            'FORBIDDEN',
            'Cross-site connection refused: a cookie-authenticated gateway connection must come from this site (Origin)',
          );
        if (!cookie.startsWith(SESSION_PREFIX)) throw unauthorized('Unknown session cookie');
        token = cookie;
      } else {
        token = bearerToken(header);
      }
      const principal = await authenticate(domain, codec, token);
      if (!principal.isBot) {
        person = { userId: principal.userId, tokenHash: hashSessionToken(token) };
        const d = await limiter.consume(
          `gateway-connect:person:${principal.userId}`,
          PERSON_RECONNECT_SPEC,
        );
        if (!d.allowed)
          throw tooFast(
            d.retryAfterMs,
            'at most 10 connection attempts at once, then 2 per second',
          );
      } else {
        const claims = await codec.verify(token);
        if (principal.botId === undefined || !claims)
          throw new AppError('UNAUTHORIZED', 'Invalid token', {
            headers: { 'www-authenticate': 'Bearer' },
          });
        bot = { botId: principal.botId, userId: principal.userId, generation: claims.generation };
        // D28: a second attempt less than 1 s after the previous one is refused.
        const d = await limiter.consume(`gateway-connect:bot:${bot.botId}`, RECONNECT_SPEC);
        if (!d.allowed) throw tooFast(d.retryAfterMs, 'at most one connection attempt per second');
        // D72: Redis could not say whether another node accepted an attempt in the last second
        // (this node's own bucket decided): the database can.
        if (d.local) {
          const wait = await takeConnectSlot(domain.db, bot.botId, domain.clock.now());
          if (wait > 0) throw tooFast(wait, 'at most one connection attempt per second');
        }
      }
    } catch (err) {
      // D54/D25: a failed authentication draws from the client address's bucket (`global`
      // figures), the same bucket as REST 401s; past it the refusal is a 429.
      if (err instanceof AppError && err.code === 'UNAUTHORIZED') {
        try {
          const ip = clientAddress(req, config.trustProxy);
          const headers = await chargeBucket({ limiter, config }, 'global', {
            kind: 'address',
            ip,
          });
          return refuse(socket, err, headers);
        } catch (limited) {
          if (limited instanceof AppError) return refuse(socket, limited);
          throw limited;
        }
      }
      if (err instanceof AppError) return refuse(socket, err);
      // D72: the database cannot be reached: come back shortly, like a REST request.
      if (isDatabaseUnreachable(err)) return refuse(socket, databaseUnavailable(err));
      log(err, 'gateway upgrade failed');
      return refuse(socket, new AppError('INTERNAL_ERROR', 'Internal server error'));
    }
    const resume = resumeParams(url);
    wss.handleUpgrade(req, socket, head, (ws) => {
      closeTooBigWith4002(ws);
      if (closing) {
        ws.close(1012, 'server restarting');
        return;
      }
      if (person) {
        people.accept(ws, person, resume, socket);
        return;
      }
      if (!bot) return;
      const botUserId = bot.userId;
      const conn = new GatewayConnection(
        ws,
        bot,
        {
          domain,
          feed: events.feed,
          nodeId: config.nodeId,
          heartbeatMs: config.heartbeatMs,
          resumeWindowS: config.resumeWindowS,
          rate: config.rateGateway,
          claimed: (c) => registry.claimed(c),
          finished: (c) => {
            registry.remove(c);
            presence.down(botUserId);
            const code = c.endCode ?? 1006;
            connectionClosed('bot', code);
            app.log.info({ kind: 'bot', botId: c.bot.botId, code }, 'gateway connection closed');
          },
          log,
        },
        resume,
        socket,
      );
      registry.add(conn);
      presence.up(botUserId);
      conn.start();
      // D53 / issue #13: one info line per connection opened and closed, and the gauge.
      connectionOpened('bot');
      app.log.info({ kind: 'bot', botId: bot.botId }, 'gateway connection opened');
    });
  };

  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    upgrade(req, socket, head).catch((err: unknown) => {
      log(err, 'gateway upgrade failed');
      socket.destroy();
    });
  });

  app.addHook('onReady', async () => {
    events.setErrorLog((err) => log(err, 'events'));
    // Sessions this node held before a restart or crash: their connections are gone.
    await releaseNode(domain.db, config.nodeId, domain.clock.now());
    await events.start();
    registry.start();
    people.start();
    await presence.start();
    // D66: pushes go out from serving nodes only (a CLI command's sends notify nobody).
    await deps.push?.visibility.start();
    deps.push?.sender.start();
  });

  // preClose runs before the HTTP server stops: clients still hear op 7 and a clean close.
  app.addHook('preClose', async () => {
    closing = true;
    await Promise.all([registry.shutdown(), people.shutdown()]);
    await presence.stop();
    wss.close();
  });
}

/** D31: `?sessionId=…&seq=…` asks to resume; anything malformed is a resume that cannot be served. */
function resumeParams(url: URL): { sessionId: string; seq: number } | undefined {
  const sessionId = url.searchParams.get('sessionId');
  const seq = url.searchParams.get('seq');
  if (sessionId === null && seq === null) return undefined;
  const n = seq !== null && CANONICAL_INT.test(seq) ? Number(seq) : -1;
  return { sessionId: sessionId ?? '', seq: n };
}

/** D28: 429 with Retry-After (whole seconds) and retryAfter (fractional). */
function tooFast(retryAfterMs: number, rule: string): AppError {
  rateLimitRefused('gateway-connect');
  const retryAfter = retryAfterMs / 1000;
  return new AppError(
    'RATE_LIMIT_EXCEEDED',
    `Reconnecting too fast: ${rule}; retry after ${retryAfter} s`,
    { retryAfter, headers: { 'retry-after': String(Math.ceil(retryAfter)) } },
  );
}

/** One cookie's value from a Cookie header (RFC 6265 pairs; undefined when absent or empty). */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    let v = part.slice(eq + 1).trim();
    if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1);
    try {
      v = decodeURIComponent(v);
    } catch {
      return undefined;
    }
    return v === '' ? undefined : v;
  }
  return undefined;
}

/** D28: a refused upgrade is an HTTP answer with the D5 error body (and D7's request id). */
function refuse(socket: Duplex, err: AppError, extraHeaders: Record<string, string> = {}): void {
  const status = err.status;
  const body = JSON.stringify({
    error: { code: err.code satisfies ErrorCode, message: err.message, ...err.extra },
  });
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    'x-request-id': randomUUID(),
    connection: 'close',
    ...extraHeaders,
    ...err.headers,
  };
  if (status === 401) headers['www-authenticate'] = 'Bearer';
  const head = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ].join('\r\n');
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.once('finish', () => socket.destroy());
  socket.end(`${head}\r\n\r\n${body}`);
}

/**
 * `ws` closes a connection whose frame exceeds `maxPayload` with 1009 (Message Too Big), which it
 * sends itself; D32 asks for 4002. 1009 is used for nothing else here, so this connection's
 * close() maps it — the only place `ws`'s own choice of code is overridden.
 */
function closeTooBigWith4002(ws: WebSocket): void {
  const close = ws.close.bind(ws);
  ws.close = (code?: number, reason?: string | Buffer): void => {
    if (code === 1009) close(Close.DECODE_ERROR, 'frame over 4096 bytes');
    else close(code, reason);
  };
}
