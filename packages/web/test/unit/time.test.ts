import { describe, expect, it } from 'vitest';
import { dayKey, dayName, stamp, when } from '../../src/lib/time.js';

// How the web app writes a moment (lib/time.ts): one form for dates, "Today"/"Yesterday" in the
// message list. Local time; noon keeps every case clear of a time zone's midnight.
const NOW = new Date(2026, 10, 27, 12, 0).getTime();

describe('moments in the web app', () => {
  it('names the day: Today, Yesterday, else the date in full', () => {
    expect(dayName(new Date(2026, 10, 27, 0, 5).getTime(), NOW)).toBe('Today');
    expect(dayName(new Date(2026, 10, 26, 23, 59).getTime(), NOW)).toBe('Yesterday');
    expect(dayName(new Date(2026, 10, 25, 12, 0).getTime(), NOW)).toMatch(/2026/);
    expect(dayName(new Date(2026, 10, 25, 12, 0).getTime(), NOW)).not.toMatch(/Today|Yesterday/);
    // across a month's and a year's end
    const jan1 = new Date(2027, 0, 1, 12, 0).getTime();
    expect(dayName(new Date(2026, 11, 31, 8, 0).getTime(), jan1)).toBe('Yesterday');
  });

  it("stamps a message with the day's name and the time, without seconds", () => {
    expect(stamp(new Date(2026, 10, 27, 10, 54).getTime(), NOW)).toMatch(/^Today at 10:54\sAM$/);
    expect(stamp(new Date(2026, 10, 26, 21, 2).getTime(), NOW)).toMatch(/^Yesterday at 9:02\sPM$/);
    expect(stamp(new Date(2026, 10, 2, 10, 54).getTime(), NOW)).toMatch(/^Nov 2, 2026 10:54\sAM$/);
    expect(when(new Date(2026, 10, 2, 10, 54).getTime())).toMatch(/^Nov 2, 2026, 10:54\sAM$/);
  });

  it('keys a day by the local calendar', () => {
    expect(dayKey(new Date(2026, 10, 27, 0, 0).getTime())).toBe(
      dayKey(new Date(2026, 10, 27, 23, 59).getTime()),
    );
    expect(dayKey(new Date(2026, 10, 27, 23, 59).getTime())).not.toBe(
      dayKey(new Date(2026, 10, 28, 0, 0).getTime()),
    );
  });
});
