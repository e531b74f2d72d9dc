import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BotEventDataMap, BotEventEnvelope, BotEventType } from '@parley/protocol';
import { Emitter } from './emitter.js';
import { ParleyError } from './errors.js';

/** Header values as node:http, Express, Fastify or the fetch API hand them over. */
export type HeaderBag = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** refuse a delivery whose `X-Service-Timestamp` is further than this from now (default 300 s) */
  toleranceS?: number;
  /** the clock, in ms (tests) */
  now?: () => number;
}

const header = (h: HeaderBag, name: string): string | undefined => {
  if (typeof (h as Headers).get === 'function') return (h as Headers).get(name) ?? undefined;
  const rec = h as Record<string, string | string[] | undefined>;
  const v = rec[name] ?? rec[Object.keys(rec).find((k) => k.toLowerCase() === name) ?? ''];
  return Array.isArray(v) ? v[0] : v;
};

/**
 * D38: check a webhook delivery and return its event. The signature
 * `X-Service-Signature: sha256=<hex HMAC-SHA256(secret, body)>` is computed over the exact body
 * bytes (pass the raw body, not re-serialized JSON) and compared in constant time; a delivery
 * whose `X-Service-Timestamp` is more than `toleranceS` away from now is refused (a replay).
 * Throws a {@link ParleyError} (`BAD_SIGNATURE`, `STALE_TIMESTAMP`, `BAD_PAYLOAD`).
 */
export function verifyWebhook(
  secret: string,
  rawBody: string | Uint8Array,
  headers: HeaderBag,
  opts: VerifyOptions = {},
): BotEventEnvelope {
  if (!secret) throw new TypeError('verifyWebhook: the webhook secret is required');
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  const given = Buffer.from(header(headers, 'x-service-signature') ?? '', 'utf8');
  const expected = Buffer.from(
    `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
    'utf8',
  );
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new ParleyError(
      'BAD_SIGNATURE',
      'X-Service-Signature does not match the body (D38)',
      401,
    );
  const tolerance = opts.toleranceS ?? 300;
  const ts = Number(header(headers, 'x-service-timestamp'));
  const now = (opts.now ?? Date.now)() / 1000;
  if (!Number.isFinite(ts) || Math.abs(now - ts) > tolerance)
    throw new ParleyError(
      'STALE_TIMESTAMP',
      `X-Service-Timestamp is missing or more than ${tolerance} s from now (D38)`,
      401,
    );
  let event: BotEventEnvelope;
  try {
    event = JSON.parse(body.toString('utf8')) as BotEventEnvelope;
  } catch {
    throw new ParleyError('BAD_PAYLOAD', 'the body is not JSON', 400);
  }
  if (typeof event?.type !== 'string' || typeof event.data !== 'object' || event.data === null)
    throw new ParleyError('BAD_PAYLOAD', 'the body is not an event envelope {type, data}', 400);
  return event;
}

export type WebhookEvents = {
  [K in BotEventType]: (data: BotEventDataMap[K]) => unknown;
} & {
  event: (event: BotEventEnvelope) => unknown;
  /** a delivery was refused (bad signature, stale, not JSON) */
  rejected: (error: ParleyError) => unknown;
};

export interface WebhookHandlerOptions extends VerifyOptions {
  /** the bot's webhook secret (D38) */
  secret: string;
}

/** The parts of Fastify the plugin uses (Fastify itself is not a dependency). */
interface FastifyLike {
  addContentTypeParser(
    type: string,
    opts: { parseAs: 'buffer' },
    parser: (req: unknown, body: Buffer, done: (err: Error | null, body?: Buffer) => void) => void,
  ): void;
  post(
    path: string,
    handler: (
      req: { body: unknown; headers: Record<string, string | string[] | undefined> },
      reply: { code(n: number): { send(b: unknown): unknown } },
    ) => Promise<unknown>,
  ): void;
}

export interface WebhookHandler extends Emitter<WebhookEvents> {
  /** node:http and Express: `http.createServer(handler)`, `app.post('/hook', handler)` */
  (req: IncomingMessage & { body?: unknown; rawBody?: unknown }, res: ServerResponse): void;
  /** Verify one delivery and run the listeners; the status to answer and its body. */
  handle(
    rawBody: string | Uint8Array,
    headers: HeaderBag,
  ): Promise<{ status: number; body: string }>;
  /** Fastify: `app.register(handler.fastify, { path: '/hook' })` (keeps the body raw in its scope) */
  fastify: (app: FastifyLike, opts: { path?: string }) => Promise<void>;
}

class WebhookEmitter extends Emitter<WebhookEvents> {
  fire<K extends keyof WebhookEvents>(
    type: K,
    ...args: Parameters<WebhookEvents[K]>
  ): Promise<boolean>[] {
    return this.emitAll(type, ...args);
  }
}

/**
 * A webhook receiver that verifies each delivery (D38) and emits the same typed events as the
 * gateway client, so a bot moves between transports by changing one line. It answers 200 once
 * the listeners have finished (a listener that fails gives 500: the server retries, D39), 401 for
 * a bad signature or stale timestamp, and 200 at once for a delivery id it has already handled
 * (D38: receivers dedupe on `X-Service-Delivery`).
 */
export function webhookHandler(opts: WebhookHandlerOptions): WebhookHandler {
  const emitter = new WebhookEmitter();
  const seen = new Set<string>();
  const remember = (id: string): void => {
    seen.add(id);
    if (seen.size > 10_000) seen.delete(seen.values().next().value as string);
  };

  const handle = async (
    rawBody: string | Uint8Array,
    headers: HeaderBag,
  ): Promise<{ status: number; body: string }> => {
    let event: BotEventEnvelope;
    try {
      event = verifyWebhook(opts.secret, rawBody, headers, opts);
    } catch (err) {
      const e = err instanceof ParleyError ? err : new ParleyError('BAD_PAYLOAD', String(err), 400);
      void Promise.all(emitter.fire('rejected', e));
      return {
        status: e.status,
        body: JSON.stringify({ error: { code: e.code, message: e.message } }),
      };
    }
    const delivery = header(headers, 'x-service-delivery');
    if (delivery !== undefined && seen.has(delivery))
      return { status: 200, body: '{"ok":true,"duplicate":true}' };
    const results = await Promise.all([
      ...emitter.fire(event.type, event.data as never),
      ...emitter.fire('event', event),
    ]);
    // A listener that failed makes the delivery fail: the server tries again (D39).
    if (results.includes(false)) return { status: 500, body: '{"ok":false}' };
    if (delivery !== undefined) remember(delivery);
    return { status: 200, body: '{"ok":true}' };
  };

  const node = (
    req: IncomingMessage & { body?: unknown; rawBody?: unknown },
    res: ServerResponse,
  ): void => {
    const answer = (r: { status: number; body: string }): void => {
      res.writeHead(r.status, { 'content-type': 'application/json' }).end(r.body);
    };
    const fail = (err: unknown): void =>
      answer({ status: 500, body: JSON.stringify({ error: String(err) }) });
    const pre = req.rawBody ?? req.body;
    if (typeof pre === 'string' || pre instanceof Uint8Array) {
      handle(pre, req.headers).then(answer, fail);
      return;
    }
    if (pre !== undefined && pre !== null && typeof pre === 'object' && !req.readable) {
      fail(
        'the raw body is needed to check the signature: mount the handler before a JSON body parser (or use express.raw())',
      );
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(Buffer.concat(chunks), req.headers).then(answer, fail));
    req.on('error', fail);
  };

  const fastify = async (app: FastifyLike, o: { path?: string }): Promise<void> => {
    app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) =>
      done(null, body),
    );
    app.post(o.path ?? '/', async (req, reply) => {
      const r = await handle(req.body as Buffer, req.headers);
      return reply.code(r.status).send(JSON.parse(r.body));
    });
  };

  return Object.assign(node, {
    on: emitter.on.bind(emitter),
    off: emitter.off.bind(emitter),
    once: emitter.once.bind(emitter),
    listenerCount: emitter.listenerCount.bind(emitter),
    handle,
    fastify,
  }) as unknown as WebhookHandler;
}
