import type { Domain } from '../domain/context.js';
import { sql } from '../storage/db.js';
import type { WebhookDeliveriesTable } from '../storage/schema-webhooks.js';
import { nextDelayMs, parseRetryAfter } from './backoff.js';
import { signatureHeaders } from './signing.js';
import { GuardedAgent } from './guarded-agent.js';
import { checkUrlForm, UnsafeTargetError } from './ssrf-guard.js';
import { webhookTry } from '../metrics/metrics.js';
import { policyOf } from './webhooks.service.js';
import { callbackFromWebhook } from '../domain/interactions/respond.js';

/**
 * The webhook worker (D38/D39). Deliveries are durable rows; the worker claims due ones with a
 * lease (a crashed node's in-flight tries are retried when the lease expires), POSTs them with a
 * bounded number in flight overall and per bot — so one slow or dead receiver never delays other
 * bots — and records the outcome and the next try.
 *
 * Throughput (issue #6, bench/README.md "webhooks"): a claim is per bot and batched — the bots
 * with due tries are found by index seeks, each bot gets at most its free slots (`LIMIT`), and a
 * bot is claimed for again only when half of its slots are free, not after every try. The bots'
 * addresses and secrets are read once per claim, and outcomes are written in batches.
 */
export interface WorkerOptions {
  /** tries in flight on this node */
  concurrency?: number;
  /** tries in flight per bot on this node: where every bot starts, and where slow or failing ones stay */
  perBot?: number;
  /** the most tries in flight per bot on this node, reached only by a receiver answering fast */
  maxPerBot?: number;
  /** how often to look for due deliveries when nothing woke the worker */
  pollMs?: number;
  /** D39: an answer must come within 10 s */
  timeoutMs?: number;
  random?: () => number;
  /**
   * The worker's own failures (a claim or an outcome write the database refused). D72: the
   * server passes a filter that leaves a database outage's failures to the outage's log lines.
   */
  warn?: (err: unknown, msg: string) => void;
  /** issue #13: one info line per failed try (bot, status, latency) */
  logFailure?: (o: {
    botId: number;
    status: number | null;
    latencyMs: number;
    error: string;
  }) => void;
}

/** D50: the first 4 KiB of each answer is kept; no more is ever read. */
const MAX_RESPONSE_BYTES = 4096;
/** D65: a webhook bot's answer to an interaction, in its response body, is read this far. */
const MAX_CALLBACK_BYTES = 64 * 1024;
const USER_AGENT = 'Parley-Webhooks/1';
/**
 * A 2xx within this many ms lets the bot's cap grow by one; anything else sets it back. Low
 * enough that bots holding their 16 slots still free them many times a second (so the node's
 * slots turn over for everyone, D39), high enough that a busy event loop's own delay does not
 * keep a healthy receiver at the base cap.
 */
const FAST_MS = 500;
/** Bots looked at per claim; the walk resumes after the last one, so every bot gets its turn. */
const BOTS_PER_CLAIM = 64;
/** Outcomes written by one statement at most, and the sizes a batch is padded to. */
const OUTCOMES_PER_WRITE = 256;
const OUTCOME_SIZES = [1, 4, 16, 64, 256];

/** The reason a try is aborted when its answer is late (D39: 10 s). */
class TimeoutError extends Error {
  override name = 'TimeoutError';
}

/** A bot's address (checked, D37) and secret, read once per claim. */
interface Target {
  /** the parsed address, the reason it is refused, or null when the bot has none any more */
  url: URL | UnsafeTargetError | null;
  secret: string;
}

/** The new state of a row after one try; flush() writes these in batches. */
interface Outcome {
  id: number;
  state: WebhookDeliveriesTable['state'];
  attempts: number;
  next_attempt_at: number | null;
  last_status: number | null;
  last_error: string | null;
  last_latency_ms: number | null;
  updated_at: number;
  /** D50: this try as the delivery detail shows it (`webhook_attempts`) */
  try: {
    attempt: number;
    at: number;
    response_body: string | null;
  };
}

export class WebhookWorker {
  private readonly concurrency: number;
  private readonly perBot: number;
  private readonly maxPerBot: number;
  private readonly pollMs: number;
  private readonly timeoutMs: number;
  private readonly random: () => number;
  private readonly logFailure: WorkerOptions['logFailure'];
  private readonly warn: (err: unknown, msg: string) => void;
  private readonly agent: GuardedAgent;
  private readonly inFlight = new Map<number, number>();
  /** each bot's current cap (absent: `perBot`), grown by fast answers, reset by anything else */
  private readonly caps = new Map<number, number>();
  /** bots whose last claim filled every slot offered: they probably have more due tries */
  private readonly more = new Set<number>();
  /** the last claim stopped for lack of free slots overall, not for lack of work */
  private starved = false;
  /** the bot walk resumes after this id (round robin across bots) */
  private cursor = 0;
  private running = 0;
  private timer: NodeJS.Timeout | undefined;
  private timerDue = Infinity;
  private ticking = false;
  private again = false;
  private stopped = true;
  private readonly idle = new Set<() => void>();
  private readonly outcomes: Outcome[] = [];
  private flushing: Promise<void> | undefined;
  /** the tries in flight, so stop() can abort them when it runs out of patience */
  private readonly aborts = new Set<AbortController>();

  constructor(
    private readonly d: Domain,
    opts: WorkerOptions = {},
  ) {
    this.concurrency = opts.concurrency ?? 128;
    this.perBot = opts.perBot ?? 4;
    this.maxPerBot = Math.max(this.perBot, opts.maxPerBot ?? 16);
    this.pollMs = opts.pollMs ?? 250;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.random = opts.random ?? Math.random;
    this.logFailure = opts.logFailure;
    this.warn =
      opts.warn ??
      ((err, msg) =>
        process.emitWarning(`${msg}: ${err instanceof Error ? err.message : String(err)}`));
    // No per-origin connection limit: a bot's tries are bounded by its cap, and several bots
    // behind one host must not queue behind each other's slow answers (D39 isolation).
    this.agent = new GuardedAgent({
      policy: policyOf(d),
      connectTimeoutMs: this.timeoutMs,
      keepAliveTimeoutMs: 10_000,
    });
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    // Leases this node held before a crash: nothing of ours is in flight now, so they are free
    // at once instead of after their expiry (other nodes' leases are left alone). D72: each was
    // a try under way — made, as far as its receiver can tell — so it counts: the next one
    // carries the next X-Service-Attempt, not the same number again.
    // (`state = 'pending'` as a literal: it lets the partial index of the pending rows serve.)
    void sql`
      update webhook_deliveries set locked_until = null, locked_by = null, attempts = attempts + 1
      where state = 'pending' and locked_by = ${this.d.config.nodeId} and locked_until is not null`
      .execute(this.d.db)
      .catch((err: unknown) => this.warn(err, 'webhook worker'))
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
      const grace = setTimeout(() => {
        for (const a of this.aborts) a.abort();
      }, graceMs);
      await new Promise<void>((resolve) => this.idle.add(resolve));
      clearTimeout(grace);
    }
    // Outcomes not yet written are written now; a crash before this leaves the rows leased, and
    // they are tried again when the lease expires (at least once, D39).
    while (this.flushing) await this.flushing;
    await this.agent.close('destroy');
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    const due = Date.now() + ms;
    // A tick already due as soon or sooner serves this request too.
    if (this.timer && this.timerDue <= due) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerDue = due;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerDue = Infinity;
      void this.tick();
    }, ms);
    this.timer.unref();
  }

  private capOf(botId: number): number {
    return this.caps.get(botId) ?? this.perBot;
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
        if (free <= 0) {
          this.starved = true;
          break;
        }
        const { rows, walkedAll } = await this.claim(free);
        if (this.stopped) {
          if (rows.length > 0) await this.release(rows.map((r) => r.id));
          break;
        }
        if (rows.length > 0) {
          const targets = await this.targets(rows);
          for (const row of rows) this.launch(row, targets.get(row.bot_id));
        }
        // More bots than one walk covers: go on with the next ones while slots are free.
        if (!walkedAll && !this.starved && rows.length > 0) this.again = true;
      } while (this.again && !this.stopped);
    } catch (err) {
      // A database hiccup must not kill the worker: log and try again at the next poll.
      this.warn(err, 'webhook worker');
    } finally {
      this.ticking = false;
      if (!this.stopped) this.schedule(this.pollMs);
    }
  }

  /**
   * Claim due deliveries for up to BOTS_PER_CLAIM bots, each at most its free slots and all
   * together at most `limit`, by setting a lease. Two statements however large the backlog:
   * a walk over the bots with due tries (one index seek per bot), then one UPDATE whose
   * per-bot subqueries each read a bot's oldest due rows through the index and stop at its
   * LIMIT. The outer lease condition is re-checked under the row lock on PostgreSQL, so two
   * nodes never claim the same try.
   */
  private async claim(
    limit: number,
  ): Promise<{ rows: WebhookDeliveriesTable[]; walkedAll: boolean }> {
    const now = this.d.clock.now();
    const lease = now + this.timeoutMs + 5_000;
    // Starts with SELECT (the CTE is inside): storage/db.ts tells reads from writes by the first word.
    const walk = await sql<{ bot_id: number }>`
      select bot_id from (
        with recursive due(bot_id, n) as (
          select (select min(bot_id) from webhook_deliveries
                  where state = 'pending' and bot_id > ${this.cursor} and next_attempt_at <= ${now}), 1
          union all
          select (select min(w.bot_id) from webhook_deliveries w
                  where w.state = 'pending' and w.bot_id > due.bot_id and w.next_attempt_at <= ${now}),
                 due.n + 1
          from due where due.bot_id is not null and due.n < ${BOTS_PER_CLAIM}
        )
        select bot_id from due where bot_id is not null
      ) walked`.execute(this.d.db);
    const bots = walk.rows.map((r) => Number(r.bot_id));
    let walkedAll = bots.length < BOTS_PER_CLAIM;

    // How much each bot may take. A bot's due rows are not counted beforehand, so a bot is not
    // offered its whole free cap when that would leave nothing for the bots after it: each gets
    // at most an equal share of the node's free slots. A bot that fills its share is in `more`
    // and is claimed for again as its tries finish.
    const open = bots.filter((b) => this.capOf(b) > (this.inFlight.get(b) ?? 0));
    const share = Math.max(1, Math.ceil(limit / Math.max(1, open.length)));
    const plan: Array<{ bot: number; room: number }> = [];
    let left = limit;
    this.starved = false;
    for (const bot of open) {
      if (left <= 0) {
        // Out of slots: the next walk starts here, so the bots after it are not always last.
        this.starved = true;
        walkedAll = false;
        break;
      }
      const room = Math.min(this.capOf(bot) - (this.inFlight.get(bot) ?? 0), share, left);
      plan.push({ bot, room });
      left -= room;
    }
    // Round robin: the next walk starts after the last bot offered slots, or from the start.
    this.cursor = walkedAll ? 0 : (plan.at(-1)?.bot ?? bots.at(-1) ?? 0);
    if (plan.length === 0) return { rows: [], walkedAll };
    const perBot = plan.map(
      ({ bot, room }) => sql`select id from (
        select id from webhook_deliveries
        where state = 'pending' and bot_id = ${bot} and next_attempt_at <= ${now}
          and (locked_until is null or locked_until < ${now})
        order by next_attempt_at limit ${room}
      ) b`,
    );
    // SQLite would otherwise read the outer `state = 'pending'` through the state index, i.e.
    // visit every pending row, and test each against the id list; `+state` makes it look the
    // claimed ids up by primary key instead. (PostgreSQL plans it by id as written.)
    const pendingById = this.d.dialect === 'sqlite' ? sql`+state` : sql`state`;
    // D72: a lease that expired (its node crashed before writing the try's outcome) was a try
    // made as far as the receiver can tell: it is counted now, so this one carries the next
    // number (X-Service-Attempt), not the same again. A finished or released try clears its lease.
    const res = await sql<WebhookDeliveriesTable>`
      update webhook_deliveries set locked_until = ${lease}, locked_by = ${this.d.config.nodeId}, updated_at = ${now},
        attempts = case when locked_until is null then attempts else attempts + 1 end
      where ${pendingById} = 'pending' and (locked_until is null or locked_until < ${now})
        and id in (${sql.join(perBot, sql` union all `)})
      returning *`.execute(this.d.db);
    const got = new Map<number, number>();
    for (const r of res.rows) got.set(r.bot_id, (got.get(r.bot_id) ?? 0) + 1);
    for (const { bot, room } of plan) {
      // Every slot offered was filled: there is probably more, so claim again at half the cap.
      if ((got.get(bot) ?? 0) >= room) this.more.add(bot);
      else this.more.delete(bot);
    }
    return { rows: res.rows, walkedAll };
  }

  /**
   * The address and secret of the claimed rows' bots, read once per claim rather than per try:
   * still read after the claim, so a try claimed after a rotation signs with the new secret (D38).
   */
  private async targets(rows: WebhookDeliveriesTable[]): Promise<Map<number, Target>> {
    const ids = [...new Set(rows.map((r) => r.bot_id))];
    const found = await this.d.db
      .selectFrom('bots')
      .select(['id', 'webhook_url', 'webhook_secret'])
      .where('id', 'in', ids)
      .execute();
    const policy = policyOf(this.d);
    const check = (raw: string): URL | UnsafeTargetError => {
      try {
        return checkUrlForm(raw, policy);
      } catch (err) {
        if (err instanceof UnsafeTargetError) return err;
        throw err;
      }
    };
    return new Map(
      found.map((b) => [
        b.id,
        { url: b.webhook_url ? check(b.webhook_url) : null, secret: b.webhook_secret },
      ]),
    );
  }

  /** Claimed but never tried (the worker stopped): the lease is given back, no try counted. */
  private async release(ids: number[]): Promise<void> {
    await this.d.db
      .updateTable('webhook_deliveries')
      .set({ locked_until: null })
      .where('id', 'in', ids)
      .execute();
  }

  private launch(row: WebhookDeliveriesTable, target: Target | undefined): void {
    const bot = row.bot_id;
    this.running += 1;
    this.inFlight.set(bot, (this.inFlight.get(bot) ?? 0) + 1);
    void this.attempt(row, target)
      .then((o) => {
        // D39 isolation: only a receiver answering 2xx within FAST_MS earns more slots (one per
        // answer, up to maxPerBot); a failure, a timeout or a slow answer sets it back to
        // perBot, so a slow or dead receiver never holds more than perBot of the node's slots.
        const fast = o.state === 'delivered' && (o.last_latency_ms ?? Infinity) < FAST_MS;
        const cap = fast ? Math.min(this.maxPerBot, this.capOf(bot) + 1) : this.perBot;
        if (cap === this.perBot) this.caps.delete(bot);
        else this.caps.set(bot, cap);
        this.record(o);
      })
      .catch((err: unknown) => this.warn(err, 'webhook attempt failed'))
      .finally(() => {
        this.running -= 1;
        const n = (this.inFlight.get(bot) ?? 1) - 1;
        if (n <= 0) this.inFlight.delete(bot);
        else this.inFlight.set(bot, n);
        if (this.running === 0) {
          for (const resolve of this.idle) resolve();
          this.idle.clear();
        }
        // Claim again in batches, not after every try: when half of this bot's slots are free
        // and it has more waiting, or when half of all slots are free and bots were waiting.
        if (
          (this.more.has(bot) && n <= this.capOf(bot) / 2) ||
          (this.starved && this.running <= this.concurrency / 2)
        )
          this.wake();
      });
  }

  private async attempt(row: WebhookDeliveriesTable, bot: Target | undefined): Promise<Outcome> {
    const d = this.d;
    // The tries made so far, lost ones included (see claim), and this one.
    const attempt = row.attempts + 1;
    if (!bot?.url)
      return this.outcome(row, attempt, { final: true, error: 'webhook address removed' });

    const started = performance.now();
    const startedAt = d.clock.now();
    let responseBody: string | null = null;
    // One controller and one timer per try: cheaper than AbortSignal.any(AbortSignal.timeout(…),
    // …), which showed up in the profile at thousands of tries per second.
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(new TimeoutError()), this.timeoutMs);
    this.aborts.add(abort);
    let status: number | null = null;
    let retryAfterS: number | undefined;
    let error: string | null = null;
    try {
      // D37: the address's form was checked when it was read for this claim (an IP literal in a
      // refused range fails here); host names are checked at connection by checkedLookup.
      if (bot.url instanceof UnsafeTargetError) throw bot.url;
      const res = await this.agent.request(bot.url, {
        method: 'POST',
        body: row.body,
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          'x-service-event': row.event_type,
          'x-service-attempt': String(attempt),
          // D38 and D68 (Standard Webhooks): the signature headers over id, time and body.
          ...signatureHeaders(
            bot.secret,
            row.body,
            row.delivery_id,
            Math.floor(d.clock.now() / 1000),
          ),
        },
        signal: abort.signal,
      });
      status = res.statusCode;
      const ra = res.headers['retry-after'];
      if (status === 429 || status === 503)
        retryAfterS = parseRetryAfter(Array.isArray(ra) ? ra[0] : ra, d.clock.now());
      // D65: an interaction's answer may come in the response (a callback body, up to 64 KiB).
      const answers = row.event_type === 'INTERACTION_CREATE' && status >= 200 && status <= 299;
      responseBody = await readHead(
        res.body,
        answers ? MAX_CALLBACK_BYTES : MAX_RESPONSE_BYTES,
      ).catch(() => null);
      // D39: any 2xx is success; redirects are not followed and count as failures.
      if (status < 200 || status > 299)
        error =
          status >= 300 && status < 400 ? `redirect (${status}) not followed` : `HTTP ${status}`;
      if (answers && responseBody !== null) {
        await callbackFromWebhook(d, row.body, responseBody).catch((err: unknown) =>
          this.warn(err, 'interaction answer in a webhook response failed'),
        );
        // D50 keeps the head only
        if (responseBody.length > MAX_RESPONSE_BYTES)
          responseBody = responseBody.slice(0, MAX_RESPONSE_BYTES);
      }
    } catch (err) {
      error =
        err instanceof UnsafeTargetError || (err as { code?: string }).code === 'EUNSAFETARGET'
          ? `refused: ${(err as Error).message}`
          : (err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError'
            ? `no answer within ${this.timeoutMs / 1000} s`
            : `connection failed: ${(err as { code?: string }).code ?? (err as Error).message}`;
    } finally {
      clearTimeout(timer);
      this.aborts.delete(abort);
    }
    const latency = Math.round(performance.now() - started);
    const tried = { at: startedAt, body: responseBody };
    // D53: tries by outcome and their latency.
    webhookTry(
      error === null
        ? 'delivered'
        : error.startsWith('refused')
          ? 'refused'
          : status === null
            ? 'network_error'
            : 'http_error',
      latency,
    );
    if (error === null)
      return this.outcome(row, attempt, { delivered: true, status, latency, tried });
    this.logFailure?.({ botId: row.bot_id, status, latencyMs: latency, error });
    return this.outcome(row, attempt, {
      status,
      latency,
      error,
      tried,
      ...(retryAfterS !== undefined ? { retryAfterS } : {}),
    });
  }

  private outcome(
    row: WebhookDeliveriesTable,
    attempt: number,
    o: {
      delivered?: boolean;
      final?: boolean;
      status?: number | null;
      latency?: number;
      error?: string;
      retryAfterS?: number;
      /** when the try started, and the head of the answer */
      tried?: { at: number; body: string | null };
    },
  ): Outcome {
    const now = this.d.clock.now();
    const wait =
      o.delivered || o.final
        ? null
        : nextDelayMs(attempt, this.d.config.webhookRetryS, this.random, o.retryAfterS);
    return {
      id: row.id,
      state: o.delivered ? 'delivered' : wait === null ? 'failed' : 'pending',
      attempts: attempt,
      next_attempt_at: wait === null ? null : now + wait,
      last_status: o.status ?? null,
      last_error: o.error ?? null,
      last_latency_ms: o.latency ?? null,
      updated_at: now,
      try: { attempt, at: o.tried?.at ?? now, response_body: o.tried?.body ?? null },
    };
  }

  /**
   * Outcomes are written in batches: those of tries that end in the same turn of the event loop
   * (or while the previous batch was being written) go in one statement. Until it commits the
   * row keeps its lease, so no other claim can take it; if the process dies first, the lease
   * expires and the try is made again (at least once, D39).
   */
  private record(o: Outcome): void {
    this.outcomes.push(o);
    this.flushing ??= this.flush().finally(() => {
      this.flushing = undefined;
    });
  }

  private async flush(): Promise<void> {
    await new Promise((r) => setImmediate(r));
    while (this.outcomes.length > 0) {
      const batch = this.outcomes.splice(0, OUTCOMES_PER_WRITE);
      try {
        await this.writeOutcomes(batch);
      } catch (err) {
        // The rows keep their lease and are tried again when it expires (at least once).
        this.warn(err, 'webhook worker: writing outcomes failed');
      }
    }
  }

  /**
   * One UPDATE … FROM (VALUES …) for the whole batch (SQLite ≥ 3.33 and PostgreSQL both name
   * the VALUES columns column1…): one statement and one commit instead of one per try. The
   * batch is padded to a size of a short ladder by repeating its last row (a row joined twice
   * gets the same values), so only a handful of distinct SQL texts reach the statement cache.
   * The first row's casts give PostgreSQL the column types (parameters are otherwise `unknown`).
   */
  private async writeOutcomes(batch: Outcome[]): Promise<void> {
    const last = batch.at(-1);
    if (!last) return;
    const size = OUTCOME_SIZES.find((n) => n >= batch.length) ?? batch.length;
    const rows = batch.concat(Array<Outcome>(size - batch.length).fill(last));
    const values = rows.map((o, i) =>
      i === 0
        ? sql`(cast(${o.id} as bigint), cast(${o.state} as text), cast(${o.attempts} as integer),
            cast(${o.next_attempt_at} as bigint), cast(${o.last_status} as integer),
            cast(${o.last_error} as text), cast(${o.last_latency_ms} as integer),
            cast(${o.updated_at} as bigint))`
        : sql`(${o.id}, ${o.state}, ${o.attempts}, ${o.next_attempt_at}, ${o.last_status}, ${o.last_error}, ${o.last_latency_ms}, ${o.updated_at})`,
    );
    await sql`
      update webhook_deliveries set state = o.column2, attempts = o.column3,
        next_attempt_at = o.column4, locked_until = null, locked_by = null,
        last_status = o.column5, last_error = o.column6, last_latency_ms = o.column7,
        updated_at = o.column8
      from (values ${sql.join(values)}) as o
      where webhook_deliveries.id = o.column1`.execute(this.d.db);
    // D50: each try's detail. A try made again after a lost write (its lease expired) has the same
    // number and is kept once; the padding rows repeat the last one and are dropped the same way.
    // A delivery deleted meanwhile (its bot was deleted, D50) gets none: the foreign key would
    // otherwise refuse the whole batch.
    const tries = rows.map((o, i) =>
      i === 0
        ? sql`(cast(${o.id} as bigint), cast(${o.try.attempt} as integer), cast(${o.try.at} as bigint),
            cast(${o.last_status} as integer), cast(${o.last_latency_ms} as integer),
            cast(${o.last_error} as text), cast(${o.try.response_body} as text))`
        : sql`(${o.id}, ${o.try.attempt}, ${o.try.at}, ${o.last_status}, ${o.last_latency_ms}, ${o.last_error}, ${o.try.response_body})`,
    );
    await sql`
      insert into webhook_attempts
        (delivery_row_id, attempt, at, status, latency_ms, error, response_body)
      select t.column1, t.column2, t.column3, t.column4, t.column5, t.column6, t.column7
      from (values ${sql.join(tries)}) as t
      where exists (select 1 from webhook_deliveries d where d.id = t.column1)
      on conflict (delivery_row_id, attempt) do nothing`.execute(this.d.db);
  }
}

/**
 * D50: the first `max` bytes of an answer's body as text; the rest is never read (the stream is
 * destroyed, which also drops the connection rather than drain a large answer). NUL characters
 * become U+FFFD (PostgreSQL text cannot hold them).
 */
async function readHead(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
  max: number,
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const room = max - size;
      chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
      size += Math.min(chunk.length, room);
      if (size >= max) break;
    }
  } finally {
    if (size >= max) body.destroy();
  }
  return Buffer.concat(chunks, size).toString('utf8').replaceAll('\u0000', '\uFFFD');
}
