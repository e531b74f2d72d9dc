/**
 * The shapes every benchmark shares: what it is given (a context with the run's size) and what
 * it hands back (figures, a table, details). The runner prints and stores them; the benchmarks
 * never print summary lines themselves, so every result looks the same.
 */

/** How big a run is. `smoke` is the tiny size `npm test` runs so the benchmarks cannot rot. */
export interface BenchContext {
  readonly smoke: boolean;
  /** multiplies counts and durations of a full run (1 = the sizes bench/README.md documents) */
  readonly scale: number;
  /** write server CPU profiles here (`--profile`), or undefined */
  readonly profileDir: string | undefined;
  /** progress lines (stderr), so stdout keeps only tables and summary lines */
  log(message: string): void;
}

/** A target on a figure: `>=` or `<=` a value. */
export interface Target {
  readonly op: '>=' | '<=';
  readonly value: number;
}

export interface Figure {
  /** stable id, e.g. `ratio_send_hello_c10` (the smoke test and latest.json rely on it) */
  readonly id: string;
  /** what it measures, one short phrase */
  readonly label: string;
  readonly value: number;
  /** `x` for a ratio, else a unit: `req/s`, `ms`, `KiB/conn`, `MiB`, `count`, … */
  readonly unit: string;
  /** how a ratio was formed, e.g. `send 2,345 req/s ÷ hello 5,600 req/s` */
  readonly basis?: string;
  readonly target?: Target;
}

export interface TableRow {
  readonly [column: string]: string | number;
}

export type BenchStatus = 'ok' | 'skipped' | 'error';

export interface BenchOutcome {
  readonly status: BenchStatus;
  /** why it was skipped or failed */
  readonly reason?: string;
  readonly figures: readonly Figure[];
  readonly table: readonly TableRow[];
  /** anything else worth keeping in latest.json (raw numbers, sizes used) */
  readonly details: Record<string, unknown>;
  /** things that make a figure doubtful (failed requests, dropped connections), printed */
  readonly warnings?: readonly string[];
}

export interface Benchmark {
  readonly name: string;
  /** one line for `--list` and the report */
  readonly title: string;
  run(ctx: BenchContext): Promise<BenchOutcome>;
  /** wall-time bound of a full run in seconds (default 300; × --scale when above 1) */
  readonly watchdogS?: number;
}

/** A benchmark that cannot run yet (the server lacks what it measures): not a failure. */
export class BenchSkip extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'BenchSkip';
  }
}

export function targetMet(f: Figure): boolean | undefined {
  if (!f.target) return undefined;
  return f.target.op === '>=' ? f.value >= f.target.value : f.value <= f.target.value;
}
