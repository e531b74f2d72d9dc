import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BotEventDataMap, BotEventEnvelope, BotEventType } from '@parley/protocol';
import { Emitter } from './emitter.js';
import { ParleyError } from './errors.js';

/** Header values as node:http, Express, Fastify or the fetch API hand them over. */
export type HeaderBag = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** refuse a delivery whose timestamp is further than this from now (default 300 s: D38, D68) */
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

/** Constant-time equality of two strings (lengths may differ: that alone is not secret). */
const same = (a: string, b: string): boolean => {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
};

const refuse = (code: string, message: string): ParleyError => new ParleyError(code, message, 401);

/**
 * D68: the Standard Webhooks key is the bytes the secret encodes (`whsec_` + base64; a secret made
 * before D68 is base64url, which Node's decoder also reads, giving the bytes D68 names).
 */
const standardKey = (secret: string): Buffer =>
  Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');

/**
 * D68: `webhook-signature` holds one or more space-separated `v1,<base64>` signatures of
 * `id.timestamp.body`; one of them must match. Returns the signed id and timestamp.
 */
function checkStandard(
  secret: string,
  body: Buffer,
  headers: HeaderBag,
  signatures: string,
): { id: string; timestamp: string } {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  if (!id || !timestamp || !/^\d+$/.test(timestamp))
    throw refuse(
      'BAD_SIGNATURE',
      'webhook-signature without webhook-id and webhook-timestamp (D68)',
    );
  const expected = createHmac('sha256', standardKey(secret))
    .update(`${id}.${timestamp}.`)
    .update(body)
    .digest('base64');
  const ok = signatures.split(' ').some((s) => s.startsWith('v1,') && same(s.slice(3), expected));
  if (!ok)
    throw refuse(
      'BAD_SIGNATURE',
      'webhook-signature does not match the id, timestamp and body (D68)',
    );
  return { id, timestamp };
}

/**
 * Check a webhook delivery and return its event. Parley signs every delivery twice:
 * D38's `X-Service-Signature: sha256=<hex HMAC-SHA256(secret, body)>` over the exact body bytes,
 * and D68's Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`),
 * which sign the delivery id and the time too. Each signature present is checked, in constant
 * time (at least one must be); a delivery whose timestamp is more than `toleranceS` (5 minutes)
 * from now is refused as a replay. With the standard headers the time checked is the signed one,
 * so an old delivery replayed with a fresh `X-Service-Timestamp` is refused. Pass the raw body, not
 * re-serialized JSON. Throws a {@link ParleyError} (`BAD_SIGNATURE`, `STALE_TIMESTAMP`,
 * `BAD_PAYLOAD`).
 */
export function verifyWebhook(
  secret: string,
  rawBody: string | Uint8Array,
  headers: HeaderBag,
  opts: VerifyOptions = {},
): BotEventEnvelope {
  if (!secret) throw new TypeError('verifyWebhook: the webhook secret is required');
  const body = typeof rawBody === 'string' ? Buffer.from(rawBody, 'utf8') : Buffer.from(rawBody);
  const d38 = header(headers, 'x-service-signature');
  const standard = header(headers, 'webhook-signature');
  if (d38 === undefined && standard === undefined)
    throw refuse('BAD_SIGNATURE', 'neither X-Service-Signature (D38) nor webhook-signature (D68)');
  if (d38 !== undefined) {
    const expected = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
    if (!same(d38, expected))
      throw refuse('BAD_SIGNATURE', 'X-Service-Signature does not match the body (D38)');
  }
  let time = header(headers, 'x-service-timestamp');
  if (standard !== undefined) {
    const signed = checkStandard(secret, body, headers, standard);
    // The unsigned D38 copies must say what the signed ones say (the handler dedupes on the id).
    const delivery = header(headers, 'x-service-delivery');
    if (
      (delivery !== undefined && delivery !== signed.id) ||
      (time !== undefined && time !== signed.timestamp)
    )
      throw refuse(
        'BAD_SIGNATURE',
        'X-Service-Delivery or X-Service-Timestamp differs from the signed webhook-id or webhook-timestamp (D68)',
      );
    time = signed.timestamp;
  }
  const tolerance = opts.toleranceS ?? 300;
  const ts = Number(time);
  const now = (opts.now ?? Date.now)() / 1000;
  if (time === undefined || !Number.isFinite(ts) || Math.abs(now - ts) > tolerance)
    throw refuse(
      'STALE_TIMESTAMP',
      `the delivery's timestamp is missing or more than ${tolerance} s from now: a replay? (D38, D68)`,
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
  /**
   * D65: how long an INTERACTION_CREATE delivery waits for the handler's answer to send it back
   * in the response body (default 2,500 ms; the server waits 10 s for any delivery). A later
   * answer takes the callback route, which works for 15 minutes.
   */
  interactionResponseMs?: number;
}

/**
 * D65: set on an INTERACTION_CREATE envelope during its delivery: a listener (Bot's command
 * handlers) hands its callback `{type, data}` here to have it sent as the response body. Returns
 * false once the response has gone.
 */
export const RESPOND_IN_BODY: unique symbol = Symbol('parley.respondInBody');
export type RespondInBody = (body: { type: number; data?: unknown }) => boolean;

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
    // D38 receivers dedupe on the delivery id (D68: the signed webhook-id, when present).
    const delivery = header(headers, 'webhook-id') ?? header(headers, 'x-service-delivery');
    if (delivery !== undefined && seen.has(delivery))
      return { status: 200, body: '{"ok":true,"duplicate":true}' };
    // D65: an interaction's answer may go back in this response, if it comes in time.
    let answer: { type: number; data?: unknown } | undefined;
    let open = event.type === 'INTERACTION_CREATE';
    let answered: () => void = () => undefined;
    const gotAnswer = new Promise<'answer'>((r) => (answered = () => r('answer')));
    if (open) {
      const respond: RespondInBody = (body) => {
        if (!open) return false;
        open = false;
        answer = body;
        answered();
        return true;
      };
      Object.defineProperty(event, RESPOND_IN_BODY, { value: respond, enumerable: false });
    }
    const all = Promise.all([
      ...emitter.fire(event.type, event.data as never),
      ...emitter.fire('event', event),
    ]);
    let results: boolean[] | undefined;
    if (open) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<'late'>(
        (r) => (timer = setTimeout(() => r('late'), opts.interactionResponseMs ?? 2500)),
      );
      const first = await Promise.race([all, gotAnswer, late]);
      clearTimeout(timer);
      open = false;
      if (Array.isArray(first)) results = first;
      else {
        // Answered (in this body), or still working: its answer will take the callback route.
        if (delivery !== undefined) remember(delivery);
        return { status: 200, body: answer ? JSON.stringify(answer) : '{"ok":true}' };
      }
    } else results = await all;
    // A listener that failed makes the delivery fail: the server tries again (D39).
    if (results.includes(false) && answer === undefined)
      return { status: 500, body: '{"ok":false}' };
    if (delivery !== undefined) remember(delivery);
    return { status: 200, body: answer ? JSON.stringify(answer) : '{"ok":true}' };
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
