import autocannon from 'autocannon';
import { Samples, summarize, type LatencySummary } from './stats.js';

/**
 * HTTP load with autocannon's programmatic API. autocannon's own histogram keeps whole
 * milliseconds, too coarse for sub-millisecond requests, so every response time (a float, in ms)
 * is collected here and summarized with our own percentiles. Only 2xx answers count.
 */
export interface LoadOptions {
  readonly origin: string;
  readonly path: string;
  readonly method?: 'GET' | 'POST';
  readonly body?: string;
  readonly headers?: Record<string, string>;
  readonly connections: number;
  /** seconds (ignored when `amount` is given) */
  readonly durationS?: number;
  /** stop after this many requests */
  readonly amount?: number;
  /** headers of the i-th connection (e.g. one bot token per connection) */
  readonly connectionHeaders?: (index: number) => Record<string, string>;
  /** a fresh path for every request (e.g. a random cursor) */
  readonly pathFor?: () => string;
  /** a fresh path and headers for every request (e.g. each bot sending to its own channel) */
  readonly requestFor?: () => { path: string; headers: Record<string, string> };
  /** stop after this many seconds even if `amount` is not reached (keeps a run bounded) */
  readonly maxS?: number;
  /** also push every 2xx latency here (to pool several runs) */
  readonly into?: Samples;
}

export interface LoadResult {
  /** 2xx answers per second of the run */
  readonly reqPerSec: number;
  readonly ok: number;
  readonly non2xx: number;
  readonly errors: number;
  readonly timeouts: number;
  readonly durationS: number;
  readonly latency: LatencySummary;
}

export async function runLoad(o: LoadOptions): Promise<LoadResult> {
  const latencies = new Samples(65_536);
  let ok = 0;
  let non2xx = 0;
  let clientIndex = 0;
  const baseHeaders = { ...o.headers };
  if (o.body !== undefined) baseHeaders['content-type'] ??= 'application/json';
  const started = performance.now();
  let finish: (err: unknown, result?: autocannon.Result) => void = () => {};
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finish = (err, result) =>
      err || !result
        ? reject(err instanceof Error ? err : new Error(`autocannon failed: ${String(err)}`))
        : resolve(result);
  });
  // The callback form returns the instance (its 'response' events carry float latencies).
  const instance = autocannon(
    {
      url: o.origin + o.path,
      method: o.method ?? 'GET',
      headers: baseHeaders,
      ...(o.body !== undefined ? { body: o.body } : {}),
      connections: o.connections,
      ...(o.amount !== undefined ? { amount: o.amount } : { duration: o.durationS ?? 5 }),
      timeout: 30,
      // autocannon checks whether to stop at each sample (default every second): a finer
      // interval keeps sub-second runs (smoke sizes) as short as asked.
      sampleInt: 100,
      ...(o.connectionHeaders
        ? {
            setupClient: (client: autocannon.Client) => {
              client.setHeaders({ ...baseHeaders, ...o.connectionHeaders?.(clientIndex++) });
            },
          }
        : {}),
      ...(o.pathFor || o.requestFor
        ? {
            requests: [
              {
                method: o.method ?? 'GET',
                path: o.path,
                setupRequest: (req: autocannon.Request) => {
                  if (o.pathFor) return { ...req, path: o.pathFor() };
                  const r = o.requestFor?.();
                  if (!r) return req;
                  return { ...req, path: r.path, headers: { ...req.headers, ...r.headers } };
                },
              },
            ],
          }
        : {}),
    },
    (err, result) => finish(err, result),
  );
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) {
      ok += 1;
      latencies.push(responseTime);
      o.into?.push(responseTime);
    } else {
      non2xx += 1;
    }
  });
  const cap = o.maxS === undefined ? undefined : setTimeout(() => instance.stop(), o.maxS * 1000);
  const result = await done.finally(() => clearTimeout(cap));
  const durationS = (performance.now() - started) / 1000;
  return {
    reqPerSec: ok / durationS,
    ok,
    non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    durationS,
    latency: summarize(latencies.values()),
  };
}

/** A short failure description when a load run had errors, else undefined. */
export function loadProblems(r: LoadResult, what: string): string | undefined {
  const bad = r.non2xx + r.errors + r.timeouts;
  if (bad === 0) return undefined;
  return `${what}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts of ${r.ok + bad}`;
}
