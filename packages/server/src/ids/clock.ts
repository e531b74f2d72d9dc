/** The clock is the one thing tests may fake (docs/architecture.md#habit-5: only the clock and the far edge). */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export const iso = (ms: number): string => new Date(ms).toISOString();
