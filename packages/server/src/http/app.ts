import type { Services } from '../services.js';
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { BotTokenCodec } from '../domain/auth/bot-token.js';
import type { Domain } from '../domain/context.js';
import type { EventsRuntime } from '../events/runtime.js';
import { installGateway } from '../gateway/server.js';
import type { BlobStore } from '../files/blob-store.js';
import type { RateLimiter } from '../ratelimit/limiter.js';
import { Health } from '../health/health.js';
import fastifyCookie from '@fastify/cookie';
import { adminAuth, botAuth } from './plugins/auth.js';
import { personAuth } from './plugins/person-auth.js';
import { operatorLog } from './plugins/operator-log.js';
import { appRoutes } from './routes/app/index.js';
import {
  clientErrorHandler,
  frameworkErrors,
  installErrorHandler,
} from './plugins/error-handler.js';
import { lazyChildLogger } from './lazy-child-logger.js';
import { lazySerializerFactory } from './lazy-compilers.js';
import { REDACT_PATHS, requestSerializer } from './log-redaction.js';
import { installJsonParser, JSON_BODY_LIMIT } from './plugins/json-body.js';
import { installNotFound } from './plugins/not-found.js';
import { apiRateLimit } from './plugins/rate-limit.js';
import { installValidation } from './plugins/validation.js';
import { installDocs } from './openapi.js';
import { ErrorBodyShared } from './schemas.js';
import { adminRoutes } from './routes/admin.routes.js';
import { botRoutes } from './routes/bot.routes.js';
import { cdnRoutes } from './routes/cdn.routes.js';
import { channelRoutes } from './routes/channels.routes.js';
import { commandRoutes } from './routes/commands.routes.js';
import { interactionRoutes } from './routes/interactions.routes.js';
import { dmRoutes } from './routes/dm.routes.js';
import { fileRoutes } from './routes/files.routes.js';
import { guildAdminRoutes } from './routes/guild-admin.routes.js';
import { memberRoutes } from './routes/members.routes.js';
import { messageRoutes } from './routes/messages.routes.js';
import { searchRoutes } from './routes/search.routes.js';
import { reactionRoutes } from './routes/reactions.routes.js';
import { installOps, type Lifecycle } from './routes/ops.routes.js';
import { httpRequest } from '../metrics/metrics.js';
import { webRoutes } from './routes/web.routes.js';

export interface AppDeps {
  readonly domain: Domain;
  readonly codec: BotTokenCodec;
  readonly blobs: BlobStore;
  readonly limiter: RateLimiter;
  /** D28–D36: events for the gateway (served on this same port, D1) */
  readonly events: EventsRuntime;
  /** the webhook worker, woken when a route enqueues a delivery (absent in tools and tests) */
  readonly webhooks?: { wake(): void } | undefined;
  /** D53: starting / ready / draining, for /readyz (absent: ready, as in tests) */
  readonly lifecycle?: Lifecycle | undefined;
  /** D72: database and Redis outages (Services.health; absent in tools: a fresh one) */
  readonly health?: Health | undefined;
  /** D66: Web Push (Services.push; absent in tools: no pushes, no VAPID key route) */
  readonly push?: Services['push'] | undefined;
}

export interface AppOptions {
  logger?: FastifyServerOptions['logger'];
  https?: { cert: Buffer; key: Buffer };
  /** the built web app (D55); default packages/web/dist */
  webDir?: string;
}

export type ApiPlugin = FastifyPluginAsyncTypebox<{ deps: AppDeps }>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** D25: which rate-limit bucket a route charges (default "global"). */
    bucket?: 'global' | 'messages';
    /** D45: an /app/v1 route that needs no session (register, login, invite preview) */
    public?: true;
  }
}

/** D70: the APIs (bots', people's, operator's), whose every answer is `Cache-Control: no-store`. */
const NO_STORE_PREFIX = /^\/(api|app|admin)(\/|\?|$)/;

/**
 * The Fastify instance, never listening: main.ts listens, tests use inject() (docs/architecture.md).
 */
export async function buildApp(given: AppDeps, opts: AppOptions = {}): Promise<FastifyInstance> {
  const deps: AppDeps = {
    ...given,
    health: given.health ?? new Health({ redis: given.domain.config.redisUrl !== undefined }),
  };
  const logger = opts.logger === undefined ? false : opts.logger;
  const timeouts = requestTimeouts(deps.domain.config.requestTimeoutMs);
  const app = Fastify({
    // D54: log lines never carry the Authorization header, tokens, session ids or passwords.
    logger:
      typeof logger === 'object' && logger !== null
        ? {
            ...logger,
            redact: REDACT_PATHS,
            serializers: { ...logger.serializers, req: requestSerializer },
          }
        : logger,
    // D54: Node's own timers cut a request that has not fully arrived (its parser's
    // ERR_HTTP_REQUEST_TIMEOUT → clientErrorHandler → 408 in the D5 form, connection closed).
    ...(opts.https ? { https: { ...opts.https, ...timeouts } } : { http: timeouts }),
    requestTimeout: timeouts.requestTimeout,
    // a socket with nothing moving either way (a client that stopped reading) goes too
    connectionTimeout: timeouts.requestTimeout * 4,
    bodyLimit: JSON_BODY_LIMIT,
    // D5–D7: routing errors (bad percent-encoding, over-long path parameter) in our form too.
    frameworkErrors,
    clientErrorHandler,
    // D7: every response carries X-Request-Id; ours, never the client's (logs stay trustworthy).
    genReqId: () => randomUUID(),
    // a request's pino child is made when it first logs (http/lazy-child-logger.ts)
    childLoggerFactory: lazyChildLogger,
    // response serializers compiled on a route's first answer (http/lazy-compilers.ts)
    schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory } },
    requestIdHeader: false,
    return503OnClosing: true,
    forceCloseConnections: true,
    // D25: unauthenticated requests are limited per client address; behind a proxy that address
    // is only known from X-Forwarded-For, believed as far as the operator says.
    trustProxy: trustProxyOption(deps.domain.config.trustProxy),
  });

  app.decorateRequest('principal', null);
  // These two hooks run on every request: callback style, as an async hook costs each request a
  // promise and a turn of the microtask queue (issue 29).
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    // D70: API answers carry tokens, secrets and people's own data: no cache (a shared
    // computer's browser, a proxy) keeps them. Errors included: they are answers of the API.
    if (NO_STORE_PREFIX.test(req.url)) reply.header('cache-control', 'no-store');
    done();
  });
  // D53: requests by route TEMPLATE (never the raw URL: ids would make unbounded series).
  app.addHook('onResponse', (req, reply, done) => {
    httpRequest(
      req.method,
      req.routeOptions.url ?? 'unmatched',
      reply.statusCode,
      reply.elapsedTime,
    );
    done();
  });
  installValidation(app);
  app.addSchema(ErrorBodyShared);
  installJsonParser(app);
  installErrorHandler(app);
  installNotFound(app);
  // D47/D70: the session cookie is read under /app/v1 and /api/v1 alike (and for 404s there).
  await app.register(fastifyCookie);
  // D25–D26: authentication, then the caller's bucket; before any body is read (onRequest).
  const limited = apiRateLimit(
    { limiter: deps.limiter, config: deps.domain.config },
    botAuth(deps),
  );
  // 404/405 under /api/v1 carry the headers too; a routed request passes without a promise
  app.addHook('onRequest', (req, reply, done) => {
    if (!req.is404) return done();
    limited.unrouted(req, reply).then(() => done(), done);
  });

  // /openapi.json and /docs, their libraries loaded on first use; before every other route.
  installDocs(app, deps.domain.urls.origin);
  installOps(app, deps); // /healthz, /readyz, /metrics (D53)

  await app.register(
    async (api) => {
      api.addHook('onRequest', limited.routed); // = botAuth, then the bucket
      for (const routes of [
        botRoutes,
        messageRoutes,
        reactionRoutes,
        channelRoutes,
        memberRoutes,
        dmRoutes,
        fileRoutes,
        // D59: guild administration for a bot's token or a person's session, as under /app/v1
        guildAdminRoutes,
        commandRoutes,
        interactionRoutes,
        // D67
        searchRoutes,
      ]) {
        await api.register(routes, { deps });
      }
    },
    { prefix: '/api/v1' },
  );

  // D45: the people's API. Same error form, ids and body limits; the person's own `global`
  // bucket, or the client address's for the routes that take no session.
  const people = apiRateLimit(
    { limiter: deps.limiter, config: deps.domain.config },
    personAuth(deps),
  );
  await app.register(
    async (scope) => {
      scope.addHook('onRequest', people.routed);
      for (const routes of appRoutes) await scope.register(routes, { deps });
    },
    { prefix: '/app/v1' },
  );

  // D41: without an admin token the operator API does not exist — not even as a 405 with an
  // Allow header (the 405 logic sees every registered route), so its routes are not registered.
  if (deps.domain.config.adminToken !== undefined)
    await app.register(
      async (admin) => {
        admin.addHook(
          'onRequest',
          adminAuth(deps.domain.config.adminToken, {
            limiter: deps.limiter,
            config: deps.domain.config,
          }),
        );
        // D60: the operator's own log of every change
        admin.addHook('onSend', operatorLog(deps.domain));
        await admin.register(adminRoutes, { deps });
      },
      { prefix: '/admin/v1' },
    );

  await app.register(cdnRoutes, { prefix: '/cdn', deps });
  installGateway(app, deps);
  await app.register(webRoutes, { deps, dir: opts.webDir }); // D55: the web app at /
  return app;
}

/**
 * D54: the whole request (headers and body) must arrive within `ms` of its first byte, so a
 * client that sends headers and then stalls — or never finishes its headers — cannot hold a
 * connection. Node checks pending requests every `connectionsCheckingInterval`; at most a tenth
 * of the timeout (and never more than a second) keeps the cut close to the stated time.
 */
export function requestTimeouts(ms: number): {
  requestTimeout: number;
  headersTimeout: number;
  connectionsCheckingInterval: number;
} {
  return {
    requestTimeout: ms,
    headersTimeout: ms,
    connectionsCheckingInterval: Math.max(10, Math.min(1000, Math.floor(ms / 10))),
  };
}

/** A hop count is "trust the first n proxies" (proxy-addr counts hops from the TCP peer). */
function trustProxyOption(t: boolean | number | string): boolean | string | TrustHop {
  return typeof t === 'number' ? (_addr: string, hop: number) => hop < t : t;
}
type TrustHop = (addr: string, hop: number) => boolean;
