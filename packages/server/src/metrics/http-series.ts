/**
 * D53: HTTP requests by method, route template and status — a counter and a duration histogram —
 * counted in plain numbers and turned into Prometheus' two families only when scraped.
 *
 * Why not prom-client's Counter and Histogram: every request reported to them builds a label
 * object and hashes it twice (one hash per metric), then searches the buckets; on a send that was
 * about 2.5 % of its CPU, and 5 % of a request that does little else (issue 29, bench/README
 * "session 23"). Here a request finds its series through three map lookups on values it already
 * has, and adds to one bucket; the cumulative counts Prometheus wants are summed at scrape.
 *
 * The text is what prom-client wrote for the same series (the metrics test reads it with an outside
 * parser): `_bucket{le="…",…}` cumulative, then `_sum` and `_count`; labels in the order (le,)
 * method, route, status.
 */

/** The shape prom-client's registry reads from a metric when it renders (`Registry.metrics`). */
export interface RenderedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: Array<{ labels: Record<string, string | number>; value: number; metricName?: string }>;
}

/** What the registry holds for a family: its name, its type, and how to render it. */
export interface Family {
  name: string;
  type: RenderedMetric['type'];
  get: () => RenderedMetric;
}

class Series {
  count = 0;
  sum = 0;
  /** per bucket, not cumulative; the last is +Inf */
  readonly buckets: number[];

  constructor(
    readonly method: string,
    readonly route: string,
    readonly status: number,
    size: number,
  ) {
    this.buckets = new Array<number>(size + 1).fill(0);
  }
}

export class HttpSeries {
  /** route → method → status: the three values a request has, no key string built */
  private readonly byRoute = new Map<string, Map<string, Map<number, Series>>>();

  /** @param bounds the histogram's upper bounds in seconds, ascending */
  constructor(private readonly bounds: readonly number[]) {}

  observe(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.byRoute.get(route);
    if (byMethod === undefined) this.byRoute.set(route, (byMethod = new Map()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map()));
    let s = byStatus.get(status);
    if (s === undefined) {
      s = new Series(method, route, status, this.bounds.length);
      byStatus.set(status, s);
    }
    s.count++;
    s.sum += seconds;
    let i = 0;
    while (i < this.bounds.length && seconds > (this.bounds[i] as number)) i++;
    s.buckets[i] = (s.buckets[i] ?? 0) + 1;
  }

  private *series(): Generator<Series> {
    for (const byMethod of this.byRoute.values())
      for (const byStatus of byMethod.values()) yield* byStatus.values();
  }

  /** The counter family: one value per series. */
  counter(name: string, help: string): Family {
    return {
      name,
      type: 'counter',
      get: () => ({
        name,
        help,
        type: 'counter',
        aggregator: 'sum',
        values: [...this.series()].map((s) => ({ labels: labelsOf(s), value: s.count })),
      }),
    };
  }

  /** The histogram family: cumulative buckets, then the sum and the count, per series. */
  histogram(name: string, help: string): Family {
    return {
      name,
      type: 'histogram',
      get: () => {
        const values: RenderedMetric['values'] = [];
        for (const s of this.series()) {
          const labels = labelsOf(s);
          let running = 0;
          s.buckets.forEach((n, i) => {
            running += n;
            const le = this.bounds[i] ?? '+Inf';
            values.push({
              labels: { le, ...labels },
              value: running,
              metricName: `${name}_bucket`,
            });
          });
          values.push({ labels, value: s.sum, metricName: `${name}_sum` });
          values.push({ labels, value: s.count, metricName: `${name}_count` });
        }
        return { name, help, type: 'histogram', aggregator: 'sum', values };
      },
    };
  }
}

const labelsOf = (s: Series): Record<string, string> => ({
  method: s.method,
  route: s.route,
  status: String(s.status),
});
