import { BotTokenCodec } from './domain/auth/bot-token.js';
import { loadTokenSecret } from './domain/auth/secret.js';
import { Urls, type Domain } from './domain/context.js';
import { LinkPreviews } from './previews/link-previews.js';
import { DerivedCache } from './domain/derived-cache.js';
import { OidcClient } from './domain/oidc/oidc-client.js';
import type { Config } from './config/config.js';
import { openEvents, type EventsRuntime } from './events/runtime.js';
import { systemClock, type Clock } from './ids/clock.js';
import { SnowflakeGenerator } from './ids/snowflake.js';
import { openBlobStore, type BlobStore } from './files/blob-store.js';
import type { RateLimiter } from './ratelimit/limiter.js';
import { createRateLimiter } from './ratelimit/open.js';
import { migrate, openDatabase, type OpenOptions } from './storage/db.js';
import { secureDataDir, type Tightened } from './storage/file-modes.js';
import { Health } from './health/health.js';
import { loadVapidKeys } from './domain/push/vapid.js';
import { PushSender } from './push/sender.js';
import { VisibilityTracker } from './push/visibility.js';

/** Everything the transports (HTTP, gateway, CLI) share, built once from the config. */
export interface Services {
  readonly domain: Domain;
  readonly codec: BotTokenCodec;
  /** D22–D23: uploaded files' bytes */
  readonly blobs: BlobStore;
  /** D25–D27: REST rate-limit buckets (Redis when PARLEY_REDIS_URL is set, else memory) */
  readonly limiter: RateLimiter;
  /** D34–D36: the outbox recorder, the dispatcher and the signals between nodes */
  readonly events: EventsRuntime;
  /** D54: directories and files whose looser modes were tightened at start (serve logs them) */
  readonly tightened: readonly Tightened[];
  /** D72: outages of the database and Redis as this node sees them (logged once each) */
  readonly health: Health;
  /** D66: Web Push: the sender (started by a serving node's gateway) and who has a visible tab */
  readonly push: { readonly sender: PushSender; readonly visibility: VisibilityTracker };
  close(): Promise<void>;
}

export function defaultOrigin(config: Config): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const h = host.includes(':') ? `[${host}]` : host;
  return `${config.tlsCert ? 'https' : 'http'}://${h}:${config.port}`;
}

export async function openServices(
  config: Config,
  opts: OpenOptions & { clock?: Clock } = {},
): Promise<Services> {
  // D54: the data directory 0700 before anything is created in it.
  const dirs = secureDataDir(config.dataDir);
  const health = new Health({ redis: config.redisUrl !== undefined });
  const handle = openDatabase(config.databaseUrl, {
    cacheMib: config.sqliteCacheMib,
    health: health.database,
    ...opts,
  });
  try {
    await migrate(handle.db, handle.dialect);
    const codec = new BotTokenCodec(await loadTokenSecret(handle.db, config.tokenSecret));
    const clock = opts.clock ?? systemClock;
    const ids = new SnowflakeGenerator(config.nodeId, clock);
    // D3: ids keep increasing across restarts even if the clock stepped back meanwhile.
    for (const table of [
      'messages',
      'users',
      'channels',
      'guilds',
      'roles',
      'bots',
      'files',
      'proxied_images',
    ] as const) {
      const row = await handle.db
        .selectFrom(table)
        .select((eb) => eb.fn.max('id').as('max'))
        .executeTakeFirst();
      if (row?.max != null) ids.advancePast(Number(row.max));
    }
    // D36: the domain writes through a handle that tells the outbox when transactions commit.
    const cache = new DerivedCache(handle.version);
    const events = openEvents({
      db: handle.db,
      config,
      ids,
      clock,
      cache,
      dialect: handle.dialect,
      health,
    });
    const blobs = await openBlobStore(config);
    // D71: previews need the domain they serve (events, clock, ids): handed it once it exists
    const previews = new LinkPreviews(
      () => domain,
      blobs,
      config,
      (err) => process.stderr.write(`parley previews: ${String(err)}\n`),
    );
    const origin = config.publicUrl ?? defaultOrigin(config);
    // D66: the VAPID pair, kept like the token secret (configured, or generated once).
    const vapid = await loadVapidKeys(handle.db, config, origin);
    const pushLog = (err: unknown, msg: string): void => {
      if (!health.quiet(err))
        process.stderr.write(
          `parley ${msg}: ${err instanceof Error ? err.message : String(err)}\n`,
        );
    };
    const visibility = new VisibilityTracker({
      nodeId: config.nodeId,
      redisUrl: config.redisUrl,
      log: pushLog,
      ...(health.redis ? { health: health.redis } : {}),
    });
    const push = new PushSender(() => domain, vapid, visibility, {
      policy: {
        allowInsecure: config.webhookAllowInsecure,
        allowPrivate: config.webhookAllowPrivate,
      },
      warn: pushLog,
    });
    const domain: Domain = {
      previews,
      push,
      db: events.db,
      dialect: handle.dialect,
      ids,
      clock,
      urls: new Urls(origin),
      config,
      events: events.recorder,
      people: events.recorder,
      cache,
      // D69: discovery waits for `parley serve` (main.ts warms it up), so CLI commands never call out.
      ...(config.oidcIssuer !== undefined
        ? { oidc: new OidcClient(config, (line) => process.stderr.write(`parley: ${line}\n`)) }
        : {}),
    };
    const limiter = createRateLimiter(config, clock, health);
    return {
      domain,
      codec,
      blobs,
      limiter,
      events,
      health,
      push: { sender: push, visibility },
      tightened: [...dirs, ...handle.tightened],
      close: async () => {
        try {
          await previews.close();
          await push.stop();
          await visibility.stop();
          await events.close();
          await limiter.close();
        } finally {
          await handle.close();
        }
      },
    };
  } catch (err) {
    await handle.close();
    throw err;
  }
}
