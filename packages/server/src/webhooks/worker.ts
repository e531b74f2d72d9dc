import { Agent, request } from 'undici';
import type { Domain } from '../domain/context.js';
import { sql } from '../storage/db.js';
import type { WebhookDeliveriesTable } from '../storage/schema-webhooks.js';
import { nextDelayMs, parseRetryAfter } from './backoff.js';
import { sign } from './signing.js';
import { checkUrlForm, checkedLookup, UnsafeTargetError } from './ssrf-guard.js';
import { policyOf } from './webhooks.service.js';

/**
 * The webhook worker (D38/D39). Deliveries are durable rows; the worker claims due ones with a
 * lease (a crashed node's in-flight tries are retried when the lease expires), POSTs them with a
 * bounded number in flight overall and per bot — so one slow or dead receiver never delays other
 * bots — and records the outcome and the next try.
 */
export interface WorkerOptions {
  /** tries in flight on this node */
  concurrency?: number;
  /** tries in flight per bot on this node */
  perBot?: number;
  /** how often to look for due deliveries when nothing woke the worker */
  pollMs?: number;
  /** D39: an answer must come within 10 s */
  timeoutMs?: number;
  random?: () => number;
}

/** Response bodies are not needed: read at most this much, then drop the connection's data. */
const MAX_RESPONSE_BYTES = 4096;
const USER_AGENT = 'Parley-Webhooks/1';

export class WebhookWorker {
  private readonly concurrency: number;
  private readonly perBot: number;
  private readonly pollMs: number;
  private readonly timeoutMs: number;
  private readonly random: () => number;
  private readonly agent: Agent;
  private readonly inFlight = new Map<number, number>();
  private running = 0;
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private again = false;
  private stopped = true;
  private readonly idle = new Set<() => void>();
  /** aborts every try still in flight when stop() runs out of patience */
  private readonly shutdown = new AbortController();

  constructor(
    private readonly d: Domain,
    opts: WorkerOptions = {},
  ) {
    this.concurrency = opts.concurrency ?? 64;
    this.perBot = opts.perBot ?? 4;
    this.pollMs = opts.pollMs ?? 250;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.random = opts.random ?? Math.random;
    this.agent = new Agent({
      connect: { lookup: checkedLookup(policyOf(d)), timeout: this.timeoutMs },
      keepAliveTimeout: 10_000,
      connections: 8,
    });
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    // Leases this node held before a crash: nothing of ours is in flight now, so they are free
    // at once instead of after their expiry (other nodes' leases are left alone).
    void this.d.db
      .updateTable('webhook_deliveries')
      .set({ locked_until: null, locked_by: null })
      .where('locked_by', '=', this.d.config.nodeId)
      .where('state', '=', 'pending')
      .execute()
      .catch((err: unknown) => process.emitWarning(`webhook worker: ${String(err)}`))
      .finally(() => this.schedule(0));
  }

  /** Look for due deliveries now (called after a transaction that enqueued some commits). */
  wake(): void {
    if (!this.stopped) this.schedule(0);
  }

  /**
   * Let tries in flight finish for `graceMs`, then abort the rest: they stay pending and their
   * lease expires, so they are tried again after a restart (at least once, D39).
   */
  async stop(graceMs = 2000): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    // A claim under way finishes first (what it claimed is launched or released).
    while (this.ticking) await new Promise((r) => setTimeout(r, 5));
    if (this.running > 0) {
      const grace = setTimeout(() => this.shutdown.abort(), graceMs);
      await new Promise<void>((resolve) => this.idle.add(resolve));
      clearTimeout(grace);
    }
    await this.agent.destroy();
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = true;
    try {
      do {
        this.again = false;
        const free = this.concurrency - this.running;
        if (free <= 0) break;
        const claimed = await this.claim(free);
        if (this.stopped) {
          if (claimed.length > 0) await this.release(claimed.map((r) => r.id));
          break;
        }
        // The claim caps each bot at `perBot` rows, but a bot may already have tries in flight:
        // what would pass its cap goes back at once, so the cap is exact.
        const excess: number[] = [];
        for (const row of claimed) {
          if ((this.inFlight.get(row.bot_id) ?? 0) >= this.perBot) excess.push(row.id);
          else this.launch(row);
        }
        if (excess.length > 0) await this.release(excess);
        if (claimed.length === free) this.again = true;
      } while (this.again && !this.stopped);
    } catch (err) {
      // A database hiccup must not kill the worker: log and try again at the next poll.
      process.emitWarning(`webhook worker: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      this.ticking = false;
      if (!this.stopped) this.schedule(this.pollMs);
    }
  }

  /**
   * Claim up to `limit` due deliveries, at most `perBot` per bot and none for bots already at
   * their cap, by setting a lease. The outer lease condition is re-checked under the row lock on
   * PostgreSQL, so two nodes never claim the same try.
   */
  private async claim(limit: number): Promise<WebhookDeliveriesTable[]> {
    const now = this.d.clock.now();
    const lease = now + this.timeoutMs + 5_000;
    const saturated = [...this.inFlight].filter(([, n]) => n >= this.perBot).map(([bot]) => bot);
    const excluded = saturated.length > 0 ? sql`and bot_id not in (${sql.join(saturated)})` : sql``;
    const res = await sql<WebhookDeliveriesTable>`
      update webhook_deliveries set locked_until = ${lease}, locked_by = ${this.d.config.nodeId}, updated_at = ${now}
      where (locked_until is null or locked_until < ${now}) and state = 'pending' and id in (
        select id from (
          select id, next_attempt_at, row_number() over (partition by bot_id order by next_attempt_at, id) as rn
          from webhook_deliveries
          where state = 'pending' and next_attempt_at <= ${now}
            and (locked_until is null or locked_until < ${now}) ${excluded}
        ) due
        where rn <= ${this.perBot}
        order by next_attempt_at, id
        limit ${limit}
      )
      returning *`.execute(this.d.db);
    return res.rows;
  }

  private async release(ids: number[]): Promise<void> {
    await this.d.db
      .updateTable('webhook_deliveries')
      .set({ locked_until: null })
      .where('id', 'in', ids)
      .execute();
  }

  private launch(row: WebhookDeliveriesTable): void {
    this.running += 1;
    this.inFlight.set(row.bot_id, (this.inFlight.get(row.bot_id) ?? 0) + 1);
    void this.attempt(row)
      .catch((err: unknown) => process.emitWarning(`webhook attempt failed: ${String(err)}`))
      .finally(() => {
        this.running -= 1;
        const n = (this.inFlight.get(row.bot_id) ?? 1) - 1;
        if (n <= 0) this.inFlight.delete(row.bot_id);
        else this.inFlight.set(row.bot_id, n);
        if (this.running === 0) {
          for (const resolve of this.idle) resolve();
          this.idle.clear();
        }
        this.wake();
      });
  }

  private async attempt(row: WebhookDeliveriesTable): Promise<void> {
    const d = this.d;
    const attempt = row.attempts + 1;
    // The address and secret are read at every try: a rotated secret signs from the next try on.
    const bot = await d.db
      .selectFrom('bots')
      .select(['webhook_url', 'webhook_secret'])
      .where('id', '=', row.bot_id)
      .executeTakeFirst();
    if (!bot?.webhook_url)
      return this.finish(row, attempt, { final: true, error: 'webhook address removed' });

    const started = performance.now();
    let status: number | null = null;
    let retryAfterS: number | undefined;
    let error: string | null = null;
    try {
      const url = checkUrlForm(bot.webhook_url, policyOf(d));
      const res = await request(url, {
        method: 'POST',
        dispatcher: this.agent,
        body: row.body,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'x-service-event': row.event_type,
          'x-service-signature': sign(bot.webhook_secret, row.body),
          'x-service-delivery': row.delivery_id,
          'x-service-attempt': String(attempt),
          'x-service-timestamp': String(Math.floor(d.clock.now() / 1000)),
        },
        signal: AbortSignal.any([AbortSignal.timeout(this.timeoutMs), this.shutdown.signal]),
      });
      status = res.statusCode;
      const ra = res.headers['retry-after'];
      if (status === 429 || status === 503)
        retryAfterS = parseRetryAfter(Array.isArray(ra) ? ra[0] : ra, d.clock.now());
      await res.body.dump({ limit: MAX_RESPONSE_BYTES }).catch(() => {});
      // D39: any 2xx is success; redirects are not followed and count as failures.
      if (status < 200 || status > 299)
        error =
          status >= 300 && status < 400 ? `redirect (${status}) not followed` : `HTTP ${status}`;
    } catch (err) {
      error =
        err instanceof UnsafeTargetError || (err as { code?: string }).code === 'EUNSAFETARGET'
          ? `refused: ${(err as Error).message}`
          : (err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError'
            ? `no answer within ${this.timeoutMs / 1000} s`
            : `connection failed: ${(err as { code?: string }).code ?? (err as Error).message}`;
    }
    const latency = Math.round(performance.now() - started);
    if (error === null) return this.finish(row, attempt, { delivered: true, status, latency });
    return this.finish(row, attempt, {
      status,
      latency,
      error,
      ...(retryAfterS !== undefined ? { retryAfterS } : {}),
    });
  }

  private async finish(
    row: WebhookDeliveriesTable,
    attempt: number,
    o: {
      delivered?: boolean;
      final?: boolean;
      status?: number | null;
      latency?: number;
      error?: string;
      retryAfterS?: number;
    },
  ): Promise<void> {
    const now = this.d.clock.now();
    const wait =
      o.delivered || o.final
        ? null
        : nextDelayMs(attempt, this.d.config.webhookRetryS, this.random, o.retryAfterS);
    const state = o.delivered ? 'delivered' : wait === null ? 'failed' : 'pending';
    await this.d.db
      .updateTable('webhook_deliveries')
      .set({
        state,
        attempts: attempt,
        next_attempt_at: wait === null ? null : now + wait,
        locked_until: null,
        locked_by: null,
        last_status: o.status ?? null,
        last_error: o.error ?? null,
        last_latency_ms: o.latency ?? null,
        updated_at: now,
      })
      .where('id', '=', row.id)
      .execute();
  }
}
