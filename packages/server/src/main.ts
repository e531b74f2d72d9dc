import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { ConfigError, type Config } from './config/config.js';
import { recordOrigin } from './domain/server-origin.js';
import { sweepOrphanBlobs } from './domain/files/files.service.js';
import { startRetention } from './domain/retention.js';
import { buildApp } from './http/app.js';
import type { Lifecycle } from './http/routes/ops.routes.js';
import { openServices, type Services } from './services.js';
import { isDatabaseMisconfigured, isDatabaseUnreachable } from './storage/unreachable.js';
import { DatabaseNewerError } from './storage/schema-version.js';
import { claimServerLock, refuseIfRunning } from './storage/server-lock.js';
import { WebhookWorker } from './webhooks/worker.js';

/**
 * `parley serve`: read config → build dependencies → listen; graceful shutdown on SIGTERM/SIGINT.
 */
export async function serve(config: Config): Promise<void> {
  // D53: /readyz is 503 until everything below is up, and again while draining.
  const lifecycle: Lifecycle = { phase: 'starting' };
  // Issue 21: a second server on the same SQLite database refuses before opening anything.
  refuseIfRunning(config.databaseUrl);
  const services = await openServicesPatiently(config).catch((err: unknown) => {
    // Issue 28: a database a newer release wrote says so itself (which version, what to do).
    if (err instanceof DatabaseNewerError || err instanceof ConfigError) throw err;
    // D42: say which setting to look at, in one line.
    throw new Error(
      `cannot open the database (PARLEY_DATABASE_URL): ${err instanceof Error ? err.message : String(err)}`,
    );
  });
  const health = services.health;
  // `parley restore` and a second server refuse while this lock names a live process (SQLite).
  let lock: { release(): void };
  try {
    lock = claimServerLock(config.databaseUrl);
  } catch (err) {
    await services.close();
    throw err;
  }
  const https =
    config.tlsCert && config.tlsKey
      ? { cert: readFileSync(config.tlsCert), key: readFileSync(config.tlsKey) }
      : undefined;
  // D39: deliveries are durable rows; the worker picks up what a previous run left pending.
  let logFailure = (_o: object): void => {};
  let warn = (_err: unknown, _msg: string): void => {};
  const webhooks = new WebhookWorker(services.domain, {
    logFailure: (o) => logFailure(o),
    warn: (err, msg) => warn(err, msg),
  });
  services.events.onWebhooks(() => webhooks.wake());
  const app = await buildApp(
    { ...services, webhooks, lifecycle },
    {
      logger: { level: config.logLevel },
      ...(https ? { https } : {}),
    },
  );
  // D54: say what was readable by others before this start.
  for (const t of services.tightened)
    app.log.warn(
      { path: t.path, from: `0${t.from.toString(8)}`, to: `0${t.to.toString(8)}` },
      'tightened the mode of a data file or directory: it was readable by other local accounts',
    );
  logFailure = (o) => app.log.info(o, 'webhook try failed');
  // D72: an outage is logged when it begins and when it ends (health/health.ts); what fails
  // meanwhile in background loops is part of it, not a line each.
  health.setLog((fields, msg) => app.log.warn(fields, msg));
  warn = (err, msg) => {
    if (!health.quiet(err)) app.log.warn({ err }, msg);
  };
  await app.listen({ host: config.host, port: config.port });
  webhooks.start();
  // D69: the OpenID provider's discovery starts now; a provider that is down only delays sign-ins.
  services.domain.oidc?.setWarn((line) => app.log.warn(line));
  services.domain.oidc?.warmUp();
  lifecycle.phase = 'ready';
  // Disk held by uploads a crash interrupted (files.service.ts): at start, then hourly.
  const sweep = (): void => {
    sweepOrphanBlobs(services.domain, services.blobs)
      .then((n) => {
        if (n > 0) app.log.info({ removed: n }, 'removed blobs no file refers to');
      })
      .catch((err: unknown) => warn(err, 'orphan blob sweep failed'));
  };
  sweep();
  const sweeper = setInterval(sweep, 3_600_000);
  sweeper.unref();
  // D53: finished webhook deliveries and old upload counters, at start, then hourly.
  const retention = startRetention(services.domain, {
    info: (o, msg) => app.log.info(o, msg),
    warn: (o: { err?: unknown }, msg: string) => {
      if (!health.quiet(o.err)) app.log.warn(o, msg);
    },
  });
  const addr = app.server.address() as AddressInfo;
  if (config.publicUrl === undefined && config.port === 0) {
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    services.domain.urls.setOrigin(`${https ? 'https' : 'http'}://${host}:${addr.port}`);
  }
  const u = services.domain.urls;
  // Issue 28: where this server answers, for commands run beside it (`parley seed --demo` prints
  // links to it, not to the default port).
  await recordOrigin(services.domain, u.origin).catch((err: unknown) =>
    warn(err, 'could not record the server origin'),
  );
  // D43: say where everything is.
  process.stdout.write(
    [
      `Parley is running (${services.domain.dialect}, node ${config.nodeId})`,
      `  Web app  ${u.origin}/`,
      `  API      ${u.api}`,
      `  Gateway  ${u.gateway}`,
      `  CDN      ${u.cdn}`,
      `  Docs     ${u.origin}/docs   (OpenAPI: ${u.origin}/openapi.json)`,
      `  Operator ${config.adminToken ? `${u.origin}/admin/v1` : 'disabled (set PARLEY_ADMIN_TOKEN)'}`,
      `  Data     ${config.dataDir}${services.domain.dialect === 'sqlite' ? ` (${config.databaseUrl.slice('sqlite:'.length)})` : ''}`,
      `  Health   ${u.origin}/healthz, ${u.origin}/readyz, ${u.origin}/metrics (loopback or admin token)`,
      ...startWarnings(config),
      '',
    ].join('\n'),
  );

  let closing = false;
  const shutdown = (signal: string, drainMs: number) => {
    if (closing) return;
    closing = true;
    clearInterval(sweeper);
    retention.stop();
    // D53: first /readyz turns 503 so the load balancer stops sending new requests and
    // connections here; after the drain delay the gateway tells its clients op 7 (reconnect,
    // elsewhere) and the node stops.
    lifecycle.phase = 'draining';
    app.log.info({ signal, drainMs }, 'draining: /readyz answers 503');
    const force = setTimeout(() => process.exit(1), drainMs + 10_000);
    force.unref();
    new Promise((resolve) => setTimeout(resolve, drainMs))
      .then(() => {
        app.log.info({ signal }, 'shutting down');
        return app.close();
      })
      .then(() => webhooks.stop())
      .then(() => services.close())
      .then(() => lock.release())
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  // SIGTERM comes from a supervisor (systemd, an orchestrator): drain. Ctrl-C (SIGINT) is a
  // person at a terminal: stop at once (op 7 still goes out).
  process.once('SIGTERM', () => shutdown('SIGTERM', config.drainMs));
  process.once('SIGINT', () => shutdown('SIGINT', 0));
}

/** D72: the longest wait between two attempts to reach the database at start. */
const START_RETRY_MAX_MS = 5_000;

/**
 * D72: a node started while PostgreSQL cannot be reached (refused, not accepting connections, a
 * failover under way) waits for it instead of exiting — one line when it starts waiting, one
 * when it got through, retries with backoff in between. Anything else (a bad URL, wrong
 * credentials, a database that does not exist, a failed migration, SQLite) fails at once as
 * before.
 */
async function openServicesPatiently(config: Config): Promise<Services> {
  let waitMs = 250;
  let since: number | undefined;
  for (;;) {
    try {
      const services = await openServices(config);
      if (since !== undefined)
        process.stderr.write(
          `parley: the database answers after ${((performance.now() - since) / 1000).toFixed(1)} s; starting\n`,
        );
      return services;
    } catch (err) {
      if (
        config.databaseUrl.startsWith('sqlite:') ||
        !isDatabaseUnreachable(err) ||
        isDatabaseMisconfigured(err)
      )
        throw err;
      if (since === undefined) {
        since = performance.now();
        process.stderr.write(
          `parley: waiting for the database (PARLEY_DATABASE_URL): ${err instanceof Error ? err.message : String(err)}\n`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, waitMs));
      waitMs = Math.min(waitMs * 2, START_RETRY_MAX_MS);
    }
  }
}

/** Settings that weaken D37's protection, said where the operator looks at start. */
export function startWarnings(config: Config): string[] {
  const out: string[] = [];
  if (config.webhookAllowInsecure)
    out.push(
      '  WARNING  PARLEY_WEBHOOK_ALLOW_INSECURE is on: webhooks may be sent over plain http://',
    );
  if (config.webhookAllowPrivate)
    out.push(
      '  WARNING  PARLEY_WEBHOOK_ALLOW_PRIVATE is on: webhooks may reach loopback and private addresses',
    );
  return out;
}
