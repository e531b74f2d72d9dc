import { describe, expect, it } from 'vitest';
import { sanitizeFilename } from '../../src/domain/files/filename.js';
import {
  dailyLimitOf,
  nextDailyReset,
  nextMonthlyReset,
  periodOf,
} from '../../src/domain/files/quota.js';
import { contentDisposition, parseRange } from '../../src/files/http-serving.js';

// Pure helpers of the files area (no database: the same on both dialect projects).
const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe('quota periods and resets (D24)', () => {
  it('resets daily at the next 00:00 UTC and monthly on the next 1st, across years', () => {
    expect(iso(nextDailyReset(at('2026-03-15T00:00:00.000Z')))).toBe('2026-03-16T00:00:00.000Z');
    expect(iso(nextDailyReset(at('2026-03-15T23:59:59.999Z')))).toBe('2026-03-16T00:00:00.000Z');
    expect(iso(nextMonthlyReset(at('2026-02-28T12:00:00.000Z')))).toBe('2026-03-01T00:00:00.000Z');
    expect(iso(nextMonthlyReset(at('2026-12-31T23:59:59.999Z')))).toBe('2027-01-01T00:00:00.000Z');
    expect(iso(nextMonthlyReset(at('2026-12-01T00:00:00.000Z')))).toBe('2027-01-01T00:00:00.000Z');
  });

  it('puts an instant in its UTC day and month', () => {
    const a = periodOf(at('2026-03-31T23:59:59.999Z'));
    const b = periodOf(at('2026-04-01T00:00:00.000Z'));
    expect(b.day).toBe(a.day + 1);
    expect(b.month).toBe(a.month + 1);
    expect(periodOf(at('2027-01-01T00:00:00.000Z')).month).toBe(
      periodOf(at('2026-12-31T00:00:00.000Z')).month + 1,
    );
  });

  it('computes the daily limit from the base and the messages sent (exact JSON numbers)', () => {
    const l = { dailyBase: 85_899_345_920, perMessage: 10_485_760, monthly: 2_147_483_648_000 };
    expect(dailyLimitOf(l, 0)).toBe(85_899_345_920);
    expect(dailyLimitOf(l, 3)).toBe(85_899_345_920 + 3 * 10_485_760);
    expect(dailyLimitOf({ ...l, perMessage: Number.MAX_SAFE_INTEGER }, 5)).toBe(
      Number.MAX_SAFE_INTEGER,
    );
  });
});

describe('byte ranges (D23)', () => {
  it('parses single ranges, clamps the end, answers suffixes', () => {
    expect(parseRange('bytes=0-9', 100)).toEqual({ kind: 'partial', start: 0, end: 9 });
    expect(parseRange('bytes=90-', 100)).toEqual({ kind: 'partial', start: 90, end: 99 });
    expect(parseRange('bytes=90-1000', 100)).toEqual({ kind: 'partial', start: 90, end: 99 });
    expect(parseRange('bytes=-10', 100)).toEqual({ kind: 'partial', start: 90, end: 99 });
    expect(parseRange('bytes=-1000', 100)).toEqual({ kind: 'partial', start: 0, end: 99 });
    expect(parseRange('BYTES=0-0', 100)).toEqual({ kind: 'partial', start: 0, end: 0 });
    expect(parseRange('bytes=99-99', 100)).toEqual({ kind: 'partial', start: 99, end: 99 });
  });

  it('416 for a range wholly past the end or an empty suffix', () => {
    expect(parseRange('bytes=100-', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=100-200', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=-0', 100)).toEqual({ kind: 'unsatisfiable' });
    expect(parseRange('bytes=99999999999999999999-', 100)).toEqual({ kind: 'unsatisfiable' });
  });

  it('ignores what it does not serve: no header, other units, bad syntax, several ranges', () => {
    for (const h of [
      undefined,
      'items=0-9',
      'bytes=',
      'bytes=-',
      'bytes=9-0',
      'bytes=a-b',
      'bytes=0-1,3-4',
      'bytes=0-9 ,',
    ])
      expect(parseRange(h, 100)).toEqual({ kind: 'full' });
  });
});

describe('Content-Disposition (D23, RFC 6266 / 8187)', () => {
  it('gives an ASCII fallback that cannot break out of its quotes, and the exact name encoded', () => {
    expect(contentDisposition('cat.png')).toBe(
      `inline; filename="cat.png"; filename*=UTF-8''cat.png`,
    );
    expect(contentDisposition('café.png')).toBe(
      `inline; filename="caf_.png"; filename*=UTF-8''caf%C3%A9.png`,
    );
    // Our names never carry these, but the header stays well-formed whatever it is given.
    expect(contentDisposition(`a"b\\c%d'e(f).png`)).toBe(
      `inline; filename="a_b_c_d'e(f).png"; filename*=UTF-8''a%22b%5Cc%25d%27e%28f%29.png`,
    );
  });
});

describe('file names (D22)', () => {
  it('keeps the last path segment, drops control and format characters, bounds the length', () => {
    expect(sanitizeFilename('../../etc/passwd.png')).toEqual({ name: 'passwd.png', ext: 'png' });
    expect(sanitizeFilename('C:\\Users\\x\\cat.JPG')).toEqual({ name: 'cat.jpg', ext: 'jpg' });
    expect(sanitizeFilename('a\u0000\u0007\u001b[31mb.gif').name).toBe('a_31mb.gif');
    expect(sanitizeFilename('\u202etxt.png').name).toBe('txt.png');
    expect(sanitizeFilename('').name).toBe('file');
    expect(sanitizeFilename('..').name).toBe('file');
    expect(sanitizeFilename('x.').name).toBe('x');
    expect(sanitizeFilename(`${'é'.repeat(300)}.mp4`).name).toBe(`${'é'.repeat(100)}.mp4`);
    expect(sanitizeFilename(`x.${'p'.repeat(50)}`).ext).toHaveLength(10);
    for (const raw of ['a/b', 'a\\b', 'a\nb', 'a\u2028b', 'a b', 'a;b', 'a%2fb'])
      expect(sanitizeFilename(raw).name).toMatch(/^[\p{L}\p{M}\p{N}._-]+$/u);
  });
});
