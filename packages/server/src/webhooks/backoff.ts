/**
 * D39: waits between consecutive tries (configurable, PARLEY_WEBHOOK_RETRY_S), each with ±20 %
 * jitter so many failed deliveries do not retry in lockstep. A 429/503 with Retry-After is retried
 * no sooner than it asks. Pure: the caller passes the random source.
 */
export const JITTER = 0.2;

/**
 * The wait in ms after failed try number `attempt` (1-based), or null when that was the last try.
 */
export function nextDelayMs(
  attempt: number,
  delaysS: readonly number[],
  random: () => number,
  retryAfterS?: number,
): number | null {
  const base = delaysS[attempt - 1];
  if (base === undefined) return null;
  const jittered = base * 1000 * (1 - JITTER + 2 * JITTER * random());
  const floor = retryAfterS !== undefined && retryAfterS > 0 ? retryAfterS * 1000 : 0;
  return Math.round(Math.max(jittered, floor));
}

/** Retry-After as seconds: delta-seconds or an HTTP date; anything else is ignored. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^[0-9]+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, (at - nowMs) / 1000);
}
