import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callOk,
  freePort,
  startParley,
  stopParley,
  type Running,
} from '../../server/test/helpers/process.js';
import { startIdp, type TestIdp } from '../../server/test/helpers/oidc-idp.js';
import { buildApp, chromiumAvailable, launch, person, shot } from './helpers/browser.js';

// D69 in a real browser: the login page's "Sign in with …" button, the provider's own login and
// consent pages (oidc-provider on a loopback port), and back into Parley signed in — through an
// invite, which the first sign-in joins.

const ADMIN = 'browser-oidc-admin-token-0123456789';
const TIMEOUT = 20_000;

describe.skipIf(!chromiumAvailable())(
  'sign-in with an OpenID provider in a real browser (D69)',
  () => {
    let server: Running;
    let idp: TestIdp;
    let browser: Browser;
    let dataDir: string;
    let origin: string;
    let guildId = 0;
    let inviteCode = '';
    let ssoOnlyPort = 0;

    beforeAll(async () => {
      buildApp();
      const port = await freePort();
      origin = `http://127.0.0.1:${port}`;
      ssoOnlyPort = await freePort();
      idp = await startIdp([
        `${origin}/app/v1/auth/oidc/callback`,
        `http://127.0.0.1:${ssoOnlyPort}/app/v1/auth/oidc/callback`,
      ]);
      dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-browser-oidc-'));
      server = await startParley(
        {
          PARLEY_PORT: String(port),
          PARLEY_PUBLIC_URL: origin,
          PARLEY_DATA_DIR: dataDir,
          PARLEY_ADMIN_TOKEN: ADMIN,
          PARLEY_LOG_LEVEL: 'warn',
          // as the other browser suites: the app's own requests never meet the rate limit
          PARLEY_RATE_GLOBAL: 'off',
          ...idp.env,
          PARLEY_OIDC_NAME: 'Acme SSO',
        },
        180_000,
      );
      const owner = await callOk(origin, 'POST', '/admin/v1/users', ADMIN, { name: 'owner' });
      const g = await callOk(origin, 'POST', '/admin/v1/guilds', ADMIN, {
        name: 'Acme HQ',
        ownerId: owner.id,
      });
      guildId = g.id;
      await callOk(origin, 'POST', `/admin/v1/guilds/${guildId}/channels`, ADMIN, {
        name: 'general',
      });
      inviteCode = (await callOk(origin, 'POST', `/admin/v1/guilds/${guildId}/invites`, ADMIN, {}))
        .code;
      browser = await launch();
    }, 240_000);

    afterAll(async () => {
      await browser?.close();
      await stopParley(server);
      await idp?.close();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    it('click "Sign in with Acme SSO", sign in at the provider, land in the guild signed in', async () => {
      idp.usernames.set('jane', 'Jane Doe');
      const code = inviteCode;
      expect(code).toBeTruthy();
      const jane = await person(browser, origin);
      const { page } = jane;

      // The login page without an invite: the button, and passwords still offered.
      await page.goto('/login');
      const button = page.getByRole('link', { name: 'Sign in with Acme SSO' });
      await button.waitFor({ timeout: TIMEOUT });
      await expect(page.getByLabel('Password').isVisible()).resolves.toBe(true);
      await shot(page, 'oidc-1-login');

      // Through the invite: the first sign-in creates Jane and joins the guild.
      await page.goto(`/invite/${code}`);
      await page.getByRole('link', { name: 'Sign in with Acme SSO' }).click();
      // the provider's own pages (oidc-provider's development login and consent)
      await page.locator('input[name="login"]').waitFor({ timeout: TIMEOUT });
      expect(new URL(page.url()).origin).toBe(idp.issuer);
      await page.locator('input[name="login"]').fill('jane');
      await page.locator('input[name="password"]').fill('anything at all');
      await shot(page, 'oidc-2-provider-login');
      await page.getByRole('button', { name: 'Sign-in' }).click();
      await page.getByRole('button', { name: 'Continue' }).click({ timeout: TIMEOUT });
      // back in Parley, signed in, in the invite's guild
      await page.waitForURL(new RegExp(`^${origin}/g/${guildId}`), { timeout: TIMEOUT });
      await page.getByRole('textbox', { name: /^Message #/ }).waitFor({ timeout: TIMEOUT });
      await expect(page.getByText('Jane Doe').first().isVisible()).resolves.toBe(true);
      await shot(page, 'oidc-3-signed-in');

      // Settings: linked to the provider, and it cannot be unlinked (the only way in).
      await page.goto('/settings');
      const section = page.getByTestId('sso-settings');
      await section.getByText('Linked to').waitFor({ timeout: TIMEOUT });
      await expect(
        section.getByRole('button', { name: 'Unlink Acme SSO' }).isDisabled(),
      ).resolves.toBe(true);
      // Jane was created by her first sign-in: no password, so no "Current password" to fill
      // in — the card says who can set one instead
      const noPassword = page.getByTestId('no-password');
      await noPassword.waitFor({ timeout: TIMEOUT });
      expect(await noPassword.textContent()).toContain('this account has no password');
      expect(await page.getByLabel('Current password').count()).toBe(0);
      // and her name is not her login (she has no password to log in with)
      await expect(page.getByLabel('Display name', { exact: true }).inputValue()).resolves.toBe(
        'Jane Doe',
      );
      await shot(page, 'oidc-4-settings', 1100);

      // Log out, sign in again: the same person (the provider remembers Jane: no form this time).
      const me1 = await page.evaluate(() =>
        fetch('/app/v1/users/@me').then(async (r) => ({
          status: r.status,
          ...((await r.json()) as { id: number }),
        })),
      );
      await page.getByRole('button', { name: 'Log out of this device' }).click();
      await page.getByRole('link', { name: 'Sign in with Acme SSO' }).click({ timeout: TIMEOUT });
      await page.waitForURL(`${origin}/g/${guildId}*`, { timeout: TIMEOUT }).catch(() => {});
      await page.getByRole('textbox', { name: /^Message #/ }).waitFor({ timeout: TIMEOUT });
      const me2 = await page.evaluate(() =>
        fetch('/app/v1/users/@me').then(async (r) => ({
          status: r.status,
          ...((await r.json()) as { id: number }),
        })),
      );
      expect(me1.status).toBe(200);
      expect(me2).toMatchObject({ status: 200, id: me1.id });
      expect(jane.errors).toEqual([]);
    }, 120_000);

    it('a person with a password changes it in settings (the form, beside the provider)', async () => {
      const pw = 'first-password-of-olga';
      await callOk(origin, 'POST', '/admin/v1/users', ADMIN, { name: 'olga', password: pw });
      const p = await person(browser, origin);
      const { page } = p;
      await page.goto('/login');
      await page.getByLabel('Name').fill('olga');
      await page.getByLabel('Password').fill(pw);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByText('You are not in any guild yet', { exact: false }).waitFor({
        timeout: TIMEOUT,
      });
      await page.goto('/settings');
      // the link is read first (it says whether there is a password), then the form
      await page.getByTestId('sso-settings').getByText('Link your account').waitFor({
        timeout: TIMEOUT,
      });
      expect(await page.getByTestId('no-password').count()).toBe(0);
      await page.getByLabel('Current password').fill('not it at all');
      await page.getByLabel('New password').fill('second-password-of-olga');
      await page.getByRole('button', { name: 'Change password' }).click();
      const wrong = page.getByRole('alert').filter({ hasText: 'current password is wrong' });
      await wrong.waitFor({ timeout: TIMEOUT });
      await page.getByLabel('Current password').fill(pw);
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByText('Password changed', { exact: false }).waitFor({ timeout: TIMEOUT });
      await shot(page, 'oidc-5-password-changed', 900);
      // the same settings on a phone (360 px): the cards fit, nothing scrolls sideways
      await page.setViewportSize({ width: 360, height: 780 });
      await page.reload();
      await page.getByLabel('Current password').waitFor({ timeout: TIMEOUT });
      expect(
        await page.evaluate<number>('document.documentElement.scrollWidth'),
      ).toBeLessThanOrEqual(360);
      await shot(page, 'oidc-5-password-phone');
      // the new one signs in
      const r = await fetch(`${origin}/app/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'olga', password: 'second-password-of-olga' }),
      });
      expect(r.status).toBe(200);
      expect(p.errors).toEqual([]);
    }, 60_000);

    it('a sign-in refused at the provider ends on the login page with a clear message', async () => {
      const p = await person(browser, origin);
      await p.page.goto('/login');
      await p.page.getByRole('link', { name: 'Sign in with Acme SSO' }).click();
      await p.page.locator('input[name="login"]').waitFor({ timeout: TIMEOUT });
      await p.page.getByRole('link', { name: /Cancel/i }).click();
      await p.page.waitForURL(`${origin}/login*`, { timeout: TIMEOUT });
      const banner = p.page.getByTestId('sso-error');
      await banner.waitFor({ timeout: TIMEOUT });
      expect(await banner.textContent()).toBe('Sign-in with Acme SSO was cancelled.');
      // the code is gone from the address bar (a reload shows the plain login page)
      expect(p.page.url()).toBe(`${origin}/login`);
      await shot(p.page, 'oidc-5-cancelled');
      expect(p.errors).toEqual([]);
    }, 60_000);

    it('with PARLEY_PASSWORD_LOGIN=false the login page offers only the provider', async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'parley-browser-oidc-only-'));
      const only = await startParley(
        {
          PARLEY_PORT: String(ssoOnlyPort),
          PARLEY_PUBLIC_URL: `http://127.0.0.1:${ssoOnlyPort}`,
          PARLEY_DATA_DIR: dir,
          PARLEY_LOG_LEVEL: 'warn',
          PARLEY_REGISTRATION: 'open',
          ...idp.env,
          PARLEY_OIDC_NAME: 'Acme SSO',
          PARLEY_PASSWORD_LOGIN: 'false',
        },
        180_000,
      );
      try {
        const p = await person(browser, only.origin);
        await p.page.goto('/login');
        const button = p.page.getByRole('link', { name: 'Sign in with Acme SSO' });
        await button.waitFor({ timeout: TIMEOUT });
        expect(await p.page.getByLabel('Password').count()).toBe(0);
        expect(await p.page.getByText('Create an account').count()).toBe(0);
        await shot(p.page, 'oidc-6-sso-only');
        // open registration: the first sign-in creates the account; settings has no password card
        await button.click();
        await p.page.locator('input[name="login"]').fill('sam');
        await p.page.locator('input[name="password"]').fill('whatever');
        await p.page.getByRole('button', { name: 'Sign-in' }).click();
        await p.page.getByRole('button', { name: 'Continue' }).click({ timeout: TIMEOUT });
        await p.page
          .getByText('You are not in any guild yet', { exact: false })
          .waitFor({ timeout: TIMEOUT });
        await p.page.goto('/settings');
        await p.page
          .getByTestId('sso-settings')
          .getByText('Linked to')
          .waitFor({ timeout: TIMEOUT });
        expect(await p.page.getByRole('heading', { name: 'Password' }).count()).toBe(0);
        await shot(p.page, 'oidc-7-sso-only-settings');
        expect(p.errors).toEqual([]);
      } finally {
        await stopParley(only);
        rmSync(dir, { recursive: true, force: true });
      }
    }, 240_000);
  },
);
