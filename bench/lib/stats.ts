/** Percentiles over raw samples (floats, unlike autocannon's integer-millisecond histogram). */

/** Sorts in place and returns the same array (callers pass their own copy when they care). */
function sorted(values: Float64Array | number[]): Float64Array {
  const a = values instanceof Float64Array ? values : Float64Array.from(values);
  return a.sort();
}

/** Nearest-rank percentile of already sorted samples; NaN for none. */
export function percentileOfSorted(s: Float64Array, p: number): number {
  if (s.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))] ?? Number.NaN;
}

export interface LatencySummary {
  readonly count: number;
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

export function summarize(values: Float64Array | number[]): LatencySummary {
  const s = sorted(values);
  let sum = 0;
  for (const v of s) sum += v;
  return {
    count: s.length,
    p50: percentileOfSorted(s, 50),
    p90: percentileOfSorted(s, 90),
    p99: percentileOfSorted(s, 99),
    max: s.length ? (s[s.length - 1] ?? Number.NaN) : Number.NaN,
    mean: s.length ? sum / s.length : Number.NaN,
  };
}

/** A growable list of float samples that does not allocate per sample. */
export class Samples {
  private buf: Float64Array;
  private n = 0;

  constructor(initialCapacity = 1024) {
    this.buf = new Float64Array(Math.max(16, initialCapacity));
  }

  push(v: number): void {
    if (this.n === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.n++] = v;
  }

  get length(): number {
    return this.n;
  }

  /** a copy of the samples so far */
  values(): Float64Array {
    return this.buf.slice(0, this.n);
  }
}

export const round = (v: number, digits = 2): number => {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
};

/** Monotonic milliseconds shared by every thread and process on the machine (CLOCK_MONOTONIC). */
export const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
