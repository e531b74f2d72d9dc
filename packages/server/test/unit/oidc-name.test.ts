import { describe, expect, it } from 'vitest';
import { nameFromClaims, withSuffix } from '../../src/domain/oidc/oidc-name.js';

// D69: a new person's name from the provider's claims, passing D46/D70's rules.
describe('D69 nameFromClaims', () => {
  it('preferred_username first, then nickname, name, the email before @', () => {
    expect(nameFromClaims({ preferred_username: 'ada', name: 'Ada L' })).toBe('ada');
    expect(nameFromClaims({ nickname: 'nick', name: 'Ada L' })).toBe('nick');
    expect(nameFromClaims({ name: 'Ada  Lovelace ' })).toBe('Ada Lovelace');
    expect(nameFromClaims({ email: 'grace@example.com' })).toBe('grace');
    expect(nameFromClaims({})).toBe('member');
  });

  it('drops invisible and control characters, clips to 32 code points, refuses too short', () => {
    expect(nameFromClaims({ preferred_username: 'a\u200bd\u3164a\u0000' })).toBe('ada');
    expect(nameFromClaims({ preferred_username: 'b\u202eob' })).toBe('bob');
    expect(nameFromClaims({ preferred_username: '😀'.repeat(40) })).toBe('😀'.repeat(32));
    expect(nameFromClaims({ preferred_username: '\u2800x' })).toBe('member');
    expect(nameFromClaims({ preferred_username: '   ', name: 'Zed' })).toBe('Zed');
  });

  it('a suffix fits within 32 code points', () => {
    expect(withSuffix('grace', 2)).toBe('grace-2');
    expect([...withSuffix('x'.repeat(32), 12)]).toHaveLength(32);
    expect(withSuffix('x'.repeat(32), 12).endsWith('-12')).toBe(true);
  });
});

describe('D54/D69 the callback is logged without its authorization code', () => {
  it('redactUrl hides `code` (state and iss stay, for tracing)', async () => {
    const { redactUrl, REDACTED } = await import('../../src/http/log-redaction.js');
    expect(redactUrl('/app/v1/auth/oidc/callback?code=abc123&state=s1&iss=https%3A%2F%2Fidp')).toBe(
      `/app/v1/auth/oidc/callback?code=${REDACTED}&state=s1&iss=https%3A%2F%2Fidp`,
    );
  });
});
