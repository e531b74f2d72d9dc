import type { BenchContext } from './types.js';

/**
 * A full-run size, scaled by `--scale`, or the smoke size. Benchmarks state both numbers where
 * they use them, so bench/README.md and the code say the same thing.
 */
export function size(ctx: BenchContext, full: number, smoke: number, min = smoke): number {
  if (ctx.smoke) return smoke;
  return Math.max(min, Math.round(full * ctx.scale));
}

/** Seconds, like `size` but not rounded to whole numbers. */
export function seconds(ctx: BenchContext, full: number, smoke: number, min = smoke): number {
  if (ctx.smoke) return smoke;
  return Math.max(min, full * ctx.scale);
}
