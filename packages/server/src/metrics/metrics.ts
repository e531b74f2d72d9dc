import { constants, PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';
import client from 'prom-client';
import { HttpSeries } from './http-series.js';

/**
 * D53: the server's Prometheus series, in one place. Transports and workers report through the
 * small functions below (no prom-client types leak out), so the gateway, the people's gateway and
 * the webhook worker each add one call where something happens. One registry per process: the
 * series describe the process, however many apps a test builds in it.
 *
 * Labels are bounded: routes are templates (`/api/v1/channels/:channelId/messages`), never raw
 * URLs; kinds and outcomes are fixed words.
 */
export type ConnectionKind = 'bot' | 'person';
export type WebhookOutcome = 'delivered' | 'http_error' | 'network_error' | 'refused';

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });

/**
 * The V8 heap in use just after the last full (mark-compact) collection: what the process holds
 * on to. RSS and the heap's size rise and fall with the collector (a sawtooth of ±20 % under load,
 * bench/README "soak"), so a leak shows here first and plainly — this figure rises and stays up.
 * 0 until the first full collection. Read when the collection's performance entry is delivered,
 * a moment after it ends: what was allocated in between counts too.
 */
let heapAfterFullGc = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = (e as { detail?: { kind?: number } }).detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MAJOR)
      heapAfterFullGc = v8.getHeapStatistics().used_heap_size;
  }
}).observe({ entryTypes: ['gc'] });
new client.Gauge({
  name: 'parley_heap_retained_bytes',
  help: 'V8 heap in use just after the last full garbage collection (0 before the first)',
  registers: [registry],
  collect() {
    this.set(heapAfterFullGc);
  },
});

// D53: counted in plain numbers, rendered at scrape (metrics/http-series.ts: issue 29).
const http = new HttpSeries([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]);
for (const family of [
  http.counter(
    'parley_http_requests_total',
    'HTTP requests answered, by method, route template and status',
  ),
  http.histogram(
    'parley_http_request_duration_seconds',
    'HTTP request durations, by method, route template and status',
  ),
])
  registry.registerMetric(family as unknown as client.Metric);
const connections = new client.Gauge({
  name: 'parley_gateway_connections',
  help: 'Open gateway connections on this node, by kind (bot, person)',
  labelNames: ['kind'] as const,
  registers: [registry],
});
const connectionsOpened = new client.Counter({
  name: 'parley_gateway_connections_opened_total',
  help: 'Gateway connections opened on this node, by kind',
  labelNames: ['kind'] as const,
  registers: [registry],
});
const connectionsClosed = new client.Counter({
  name: 'parley_gateway_connections_closed_total',
  help: 'Gateway connections closed on this node, by kind and close code',
  labelNames: ['kind', 'code'] as const,
  registers: [registry],
});
/** Dispatches since the last scrape: counted in plain numbers on the hot path (per recipient). */
const unscraped = { bot: 0, person: 0 };
const dispatches = new client.Counter({
  name: 'parley_gateway_dispatches_total',
  help: 'Dispatch frames (op 0) sent, by connection kind',
  labelNames: ['kind'] as const,
  registers: [registry],
  collect() {
    for (const kind of ['bot', 'person'] as const) {
      if (unscraped[kind] > 0) this.inc({ kind }, unscraped[kind]);
      unscraped[kind] = 0;
    }
  },
});
const outboxLag = new client.Histogram({
  name: 'parley_outbox_lag_seconds',
  help: 'From an event committing to its first live dispatch on a gateway connection of this node',
  buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});
const webhookTries = new client.Counter({
  name: 'parley_webhook_tries_total',
  help: 'Webhook delivery tries, by outcome (delivered, http_error, network_error, refused)',
  labelNames: ['outcome'] as const,
  registers: [registry],
});
const webhookLatency = new client.Histogram({
  name: 'parley_webhook_try_duration_seconds',
  help: 'Webhook delivery try latency, by outcome',
  labelNames: ['outcome'] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});
const rateLimited = new client.Counter({
  name: 'parley_rate_limit_refusals_total',
  help: 'Requests refused with 429 by a rate-limit bucket',
  labelNames: ['bucket'] as const,
  registers: [registry],
});
/** D72: the database and Redis, as this node sees them now, and how often each went away. */
export type DependencyName = 'database' | 'redis';
const dependencyUp = new client.Gauge({
  name: 'parley_dependency_up',
  help: 'Whether this node reaches a dependency now (1) or not (0): database, redis',
  labelNames: ['dependency'] as const,
  registers: [registry],
});
const dependencyOutages = new client.Counter({
  name: 'parley_dependency_outages_total',
  help: 'Outages of a dependency seen by this node (each begins with one warn log line)',
  labelNames: ['dependency'] as const,
  registers: [registry],
});
const localRateDecisions = new client.Counter({
  name: 'parley_rate_limit_local_decisions_total',
  help: "Rate-limit decisions made with this node's own buckets because Redis was unreachable",
  registers: [registry],
});
/** D70: what people's gateways on this node hold in memory (one per app; tests build several). */
const peopleMemory = new Set<() => { unsent: number; replay: number }>();
const sumOf = (k: 'unsent' | 'replay'): number => {
  let n = 0;
  for (const f of peopleMemory) n += f()[k];
  return n;
};
new client.Gauge({
  name: 'parley_gateway_unsent_bytes',
  help: "Bytes queued for people's gateway sockets on this node and not yet sent (D70: a socket past 4 MiB closes with 4000)",
  registers: [registry],
  collect() {
    this.set(sumOf('unsent'));
  },
});
new client.Gauge({
  name: 'parley_gateway_replay_bytes',
  help: "Frame bytes of the events people's replay buffers hold on this node, each event counted once (D70: at most 1 MiB a session)",
  registers: [registry],
  collect() {
    this.set(sumOf('replay'));
  },
});

/** D70: report a people's gateway's memory in the gauges above; returns the way to stop. */
export function watchPeopleMemory(f: () => { unsent: number; replay: number }): () => void {
  peopleMemory.add(f);
  return () => void peopleMemory.delete(f);
}

for (const kind of ['bot', 'person'] as const) {
  connections.set({ kind }, 0);
  connectionsOpened.inc({ kind }, 0);
  dispatches.inc({ kind }, 0);
}

const open = { bot: 0, person: 0 };

export function httpRequest(method: string, route: string, status: number, ms: number): void {
  http.observe(method, route, status, ms / 1000);
}

export function connectionOpened(kind: ConnectionKind): void {
  open[kind]++;
  connections.set({ kind }, open[kind]);
  connectionsOpened.inc({ kind });
}

export function connectionClosed(kind: ConnectionKind, code: number): void {
  open[kind] = Math.max(0, open[kind] - 1);
  connections.set({ kind }, open[kind]);
  connectionsClosed.inc({ kind, code: String(code) });
}

/** Open gateway connections of this node (D52 stats, people's connections). */
export const openConnections = (kind: ConnectionKind): number => open[kind];

/** A dispatch sent; `committedAt` (ms) when it is a live event, for the outbox lag. */
/**
 * A dispatch frame was sent. `event` (live dispatches only): the event and when it committed; the
 * lag is observed once per event and node — the fan-out hands an event to all its local
 * recipients in one go, so a repeat of the last event is not observed again.
 */
export function dispatched(kind: ConnectionKind, event?: { committedAt: number }): void {
  unscraped[kind]++;
  if (event === undefined || event === lastObserved) return;
  lastObserved = event;
  outboxLag.observe(Math.max(0, Date.now() - event.committedAt) / 1000);
}
let lastObserved: object | undefined;

export function webhookTry(outcome: WebhookOutcome, ms: number): void {
  webhookTries.inc({ outcome });
  webhookLatency.observe({ outcome }, ms / 1000);
}

export function rateLimitRefused(bucket: string): void {
  rateLimited.inc({ bucket });
}

/** D72: a dependency is reached again (`up`) or lost (an outage begins). */
export function dependencyState(dependency: DependencyName, up: boolean): void {
  dependencyUp.set({ dependency }, up ? 1 : 0);
  if (!up) dependencyOutages.inc({ dependency });
  else dependencyOutages.inc({ dependency }, 0);
}

/** D72: a rate limit decided by this node alone (Redis unreachable). */
export function rateDecidedLocally(): void {
  localRateDecisions.inc();
}

export const metricsContentType = registry.contentType;
export const renderMetrics = (): Promise<string> => registry.metrics();
