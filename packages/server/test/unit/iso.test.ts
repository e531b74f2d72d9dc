import { describe, expect, it } from 'vitest';
import { iso } from '../../src/ids/clock.js';

/** `iso` formats a second once and appends the milliseconds: it must agree with Date exactly. */
describe('iso (ids/clock.ts)', () => {
  it('writes what Date#toISOString writes, across seconds, days and years', () => {
    const samples = [
      0, 1, 9, 10, 99, 100, 999, 1000, 1001, 59_999, 60_000, 86_399_999, 86_400_000,
      951_782_400_000 /* 2000-02-29 */, 1_700_000_000_123, 1_799_999_999_999,
      253_402_300_799_999 /* 9999-12-31T23:59:59.999Z */,
    ];
    for (let ms = 1_764_201_600_000 - 2_500; ms < 1_764_201_600_000 + 2_500; ms += 7)
      samples.push(ms);
    for (const ms of samples) expect(iso(ms), String(ms)).toBe(new Date(ms).toISOString());
  });

  it('leaves what it does not format by the second to Date: fractions, negatives, year 10000', () => {
    for (const ms of [1.5, 1_700_000_000_123.9, -1, -1_000.5, 253_402_300_800_000, 8.64e15])
      expect(iso(ms), String(ms)).toBe(new Date(ms).toISOString());
    expect(() => iso(Number.NaN)).toThrow(RangeError);
    expect(() => iso(8.64e15 + 1)).toThrow(RangeError);
  });

  it('keeps several seconds apart (a reply carries two times)', () => {
    expect(iso(1_764_201_601_500)).toBe('2025-11-27T00:00:01.500Z');
    expect(iso(1_764_201_599_500)).toBe('2025-11-26T23:59:59.500Z');
    expect(iso(1_764_201_601_005)).toBe('2025-11-27T00:00:01.005Z');
    // more seconds than it keeps: still exact
    for (let ms = 0; ms < 3_000_000; ms += 1_001) expect(iso(ms)).toBe(new Date(ms).toISOString());
  });
});
