import { describe, expect, it } from 'vitest';
import { ConfigError, isLoopbackHost, loadConfig } from '../../src/config/config.js';

// D69: the OpenID provider's settings are validated at start, with one clear line.
const CLIENT = { PARLEY_OIDC_CLIENT_ID: 'parley', PARLEY_OIDC_CLIENT_SECRET: 'secret-0123456789' };
const load = (env: Record<string, string>) => loadConfig({ PARLEY_DATA_DIR: '/tmp/x', ...env });

describe('D69 OpenID settings', () => {
  it('off by default: passwords on, no provider, the button says "SSO"', () => {
    const c = load({});
    expect(c.oidcIssuer).toBeUndefined();
    expect(c.passwordLogin).toBe(true);
    expect(c.oidcName).toBe('SSO');
  });

  it('an https issuer is kept exactly as written (it must equal the provider’s `issuer`)', () => {
    for (const issuer of [
      'https://sso.example.com/realms/staff',
      'https://auth.example.com/application/o/parley/',
      'https://accounts.google.com',
    ])
      expect(load({ PARLEY_OIDC_ISSUER: issuer, ...CLIENT }).oidcIssuer).toBe(issuer);
  });

  it('http:// only on a loopback address (127.0.0.0/8, [::1], localhost)', () => {
    for (const issuer of [
      'http://127.0.0.1:8081',
      'http://127.9.0.1/x',
      'http://[::1]:9',
      'http://localhost:3000',
    ])
      expect(load({ PARLEY_OIDC_ISSUER: issuer, ...CLIENT }).oidcIssuer).toBe(issuer);
    for (const issuer of [
      'http://sso.example.com',
      'http://10.0.0.5',
      'http://localhost.example.com',
      'ftp://x',
    ])
      expect(() => load({ PARLEY_OIDC_ISSUER: issuer, ...CLIENT })).toThrow(
        /^PARLEY_OIDC_ISSUER: the issuer must be an https:\/\/ URL \(http:\/\/ only on a loopback address/,
      );
    expect(() => load({ PARLEY_OIDC_ISSUER: 'not a url', ...CLIENT })).toThrow(ConfigError);
    expect(isLoopbackHost('127.0.0.1')).toBe(true);
    expect(isLoopbackHost('128.0.0.1')).toBe(false);
  });

  it('issuer, client id and secret go together', () => {
    expect(() => load({ PARLEY_OIDC_ISSUER: 'https://sso.example.com' })).toThrow(
      'PARLEY_OIDC_CLIENT_ID: PARLEY_OIDC_ISSUER, PARLEY_OIDC_CLIENT_ID and PARLEY_OIDC_CLIENT_SECRET go together',
    );
    expect(() => load(CLIENT)).toThrow(/^PARLEY_OIDC_ISSUER: .*go together/);
  });

  it('PARLEY_PASSWORD_LOGIN=false needs a provider (otherwise nobody could sign in)', () => {
    expect(() => load({ PARLEY_PASSWORD_LOGIN: 'false' })).toThrow(
      /^PARLEY_PASSWORD_LOGIN: false needs PARLEY_OIDC_ISSUER/,
    );
    const c = load({
      PARLEY_PASSWORD_LOGIN: 'false',
      PARLEY_OIDC_ISSUER: 'https://sso.example.com',
      ...CLIENT,
    });
    expect(c.passwordLogin).toBe(false);
    expect(() => load({ PARLEY_PASSWORD_LOGIN: 'maybe' })).toThrow(
      /^PARLEY_PASSWORD_LOGIN: expected true or false/,
    );
  });

  it('PARLEY_OIDC_NAME: 1–40 printable characters', () => {
    expect(load({ PARLEY_OIDC_NAME: ' Acme Keycloak ' }).oidcName).toBe('Acme Keycloak');
    expect(() => load({ PARLEY_OIDC_NAME: 'x'.repeat(41) })).toThrow(/^PARLEY_OIDC_NAME/);
    expect(() => load({ PARLEY_OIDC_NAME: 'a\u202eb' })).toThrow(/^PARLEY_OIDC_NAME/);
  });
});
