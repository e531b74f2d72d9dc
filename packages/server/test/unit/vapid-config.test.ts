import webPush from 'web-push';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { defaultSubject } from '../../src/domain/push/vapid.js';

// D66: the VAPID pair is configured as a pair of base64url keys of the right sizes, or not at all
// (then generated once and kept in the database: push.test.ts); the subject is mailto: or https:.
describe('VAPID configuration (D66)', () => {
  const pair = webPush.generateVAPIDKeys();

  it('a pair as web-push prints it is taken; one alone, or a wrong size, is one clear line', () => {
    const c = loadConfig({
      PARLEY_VAPID_PUBLIC_KEY: pair.publicKey,
      PARLEY_VAPID_PRIVATE_KEY: pair.privateKey,
      PARLEY_VAPID_SUBJECT: 'mailto:ops@example.com',
    });
    expect(c.vapidPublicKey).toBe(pair.publicKey);
    expect(c.vapidPrivateKey).toBe(pair.privateKey);
    expect(c.vapidSubject).toBe('mailto:ops@example.com');
    expect(() => loadConfig({ PARLEY_VAPID_PUBLIC_KEY: pair.publicKey })).toThrow(ConfigError);
    expect(() =>
      loadConfig({
        PARLEY_VAPID_PUBLIC_KEY: pair.privateKey,
        PARLEY_VAPID_PRIVATE_KEY: pair.privateKey,
      }),
    ).toThrow(/PARLEY_VAPID_PUBLIC_KEY: must be 65 bytes/);
    expect(() => loadConfig({ PARLEY_VAPID_SUBJECT: 'http://example.com' })).toThrow(
      /PARLEY_VAPID_SUBJECT/,
    );
  });

  it('the default subject: the public URL when https, else a mailto: at its host', () => {
    expect(defaultSubject('https://chat.example.com')).toBe('https://chat.example.com');
    expect(defaultSubject('http://parley.test')).toBe('mailto:operator@parley.test');
    expect(defaultSubject('http://127.0.0.1:8080')).toBe('mailto:operator@127.0.0.1');
    expect(defaultSubject('http://localhost:8080')).toBe('mailto:operator@localhost.localdomain');
  });
});
