import type { Message } from '@parley/protocol';
import type { Domain } from '../domain/context.js';
import type { PushScheduler } from '../domain/push/scheduler.js';
import { dropSubscription, subscriptionsOf } from '../domain/push/subscriptions.service.js';
import { notifyTargets } from '../domain/notifications/should-notify.js';
import type { VapidKeys } from '../domain/push/vapid.js';
import { nextDelayMs, parseRetryAfter } from '../webhooks/backoff.js';
import { loadWebPush } from '../lazy-modules.js';
import { GuardedAgent } from '../webhooks/guarded-agent.js';
import { checkUrlForm, type TargetPolicy } from '../webhooks/ssrf-guard.js';
import { buildPayload } from './payload.js';
import type { VisibilityTracker } from './visibility.js';

/** RFC 8030 TTL: a push service keeps an undelivered notification this long (a day). */
const TTL_S = 86_400;
/** Waits between tries of one push (429, 5xx, network), in seconds; then it is dropped. */
const RETRY_S = [5, 30];
/** Pushes in flight on this node; more wait their turn. */
const CONCURRENCY = 32;
/** Pushes waiting beyond this are dropped (a notification is a hint: D66 never blocks a send). */
const MAX_QUEUED = 10_000;
const TIMEOUT_MS = 10_000;
/**
 * While nobody has a subscription (a server nobody enabled notifications on, the benchmarks),
 * sends skip the planning queries; whether anyone has one is looked up again this often (a
 * subscription made on another node counts from then on; one made here at once).
 */
const ANY_SUBS_RECHECK_MS = 10_000;

interface Job {
  sub: { id: number; endpoint: string; p256dh: string; auth: string };
  payload: string;
  topic: string;
  attempt: number;
}

/**
 * D66: the Web Push sender. After a message commits (domain/messages: `d.push.messageCreated`),
 * on the node that sent it: whom to notify (domain/notifications/should-notify.ts `notifyTargets`: DMs and
 * notifying mentions, as each person's settings say) → those with no visible tab on any node
 * (visibility.ts) → each of their devices' subscriptions gets one push: the payload encrypted
 * with RFC 8291 aes128gcm and a VAPID JWT (RFC 8292), both by the `web-push` library, POSTed
 * through the webhooks' SSRF-guarded client (D37: the endpoint is checked again at every try,
 * and at connection on the addresses actually used). 404/410 from the push service: the
 * subscription is gone and its row is deleted. 429/5xx/network: tried again after RETRY_S
 * (Retry-After honoured), then dropped. Pushes live in memory: a node stopping loses the ones
 * in flight (a notification, never a message).
 */
export class PushSender implements PushScheduler {
  private running = false;
  private inFlight = 0;
  private readonly queue: Job[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly idle = new Set<() => void>();
  private readonly agent: GuardedAgent;
  private readonly policy: TargetPolicy;
  private anySubs: { value: boolean; at: number } | undefined;
  private anySubsLookup: Promise<boolean> | undefined;

  constructor(
    private readonly domain: () => Domain,
    private readonly vapid: VapidKeys,
    private readonly visibility: VisibilityTracker,
    private readonly o: {
      policy: TargetPolicy;
      warn: (err: unknown, msg: string) => void;
      random?: () => number;
      retryS?: readonly number[];
    },
  ) {
    this.policy = o.policy;
    this.agent = new GuardedAgent({
      policy: this.policy,
      connectTimeoutMs: TIMEOUT_MS,
      keepAliveTimeoutMs: 10_000,
    });
  }

  get publicKey(): string {
    return this.vapid.publicKey;
  }

  start(): void {
    this.running = true;
  }

  async stop(): Promise<void> {
    this.running = false;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.queue.length = 0;
    if (this.inFlight > 0) await new Promise<void>((r) => this.idle.add(r));
    await this.agent.close();
  }

  subscribed(): void {
    this.anySubs = { value: true, at: Date.now() };
  }

  /** Has anyone a subscription? (cached: see ANY_SUBS_RECHECK_MS) */
  private async anyone(): Promise<boolean> {
    const c = this.anySubs;
    if (c && Date.now() - c.at < ANY_SUBS_RECHECK_MS) return c.value;
    this.anySubsLookup ??= this.domain()
      .db.selectFrom('push_subscriptions')
      .select('id')
      .limit(1)
      .executeTakeFirst()
      .then((row) => {
        this.anySubs = { value: row !== undefined, at: Date.now() };
        return row !== undefined;
      })
      .finally(() => {
        this.anySubsLookup = undefined;
      });
    return this.anySubsLookup;
  }

  messageCreated(message: Message): void {
    if (!this.running) return;
    // An interaction's ephemeral reply is for its invoker's eyes only; bots' events never notify.
    if (message.flags !== undefined && (message.flags & 1) === 1) return;
    // Nobody has a push subscription (known lately): nothing to plan, no promise (issue 29).
    const c = this.anySubs;
    if (c && !c.value && Date.now() - c.at < ANY_SUBS_RECHECK_MS) return;
    this.inFlight++;
    this.plan(message)
      .catch((err: unknown) => this.o.warn(err, 'push: could not plan notifications'))
      .finally(() => this.done());
  }

  private async plan(m: Message): Promise<void> {
    if (!(await this.anyone())) return;
    const d = this.domain();
    const targets = await notifyTargets(d, m);
    if (targets.length === 0) return;
    const visible = await this.visibility.visibleAnywhere(targets.map((t) => t.userId));
    const wanted = targets.filter((t) => !visible.has(t.userId));
    if (wanted.length === 0) return;
    const subs = await subscriptionsOf(
      d,
      wanted.map((t) => t.userId),
    );
    if (subs.length === 0) return;
    // One payload for everyone notified (serialized once); each device's encryption differs.
    const payload = JSON.stringify(await buildPayload(d, m));
    for (const s of subs) {
      this.enqueue({
        sub: { id: Number(s.id), endpoint: s.endpoint, p256dh: s.p256dh, auth: s.auth },
        payload,
        // RFC 8030 Topic: a newer push of the same channel replaces one still undelivered
        topic: `ch${m.channelId.toString(36)}`,
        attempt: 1,
      });
    }
  }

  private enqueue(job: Job): void {
    if (!this.running) return;
    if (this.inFlight < CONCURRENCY) {
      this.inFlight++;
      this.send(job)
        .catch((err: unknown) => this.o.warn(err, 'push: delivery failed'))
        .finally(() => this.done());
    } else if (this.queue.length < MAX_QUEUED) this.queue.push(job);
    else this.o.warn(new Error('push queue full'), 'push: dropped a notification');
  }

  private done(): void {
    this.inFlight--;
    const next = this.running ? this.queue.shift() : undefined;
    if (next) {
      this.enqueue(next);
      return;
    }
    if (this.inFlight === 0) {
      for (const r of this.idle) r();
      this.idle.clear();
    }
  }

  /** One try; the outcome decides: done, drop the subscription, or try again later. */
  private async send(job: Job): Promise<void> {
    const d = this.domain();
    const { sub } = job;
    let status: number | null = null;
    let retryAfterS: number | undefined;
    try {
      // D37: the form again at every try (an IP literal in a refused range fails here).
      checkUrlForm(sub.endpoint, this.policy);
      const webPush = await loadWebPush();
      const details = webPush.generateRequestDetails(
        { endpoint: sub.endpoint, keys: { p256dh: sub.p256dh, auth: sub.auth } },
        job.payload,
        {
          vapidDetails: {
            subject: this.vapid.subject,
            publicKey: this.vapid.publicKey,
            privateKey: this.vapid.privateKey,
          },
          TTL: TTL_S,
          contentEncoding: 'aes128gcm',
          urgency: 'high',
          topic: job.topic,
        },
      );
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(details.headers)) headers[k.toLowerCase()] = String(v);
      const abort = AbortSignal.timeout(TIMEOUT_MS);
      const res = await this.agent.request(sub.endpoint, {
        method: 'POST',
        headers,
        body: details.body ?? undefined,
        signal: abort,
      });
      status = res.statusCode;
      const ra = res.headers['retry-after'];
      retryAfterS = parseRetryAfter(Array.isArray(ra) ? ra[0] : ra, d.clock.now());
      await res.body.dump({ limit: 4096 }).catch(() => {});
    } catch (err) {
      // refused target, network error, timeout: tried again like a 5xx
      this.o.warn(err, 'push: try failed');
    }
    if (status !== null && status >= 200 && status <= 299) return;
    if (status === 404 || status === 410) {
      // D66: the subscription expired or was withdrawn: never push to it again.
      await dropSubscription(d, sub.id);
      return;
    }
    if (status !== null && status !== 429 && status < 500) {
      // 400 (bad request), 403 (VAPID refused), 413 (too large): trying again will not help
      this.o.warn(new Error(`push service answered ${status}`), 'push: refused');
      return;
    }
    const wait = nextDelayMs(
      job.attempt,
      this.o.retryS ?? RETRY_S,
      this.o.random ?? Math.random,
      retryAfterS,
    );
    if (wait === null || !this.running) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      this.enqueue({ ...job, attempt: job.attempt + 1 });
    }, wait);
    t.unref();
    this.timers.add(t);
  }
}
