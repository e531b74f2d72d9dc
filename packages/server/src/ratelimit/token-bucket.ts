import type { RateSpec } from '../config/config.js';

/**
 * Pure token-bucket math (rate + burst), shared by every store: the in-memory map, the Redis
 * Lua script (same algorithm, written in Lua), and the gateway's per-connection frame limiter.
 * A bucket starts full (`burst` tokens) and refills at `rate` tokens per second.
 */
export interface BucketState {
  tokens: number;
  /** when `tokens` was last computed (ms) */
  atMs: number;
}

export interface Decision {
  allowed: boolean;
  /** D26 X-RateLimit-Limit: the bucket's burst */
  limit: number;
  /** D26 X-RateLimit-Remaining: whole requests left now */
  remaining: number;
  /** ms until the bucket is full again */
  resetAfterMs: number;
  /** ms until one token is available (0 when allowed) */
  retryAfterMs: number;
  /**
   * The store's clock when it decided (ms since the epoch; Redis TIME for the Redis store), so
   * X-RateLimit-Reset is stated on the clock that made the decision.
   */
  atMs: number;
  /**
   * D72: decided by this node's own buckets because the shared store (Redis) could not be
   * reached; absent when the store decided.
   */
  local?: true;
}

export function refill(state: BucketState | undefined, spec: RateSpec, nowMs: number): number {
  if (!state) return spec.burst;
  const elapsed = Math.max(0, nowMs - state.atMs);
  return Math.min(spec.burst, state.tokens + (elapsed * spec.rate) / 1000);
}

/**
 * The decision for a bucket holding `tokens` (already refilled to `nowMs`). Shared by `take` and
 * the Redis store, whose Lua script performs the same refill and comparison atomically and hands
 * back the refilled count: the headers are computed by this one function for every store.
 */
export function decide(
  tokens: number,
  spec: RateSpec,
  nowMs: number,
  cost = 1,
): { decision: Decision; left: number } {
  const allowed = tokens >= cost;
  const left = allowed ? tokens - cost : tokens;
  return {
    decision: {
      allowed,
      limit: spec.burst,
      remaining: Math.floor(left),
      resetAfterMs: Math.ceil(((spec.burst - left) * 1000) / spec.rate),
      retryAfterMs: allowed ? 0 : Math.ceil(((cost - tokens) * 1000) / spec.rate),
      atMs: nowMs,
    },
    left,
  };
}

/**
 * Take `cost` tokens if there are enough. A refused request consumes nothing (D26), so the
 * returned state is only to be stored when `allowed`.
 */
export function take(
  state: BucketState | undefined,
  spec: RateSpec,
  nowMs: number,
  cost = 1,
): { decision: Decision; state: BucketState } {
  const { decision, left } = decide(refill(state, spec, nowMs), spec, nowMs, cost);
  return { decision, state: { tokens: left, atMs: nowMs } };
}
