import { describe, expect, it } from 'vitest';
import { ApiError, describe as describeError, plainProblem } from '../../src/lib/api.js';
import { describeAgent } from '../../src/lib/user-agent.js';

// Issue #24's small things a person noticed on the first evening.

describe('sessions read as browser and system, not raw User-Agent strings', () => {
  it.each([
    [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
      'Chrome on Windows',
    ],
    [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.2592.56',
      'Edge on Windows',
    ],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', 'Firefox on Linux'],
    [
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
      'Safari on macOS',
    ],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
      'Safari on iPhone',
    ],
    [
      'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36',
      'Chrome on Android',
    ],
    [
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/140.0.0.0 Safari/537.36',
      'Headless Chrome on Linux',
    ],
    ['curl/8.5.0', 'curl'],
    ['', 'Unknown device'],
    ['something else', 'Unknown browser'],
  ])('%s → %s', (ua, expected) => expect(describeAgent(ua)).toBe(expected));
});

describe('validator wording is said plainly', () => {
  const raw = 'must NOT have fewer than 8 characters (Unicode code points)';
  it('a short password', () => {
    expect(plainProblem(raw)).toBe('Use at least 8 characters.');
    const err = new ApiError(400, 'INVALID_REQUEST', `body/password ${raw}`, [
      { field: 'body.password', problem: raw },
    ]);
    expect(err.field('password')).toBe('Use at least 8 characters.');
    expect(describeError(err)).toBe('password: Use at least 8 characters.');
  });
  it("the server's own sentences pass unchanged", () => {
    expect(plainProblem('is too common: choose another password')).toBe(
      'is too common: choose another password',
    );
  });
});
