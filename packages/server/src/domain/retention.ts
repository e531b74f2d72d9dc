import { sql } from '../storage/db.js';
import type { Domain } from './context.js';
import { periodOf } from './files/quota.js';
import { pruneAudit } from './audit/audit.service.js';

/**
 * D53 retention: rows that only grow are deleted once nothing needs them.
 * - Webhook deliveries: delivered ones after `delivered` days, failed ones after `failed` days
 *   (PARLEY_DELIVERY_RETENTION_DAYS, default 7,30), counted from their last change (the try
 *   that finished them; a redelivery makes a row pending again and restarts the clock). Their
 *   attempts go with them (foreign key, on delete cascade).
 * - Upload quota counters (D24): only the current UTC day and month are ever read; rows older
 *   than the previous day and month are deleted (the previous one is kept for nodes whose
 *   clocks are a little behind around midnight).
 * - People's sessions idle past PARLEY_SESSION_IDLE_DAYS (D47): a session is refused once idle
 *   that long anyway; one never presented again would otherwise stay forever.
 * - Audit log entries older than PARLEY_AUDIT_RETENTION_DAYS (D60, default 180).
 */
export interface Pruned {
  delivered: number;
  failed: number;
  usageDays: number;
  usageMonths: number;
  idleSessions: number;
  auditEntries: number;
}

const DAY_MS = 86_400_000;
/** rows per delete statement: a long log is removed in short transactions */
const BATCH = 5000;

export async function pruneRetained(
  domain: Pick<Domain, 'db' | 'config' | 'clock'>,
): Promise<Pruned> {
  const { db, config, clock } = domain;
  const now = clock.now();
  const deliveries = async (state: 'delivered' | 'failed', days: number): Promise<number> => {
    const cutoff = now - days * DAY_MS;
    let total = 0;
    for (;;) {
      const r = await db
        .deleteFrom('webhook_deliveries')
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('webhook_deliveries')
            .select('id')
            // the partial index's condition, spelled as in migration 0010
            .where(sql<boolean>`state <> 'pending'`)
            .where('state', '=', state)
            .where('updated_at', '<', cutoff)
            .limit(BATCH),
        )
        .executeTakeFirst();
      const n = Number(r.numDeletedRows);
      total += n;
      if (n < BATCH) return total;
    }
  };
  const delivered = await deliveries('delivered', config.deliveryRetentionDays.delivered);
  const failed = await deliveries('failed', config.deliveryRetentionDays.failed);
  const p = periodOf(now);
  const days = await db
    .deleteFrom('upload_usage_daily')
    .where('day', '<', p.day - 1)
    .executeTakeFirst();
  const months = await db
    .deleteFrom('upload_usage_monthly')
    .where('month', '<', p.month - 1)
    .executeTakeFirst();
  // A margin of a day: the last use of an active session is written at most once a minute,
  // and nodes' clocks may differ a little.
  const idle = await db
    .deleteFrom('user_sessions')
    .where('last_used_at', '<', now - (config.sessionIdleDays + 1) * DAY_MS)
    .executeTakeFirst();
  const auditEntries = await pruneAudit(domain, config.auditRetentionDays);
  return {
    delivered,
    failed,
    usageDays: Number(days.numDeletedRows),
    usageMonths: Number(months.numDeletedRows),
    idleSessions: Number(idle.numDeletedRows),
    auditEntries,
  };
}

export interface RetentionLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Prune at start, then every `everyMs` (hourly); what was removed is logged at info. */
export function startRetention(
  domain: Pick<Domain, 'db' | 'config' | 'clock'>,
  log: RetentionLog,
  everyMs = 3_600_000,
): { stop(): void; runOnce(): Promise<void> } {
  let running: Promise<void> | undefined;
  const runOnce = (): Promise<void> =>
    (running ??= pruneRetained(domain)
      .then((p) => {
        if (
          p.delivered + p.failed + p.usageDays + p.usageMonths + p.idleSessions + p.auditEntries >
          0
        )
          log.info(
            {
              deliveriesDelivered: p.delivered,
              deliveriesFailed: p.failed,
              usageDays: p.usageDays,
              usageMonths: p.usageMonths,
              idleSessions: p.idleSessions,
              auditEntries: p.auditEntries,
            },
            'retention: removed old webhook deliveries, upload counters, idle sessions and audit entries',
          );
      })
      .catch((err: unknown) => log.warn({ err }, 'retention pruning failed'))
      .finally(() => {
        running = undefined;
      }));
  void runOnce();
  const timer = setInterval(() => void runOnce(), everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer), runOnce };
}
