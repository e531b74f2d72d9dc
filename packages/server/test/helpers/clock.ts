import type { Clock } from '../../src/ids/clock.js';

/** A clock that stands still until the test moves it: every time-dependent figure is exact. */
export class FakeClock implements Clock {
  constructor(public ms = Date.UTC(2026, 10, 22, 3)) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}
