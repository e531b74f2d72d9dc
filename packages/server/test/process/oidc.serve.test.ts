import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startParley, stopParley, tempDir, type Running } from '../helpers/process.js';

// D69: `parley serve` starts although its OpenID provider cannot be reached: one warning line,
// and sign-ins end on the login page with "unavailable" until the provider answers.

describe('parley serve with an OpenID provider that is down (D69)', () => {
  const tmp = tempDir('parley-oidc-down-');
  let server: Running;
  let origin = '';
  let issuer = '';

  beforeAll(async () => {
    issuer = `http://127.0.0.1:${await freePort()}`; // nothing listens there
    const port = await freePort();
    server = await startParley(
      {
        PARLEY_PORT: String(port),
        PARLEY_DATA_DIR: tmp.path,
        PARLEY_OIDC_ISSUER: issuer,
        PARLEY_OIDC_CLIENT_ID: 'parley',
        PARLEY_OIDC_CLIENT_SECRET: 'a-secret-that-is-never-logged',
      },
      180_000,
    );
    origin = server.origin;
  }, 240_000);

  afterAll(async () => {
    await stopParley(server);
    tmp.remove();
  });

  it('starts, warns that the provider is unavailable (no secret in the log), and sign-in ends on the login page', async () => {
    const res = await fetch(`${origin}/app/v1/auth/oidc/start`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/login?sso_error=unavailable');
    await expect
      .poll(() => server.stdout() + server.stderr(), { timeout: 30_000, interval: 250 })
      .toContain(`OpenID provider ${issuer}: discovery failed`);
    const log = server.stdout() + server.stderr();
    expect(log).not.toContain('a-secret-that-is-never-logged');
    const ready = await fetch(`${origin}/readyz`);
    expect(ready.status).toBe(200);
    const cfg = (await (await fetch(`${origin}/app/v1/auth/config`)).json()) as {
      oidc: { name: string } | null;
    };
    expect(cfg.oidc?.name).toBe('SSO');
  });
});
