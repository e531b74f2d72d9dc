import { isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import { AppError } from '../../errors/app-error.js';
import { sql } from '../../storage/db.js';
import { metricsContentType, renderMetrics } from '../../metrics/metrics.js';
import { isAdminBearer } from '../plugins/auth.js';
import type { AppDeps } from '../app.js';

/**
 * D53: probes and metrics, outside every API prefix and rate limit. Their request logs are at
 * `warn` so a load balancer polling them does not fill the info log (issue #13, logs).
 *
 *  - /healthz: 200 while the process serves (liveness).
 *  - /readyz: 200 when the database answers; 503 while starting, while draining after SIGTERM
 *    (a load balancer stops sending before the gateway closes) and, D72, while the database
 *    cannot be reached (`failing: "database"`). Redis is a hint, not a dependency (D72, revises
 *    D53): while it is down the node keeps serving, so /readyz stays 200 and says
 *    `degraded: ["redis"]`.
 *  - /metrics: Prometheus text, for loopback clients or the admin token; anyone else gets the
 *    404 of a route that does not exist.
 */
export type Phase = 'starting' | 'ready' | 'draining';

/** Where the node is in its life; main.ts moves it, tests' apps are ready from the start. */
export interface Lifecycle {
  phase: Phase;
}

const PROBE_TIMEOUT_MS = 2000;

export function installOps(app: FastifyInstance, deps: AppDeps): void {
  const quiet = { logLevel: 'warn' as const, schema: { hide: true } };
  app.get('/healthz', quiet, async () => ({ ok: true }));

  const health = deps.health;
  app.get('/readyz', quiet, async (_req, reply) => {
    const phase = deps.lifecycle?.phase ?? 'ready';
    if (phase !== 'ready') return reply.code(503).send({ ready: false, phase });
    try {
      await withTimeout(sql`select 1`.execute(deps.domain.db));
    } catch {
      return reply.code(503).send({ ready: false, phase, failing: 'database' });
    }
    health?.database.reachable();
    // Redis's state as this node's own clients see it (health/health.ts): no probe of its own.
    if (health?.redis?.isDown) return { ready: true, phase, degraded: ['redis'] };
    return { ready: true, phase };
  });

  const adminToken = deps.domain.config.adminToken;
  app.get('/metrics', quiet, async (req, reply) => {
    const allowed =
      isLoopbackClient(req) ||
      (adminToken !== undefined && isAdminBearer(req.headers.authorization, adminToken));
    // Same answer as an unknown route: the series are not advertised to strangers.
    if (!allowed) throw new AppError('NOT_FOUND', 'No route GET /metrics');
    return reply.header('content-type', metricsContentType).send(await renderMetrics());
  });
}

/**
 * A loopback TCP peer that did not come through a proxy: a reverse proxy on the same machine
 * connects from 127.0.0.1 for everyone, so a request that carries forwarding headers is not
 * a local client, whatever its peer address.
 */
function isLoopbackClient(req: FastifyRequest): boolean {
  if (req.headers['x-forwarded-for'] !== undefined || req.headers['forwarded'] !== undefined)
    return false;
  const addr = req.socket.remoteAddress ?? '';
  if (!isIP(addr)) return false;
  const parsed = ipaddr.process(addr);
  return parsed.range() === 'loopback';
}

async function withTimeout<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('probe timed out')), PROBE_TIMEOUT_MS);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
