import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Config } from './config/config.js';
import { sweepOrphanBlobs } from './domain/files/files.service.js';
import { startRetention } from './domain/retention.js';
import { buildApp } from './http/app.js';
import { openServices } from './services.js';
import { WebhookWorker } from './webhooks/worker.js';

/**
 * `parley serve`: read config → build dependencies → listen; graceful shutdown on SIGTERM/SIGINT.
 */
export async function serve(config: Config): Promise<void> {
  const services = await openServices(config).catch((err: unknown) => {
    // D42: say which setting to look at, in one line.
    throw new Error(
      `cannot open the database (PARLEY_DATABASE_URL): ${err instanceof Error ? err.message : String(err)}`,
    );
  });
  const https =
    config.tlsCert && config.tlsKey
      ? { cert: readFileSync(config.tlsCert), key: readFileSync(config.tlsKey) }
      : undefined;
  // D39: deliveries are durable rows; the worker picks up what a previous run left pending.
  const webhooks = new WebhookWorker(services.domain);
  services.events.onWebhooks(() => webhooks.wake());
  const app = await buildApp(
    { ...services, webhooks },
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
  await app.listen({ host: config.host, port: config.port });
  webhooks.start();
  // Disk held by uploads a crash interrupted (files.service.ts): at start, then hourly.
  const sweep = (): void => {
    sweepOrphanBlobs(services.domain, services.blobs)
      .then((n) => {
        if (n > 0) app.log.info({ removed: n }, 'removed blobs no file refers to');
      })
      .catch((err: unknown) => app.log.warn({ err }, 'orphan blob sweep failed'));
  };
  sweep();
  const sweeper = setInterval(sweep, 3_600_000);
  sweeper.unref();
  // D53: finished webhook deliveries and old upload counters, at start, then hourly.
  const retention = startRetention(services.domain, app.log);
  const addr = app.server.address() as AddressInfo;
  if (config.publicUrl === undefined && config.port === 0) {
    const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
    services.domain.urls.setOrigin(`${https ? 'https' : 'http'}://${host}:${addr.port}`);
  }
  const u = services.domain.urls;
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
      '',
    ].join('\n'),
  );

  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    clearInterval(sweeper);
    retention.stop();
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    app
      .close()
      .then(() => webhooks.stop())
      .then(() => services.close())
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      });
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}
