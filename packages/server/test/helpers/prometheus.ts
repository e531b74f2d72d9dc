import { createRequire } from 'node:module';

/** An outside parser of the Prometheus text format (prom2json's output shape). */
export interface Family {
  name: string;
  help: string;
  type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED';
  metrics: Array<{
    labels?: Record<string, string>;
    value?: string;
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
  }>;
}

export const parsePrometheus = createRequire(import.meta.url)('parse-prometheus-text-format') as (
  text: string,
) => Family[];

/** The sample of `name` whose labels include `labels` (value as a number; histograms: count). */
export function sample(
  families: Family[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const f = families.find((x) => x.name === name);
  const m = f?.metrics.find((s) => Object.entries(labels).every(([k, v]) => s.labels?.[k] === v));
  if (!m) return undefined;
  return Number(m.value ?? m.count);
}

/**
 * Observations of a histogram series. The parser above keeps a histogram's buckets but drops
 * its labels, count and sum, so histograms are read from the in-process registry (the test's
 * server runs in this process) — prom-client's own JSON view of the same series.
 */
export async function histogramCount(
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const { registry } = await import('../../src/metrics/metrics.js');
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const values = (metric?.values ?? []) as Array<{
    metricName?: string;
    labels: Record<string, string | number>;
    value: number;
  }>;
  return values
    .filter(
      (v) =>
        v.metricName === `${name}_count` &&
        Object.entries(labels).every(([k, x]) => String(v.labels[k]) === x),
    )
    .reduce((n, v) => n + v.value, 0);
}
