import { randomFillSync } from 'node:crypto';
import type { DeliveryDetail } from '@parley/protocol';
import { AppError, invalid, notFound } from '../errors/app-error.js';
import { iso, type Clock } from '../ids/clock.js';
import type { SnowflakeGenerator } from '../ids/snowflake.js';
import { webhookBody } from '../events/serialize.js';
import type { Domain } from '../domain/context.js';
import { newWebhookSecret } from '../domain/bots/bots.service.js';
import type { DerivedCache } from '../domain/derived-cache.js';
import type { Db } from '../storage/db.js';
import type { WebhookDeliveriesTable } from '../storage/schema-webhooks.js';
import { checkTarget, UnsafeTargetError, type TargetPolicy } from './ssrf-guard.js';

/** D41: a delivery as the operator API and the console show it. */
export interface DeliveryView {
  id: number;
  deliveryId: string;
  type: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  lastLatencyMs: number | null;
  nextAttemptAt: string | null;
  createdAt: string;
}

/** D40: the console's "send a test event" type; not one of the eight bot events. */
export const TEST_EVENT_TYPE = 'WEBHOOK_TEST';

export const policyOf = (d: Domain): TargetPolicy => ({
  allowInsecure: d.config.webhookAllowInsecure,
  allowPrivate: d.config.webhookAllowPrivate,
});

const view = (r: WebhookDeliveriesTable): DeliveryView => ({
  id: r.id,
  deliveryId: r.delivery_id,
  type: r.event_type,
  state: r.state,
  attempts: r.attempts,
  lastStatus: r.last_status,
  lastError: r.last_error,
  lastLatencyMs: r.last_latency_ms,
  nextAttemptAt:
    r.state === 'pending' && r.next_attempt_at !== null ? iso(r.next_attempt_at) : null,
  createdAt: iso(r.created_at),
});

async function requireBot(d: Domain, botId: number) {
  const bot = await d.db
    .selectFrom('bots')
    .select(['id', 'webhook_url', 'webhook_secret'])
    .where('id', '=', botId)
    .executeTakeFirst();
  if (!bot) throw notFound('bot');
  return bot;
}

/** D37 + D41: set the address after checking it; answers the bot's current secret. */
export async function setWebhook(
  d: Domain,
  botId: number,
  url: string,
): Promise<{ url: string; secret: string }> {
  const bot = await requireBot(d, botId);
  let checked: URL;
  try {
    checked = await checkTarget(url, policyOf(d));
  } catch (err) {
    if (err instanceof UnsafeTargetError) throw invalid('url', err.message);
    throw err;
  }
  await d.db
    .updateTable('bots')
    .set({ webhook_url: checked.href })
    .where('id', '=', botId)
    .execute();
  return { url: checked.href, secret: bot.webhook_secret };
}

/** Removing the address stops new deliveries; pending ones fail at their next try. */
export async function deleteWebhook(d: Domain, botId: number): Promise<void> {
  await requireBot(d, botId);
  await d.db.updateTable('bots').set({ webhook_url: null }).where('id', '=', botId).execute();
}

/** D38/D41: rotation — the new secret signs every try from now on (it is read at each try). */
export async function rotateWebhookSecret(d: Domain, botId: number): Promise<{ secret: string }> {
  await requireBot(d, botId);
  const secret = newWebhookSecret();
  await d.db.updateTable('bots').set({ webhook_secret: secret }).where('id', '=', botId).execute();
  return { secret };
}

const entropy = Buffer.alloc(4096);
let entropyAt = entropy.length;

/**
 * D38: `X-Service-Delivery` — a unique id, the same on every retry. A UUID of version 7 (RFC
 * 9562: 48 bits of Unix milliseconds, then 74 random bits) rather than 4: it is as unique, and
 * ids made close in time sort close together, so each enqueue adds to the end of the unique index
 * on `delivery_id` instead of dirtying a random page of it per row (issue #6: every send commits
 * these rows; random inserts into that index were a large part of the commit's cost).
 */
export function newDeliveryId(nowMs: number): string {
  // Random bytes come from a pool refilled 4 KiB at a time (one call per ~400 ids, not per id).
  if (entropyAt + 10 > entropy.length) {
    randomFillSync(entropy);
    entropyAt = 0;
  }
  const b = Buffer.allocUnsafe(16);
  b.writeUIntBE(nowMs, 0, 6);
  entropy.copy(b, 6, entropyAt, entropyAt + 10);
  entropyAt += 10;
  b[6] = (b[6]! & 0x0f) | 0x70; // version 7
  b[8] = (b[8]! & 0x3f) | 0x80; // variant 10
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * D36/D39: inside the event's own transaction, one durable delivery per recipient bot that has a
 * webhook. `body` is the envelope as serialized once by the events area (events/serialize.ts):
 * those exact bytes are what every try signs and sends.
 */
/** The cache key of a recipient list, built once per list the derived cache hands out. */
const webhookKeys = new WeakMap<readonly number[], string>();
function webhookKey(botIds: readonly number[]): string {
  let key = webhookKeys.get(botIds);
  if (key === undefined) webhookKeys.set(botIds, (key = `webhook-bots:${botIds.join(',')}`));
  return key;
}

export function enqueueDeliveries(
  trx: Db,
  o: { ids: SnowflakeGenerator; clock: Clock; cache?: DerivedCache },
  type: string,
  /** the delivery's body, or how to make it: built only when some recipient has an address */
  body: string | (() => string),
  botIds: readonly number[],
  /** a version from cache.now() shared with the caller's other lookups */
  version?: number,
): number | Promise<number> {
  if (botIds.length === 0) return 0;
  const load = () =>
    trx
      .selectFrom('bots')
      .select('id')
      .where('id', 'in', [...botIds])
      .where('webhook_url', 'is not', null)
      .execute();
  // Which recipients have an address: read on every event, changed only by writes to `bots`,
  // which move the cache's version (domain/derived-cache.ts). Cached and empty (bots on the
  // gateway only), the answer is known at once, without a promise (issue 29: every send asks).
  const bots = o.cache ? o.cache.get(webhookKey(botIds), load, version) : load();
  if (!(bots instanceof Promise))
    return bots.length === 0 ? 0 : insertDeliveries(trx, o, type, body, bots);
  return bots.then((b) => (b.length === 0 ? 0 : insertDeliveries(trx, o, type, body, b)));
}

async function insertDeliveries(
  trx: Db,
  o: { ids: SnowflakeGenerator; clock: Clock },
  type: string,
  body: string | (() => string),
  bots: ReadonlyArray<{ id: number }>,
): Promise<number> {
  const now = o.clock.now();
  const text = typeof body === 'string' ? body : body();
  await trx
    .insertInto('webhook_deliveries')
    .values(
      bots.map((b) => ({
        id: o.ids.next(),
        delivery_id: newDeliveryId(now),
        bot_id: b.id,
        event_type: type,
        body: text,
        state: 'pending' as const,
        attempts: 0,
        next_attempt_at: now,
        locked_until: null,
        locked_by: null,
        last_status: null,
        last_error: null,
        last_latency_ms: null,
        created_at: now,
        updated_at: now,
      })),
    )
    .execute();
  return bots.length;
}

/** D40/D41/D50: the bot's recent deliveries, newest first; only those in `state` when given. */
export async function listDeliveries(
  d: Domain,
  botId: number,
  opts: { limit?: number; state?: DeliveryView['state'] | undefined } = {},
): Promise<{ deliveries: DeliveryView[] }> {
  await requireBot(d, botId);
  let q = d.db.selectFrom('webhook_deliveries').selectAll().where('bot_id', '=', botId);
  if (opts.state !== undefined) q = q.where('state', '=', opts.state);
  const rows = await q
    .orderBy('id', 'desc')
    .limit(opts.limit ?? 100)
    .execute();
  return { deliveries: rows.map(view) };
}

/** D50: one delivery with every try: when, HTTP status, latency, error, the answer's first 4 KiB. */
export async function getDelivery(d: Domain, botId: number, id: number): Promise<DeliveryDetail> {
  const row = await d.db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('id', '=', id)
    .where('bot_id', '=', botId)
    .executeTakeFirst();
  if (!row) throw notFound('delivery');
  const tries = await d.db
    .selectFrom('webhook_attempts')
    .selectAll()
    .where('delivery_row_id', '=', id)
    .orderBy('attempt', 'asc')
    .execute();
  const { attempts: _count, ...rest } = view(row);
  return {
    ...rest,
    attempts: tries.map((t) => ({
      at: iso(Number(t.at)),
      status: t.status,
      latencyMs: t.latency_ms,
      error: t.error,
      responseBody: t.response_body,
    })),
  };
}

/** D39/D41: one more try now, under the same delivery id. */
export async function redeliver(d: Domain, botId: number, id: number): Promise<DeliveryView> {
  const now = d.clock.now();
  // A delivery that is still pending is going to be tried anyway: it is left as it is.
  await d.db
    .updateTable('webhook_deliveries')
    .set({
      state: 'pending',
      next_attempt_at: now,
      locked_until: null,
      locked_by: null,
      updated_at: now,
    })
    .where('id', '=', id)
    .where('bot_id', '=', botId)
    .where('state', '!=', 'pending')
    .execute();
  const row = await d.db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('id', '=', id)
    .where('bot_id', '=', botId)
    .executeTakeFirst();
  if (!row) throw notFound('delivery');
  return view(row);
}

/** D40: a test event to the bot's webhook, through the normal delivery path. */
export async function sendTestEvent(d: Domain, botId: number): Promise<DeliveryView> {
  const bot = await requireBot(d, botId);
  if (bot.webhook_url === null)
    throw new AppError('VALIDATION_ERROR', 'This bot has no webhook address');
  const body = webhookBody(
    TEST_EVENT_TYPE,
    JSON.stringify({ botId, message: 'Test event from Parley' }),
  );
  await d.db.transaction().execute(async (trx) => {
    await enqueueDeliveries(trx, d, TEST_EVENT_TYPE, body, [botId]);
  });
  const row = await d.db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('bot_id', '=', botId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirstOrThrow();
  return view(row);
}
