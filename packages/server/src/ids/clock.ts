/** The clock is the one thing tests may fake (docs/architecture.md#habit-5: only the clock and the far edge). */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Whole seconds `iso` formatted lately, each with its text up to the milliseconds. */
const prefixes = new Map<number, string>();
/** Year 10000 and later take the six-digit form (`+010000-…`): formatted by Date itself. */
const LAST_FOUR_DIGIT_MS = 253_402_300_800_000;

/**
 * ISO 8601 with milliseconds, as `Date#toISOString` writes it. Every message, event and answer
 * carries timestamps, and `toISOString` costs about a microsecond a call (issue 24's send profile):
 * a second's date and time are formatted once, the milliseconds appended. Several seconds are
 * kept, as a reply's answer carries its own time and the replied-to message's.
 */
export function iso(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms >= LAST_FOUR_DIGIT_MS)
    return new Date(ms).toISOString();
  const s = Math.floor(ms / 1000);
  let prefix = prefixes.get(s);
  if (prefix === undefined) {
    if (prefixes.size >= 1024) prefixes.clear();
    prefix = new Date(s * 1000).toISOString().slice(0, 20); // YYYY-MM-DDTHH:MM:SS.
    prefixes.set(s, prefix);
  }
  const milli = ms - s * 1000;
  return `${prefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}
