import { rateLimitRefused } from '../../metrics/metrics.js';
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Config } from '../../config/config.js';
import { AppError } from '../../errors/app-error.js';
import type { RateLimiter } from '../../ratelimit/limiter.js';
import {
  bucketKey,
  bucketSpec,
  subjectOf,
  type BucketName,
  type Subject,
} from '../../ratelimit/policy.js';
import type { Decision } from '../../ratelimit/token-bucket.js';

export interface RateLimits {
  readonly limiter: RateLimiter;
  readonly config: Pick<Config, 'rateGlobal' | 'rateMessages'>;
}

type Hook = (req: FastifyRequest, reply: FastifyReply) => Promise<void>;
/** A request's step that finishes at once when it can (issue 29); awaited only when pending. */
export type Step = (req: FastifyRequest, reply: FastifyReply) => void | Promise<void>;

/** Seconds with millisecond precision, e.g. `0.2`, `1795000000.125` (D26: may be fractional). */
const seconds = (ms: number): string => String(Math.ceil(ms) / 1000);

/** D26: the headers every limited response carries. */
export function rateLimitHeaders(bucket: BucketName, d: Decision): Record<string, string> {
  return {
    'x-ratelimit-limit': String(d.limit),
    'x-ratelimit-remaining': String(d.remaining),
    'x-ratelimit-reset': seconds(d.atMs + d.resetAfterMs),
    'x-ratelimit-reset-after': seconds(d.resetAfterMs),
    'x-ratelimit-bucket': bucket,
  };
}

const isApiPath = (url: string): boolean => url === '/api/v1' || /^\/api\/v1[/?]/.test(url);

const isAuthFailure = (err: unknown): boolean =>
  err instanceof AppError && err.code === 'UNAUTHORIZED';

type Headers = Record<string, string>;

/**
 * D25–D27: take one request from `subject`'s `bucket`. Returns the D26 headers for the answer
 * (undefined when the operator turned the bucket off), or throws 429 RATE_LIMIT_EXCEEDED (with
 * the headers and Retry-After) when the bucket is empty. (D72: while Redis is down the node's own
 * buckets decide, ratelimit/open.ts; a store that still fails is a 503.)
 * The one way every transport charges a bucket: REST hooks below, failed gateway upgrades
 * (gateway/server.ts, D54). A store that decides at once (one node's memory) answers without a
 * promise (issue 29); failures may be thrown or rejected: callers await it.
 */
export function chargeBucket(
  limits: RateLimits,
  bucket: BucketName,
  subject: Subject,
): Headers | undefined | Promise<Headers | undefined> {
  const spec = bucketSpec(limits.config, bucket);
  if (spec === null) return undefined; // turned off by the operator (D27): no bucket, no headers
  let d: Decision | Promise<Decision>;
  try {
    d = limits.limiter.consume(bucketKey(bucket, subject), spec);
  } catch (err) {
    throw storeFailed(err);
  }
  return d instanceof Promise
    ? d.then(
        (v) => decided(bucket, v),
        (err: unknown) => {
          throw storeFailed(err);
        },
      )
    : decided(bucket, d);
}

/**
 * The store itself failed (the Redis store falls back to memory first): refuse rather than go
 * unlimited, and say it is temporary (503 + Retry-After) instead of an internal error.
 */
const storeFailed = (err: unknown): AppError =>
  new AppError('SERVICE_UNAVAILABLE', 'Rate limiting is temporarily unavailable; retry shortly', {
    retryAfter: 1,
    headers: { 'retry-after': '1' },
    cause: err,
  });

function decided(bucket: BucketName, d: Decision): Headers {
  const headers = rateLimitHeaders(bucket, d);
  if (!d.allowed) {
    rateLimitRefused(bucket); // D53
    const retryAfter = d.retryAfterMs / 1000;
    throw new AppError(
      'RATE_LIMIT_EXCEEDED',
      `Rate limit exceeded (bucket "${bucket}"); retry after ${retryAfter} s`,
      // D26: Retry-After in whole seconds, rounded up; retryAfter in the body is exact.
      { retryAfter, headers: { ...headers, 'retry-after': String(Math.ceil(retryAfter)) } },
    );
  }
  return headers;
}

/**
 * D25–D26 for /api/v1, as onRequest hooks: they run before the body is read, so a refused upload
 * or message is never parsed, let alone stored (a rejected request has no effect at all).
 *
 * `routed` replaces the plain authentication hook of the /api/v1 scope: authentication comes
 * first, so only a caller that proved who it is can spend a bot's (or person's) budget; a request
 * that fails authentication is charged to its client address with the `global` figures instead
 * (D26), and is refused with 429 rather than 401 once that bucket is empty, which also throttles
 * token guessing. `unrouted` gives 404/405 answers under /api/v1 the same treatment: they are
 * /api/v1 responses too, and are charged to the caller (or its address) in `global`, without
 * turning an unknown route into a 401.
 */
export function apiRateLimit(
  limits: RateLimits,
  authenticate: Step,
): { routed: onRequestHookHandler; unrouted: Hook } {
  const charge = (
    reply: FastifyReply,
    bucket: BucketName,
    subject: Subject,
  ): void | Promise<void> => {
    const headers = chargeBucket(limits, bucket, subject);
    if (headers instanceof Promise)
      return headers.then((h) => {
        if (h) reply.headers(h);
      });
    if (headers) reply.headers(headers);
  };

  const address = (req: FastifyRequest): Subject => ({ kind: 'address', ip: req.ip });

  /** A failed authentication: the address pays (429 once its bucket is empty), then `err`. */
  const refused = async (
    req: FastifyRequest,
    reply: FastifyReply,
    err: unknown,
  ): Promise<never> => {
    if (isAuthFailure(err)) await charge(reply, 'global', address(req));
    throw err;
  };

  const steps = (req: FastifyRequest, reply: FastifyReply): void | Promise<void> => {
    // D45: routes that take no session (register, login, invite preview): the address pays.
    if (req.routeOptions.config.public === true) return charge(reply, 'global', address(req));
    // Routes under /api/v1 only run authenticated; the check keeps the types honest.
    const bucketOf = (): void | Promise<void> =>
      req.principal
        ? charge(reply, req.routeOptions.config.bucket ?? 'global', subjectOf(req.principal))
        : undefined;
    let authed: void | Promise<void>;
    try {
      authed = authenticate(req, reply);
    } catch (err) {
      return refused(req, reply, err);
    }
    return authed instanceof Promise
      ? authed.then(bucketOf, (err: unknown) => refused(req, reply, err))
      : bucketOf();
  };

  // Callback style, finished at once when every step did (a cached bot, one node's buckets): an
  // async hook would cost each request promises and turns of the microtask queue (issue 29).
  const routed: onRequestHookHandler = (req, reply, done) => {
    let pending: void | Promise<void>;
    try {
      pending = steps(req, reply);
    } catch (err) {
      done(err as Error);
      return;
    }
    if (pending instanceof Promise) pending.then(() => done(), done);
    else done();
  };

  const unrouted: Hook = async (req, reply) => {
    if (!req.is404 || !isApiPath(req.url) || limits.config.rateGlobal === null) return;
    try {
      await authenticate(req, reply);
    } catch (err) {
      if (!isAuthFailure(err)) throw err;
    }
    await charge(reply, 'global', req.principal ? subjectOf(req.principal) : address(req));
  };

  return { routed, unrouted };
}
