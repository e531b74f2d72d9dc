import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PushService } from '../../server/test/helpers/push-service.js';
import {
  callOk,
  freePort,
  startParley,
  stopParley,
  type Running,
} from '../../server/test/helpers/process.js';
import { buildApp, chromiumAvailable, launch, person, shot } from './helpers/browser.js';

// D66 in a real browser: the installable app (manifest, icons, service worker) and Web Push from
// the settings button to a push at a LOCAL push service (test/helpers/push-service.ts checks the
// VAPID JWT and decrypts the payload). Headless Chromium here has no push service of its own to
// reach (its subscribe() goes to Google's), so the test stands in for that one far edge: the
// page's PushManager.subscribe is wrapped to answer with a subscription on the local service and
// a key pair the test holds — after checking that the app passed the server's VAPID key.
// Everything else is real: the permission, the click, the POST, the gateway's visibility (op 3),
// the server's sender, encryption and signature.

// The page's globals, for the functions run inside it (this file is compiled without the DOM lib).
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const window: any;
declare const document: any;
declare const navigator: any;
declare const PushManager: any;
type PushSubscriptionOptionsInit = any;
type PushSubscription = any;
type HTMLImageElement = { naturalWidth: number };
/* eslint-enable @typescript-eslint/no-explicit-any */

const ADMIN = 'browser-push-admin-token-0123456789';
const PASSWORD = 'amber finch over lakes';
const TIMEOUT = 15_000;

describe.skipIf(!chromiumAvailable())('Web Push and the installable app (D66)', () => {
  let server: Running;
  let browser: Browser;
  let dataDir: string;
  let origin: string;
  let guildId = 0;
  let channelId = 0;
  const ids: Record<string, number> = {};
  const tokens: Record<string, string> = {};
  const push = new PushService();
  let carolPath = '';

  beforeAll(async () => {
    buildApp();
    await push.start();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-browser-push-'));
    server = await startParley(
      {
        PARLEY_PORT: String(await freePort()),
        PARLEY_DATA_DIR: dataDir,
        PARLEY_ADMIN_TOKEN: ADMIN,
        PARLEY_LOG_LEVEL: 'warn',
        PARLEY_RATE_MESSAGES: 'off',
        PARLEY_RATE_GLOBAL: 'off',
        // the local push service is http on 127.0.0.1: D37 allows it only so (development)
        PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true',
        PARLEY_WEBHOOK_ALLOW_INSECURE: 'true',
      },
      180_000,
    );
    origin = server.origin;
    for (const name of ['alice', 'bob', 'carol']) {
      const u = await callOk(origin, 'POST', '/admin/v1/users', ADMIN, {
        name,
        password: PASSWORD,
      });
      ids[name] = u.id;
      const login = await callOk(origin, 'POST', '/app/v1/auth/login', undefined, {
        name,
        password: PASSWORD,
      });
      tokens[name] = login.token;
    }
    const g = await callOk(origin, 'POST', '/admin/v1/guilds', ADMIN, {
      name: 'Parley HQ',
      ownerId: ids['alice'],
    });
    guildId = g.id;
    for (const n of ['bob', 'carol'])
      await callOk(origin, 'PUT', `/admin/v1/guilds/${guildId}/members/${ids[n]}`, ADMIN, {});
    channelId = (
      await callOk(origin, 'POST', `/admin/v1/guilds/${guildId}/channels`, ADMIN, {
        name: 'general',
      })
    ).id;
    // carol subscribes through the API (no browser): the witness that a push was planned
    const s = push.subscribe();
    await callOk(origin, 'POST', '/app/v1/push-subscriptions', tokens['carol'], {
      endpoint: s.endpoint,
      keys: s.keys,
    });
    carolPath = s.path;
    browser = await launch();
  }, 400_000);

  afterAll(async () => {
    await browser?.close();
    await stopParley(server);
    await push.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function login(page: Page, name: string): Promise<void> {
    await page.goto('/login');
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('textbox', { name: /^Message #/ }).waitFor({ timeout: TIMEOUT });
  }

  const mention = (text: string) =>
    callOk(origin, 'POST', `/api/v1/channels/${channelId}/messages`, tokens['alice'], {
      content: `<@${ids['bob']}> <@${ids['carol']}> ${text}`,
    });

  it(
    'installable: the manifest, its icons and the service worker register; the CSP allows them',
    { timeout: 120_000 },
    async () => {
      const { page, errors } = await person(browser, origin);
      await login(page, 'alice');
      const href = await page.locator('link[rel="manifest"]').getAttribute('href');
      expect(href).toBe('/manifest.webmanifest');
      const manifest = await page.evaluate(async () => {
        const r = await fetch('/manifest.webmanifest');
        return {
          type: r.headers.get('content-type'),
          body: (await r.json()) as Record<string, unknown>,
        };
      });
      expect(manifest.type).toMatch(/^application\/manifest\+json/);
      expect(manifest.body).toMatchObject({
        name: 'Parley',
        start_url: '/',
        display: 'standalone',
        theme_color: '#4f46e5',
      });
      const icons = manifest.body.icons as Array<{ src: string; sizes: string; purpose: string }>;
      for (const want of [
        ['192x192', 'any'],
        ['512x512', 'any'],
        ['192x192', 'maskable'],
        ['512x512', 'maskable'],
      ])
        expect(icons.some((i) => i.sizes === want[0] && i.purpose === want[1])).toBe(true);
      for (const i of icons) {
        const got = await page.evaluate(async (src) => {
          const r = await fetch(src);
          const b = new Uint8Array(await r.arrayBuffer());
          return { type: r.headers.get('content-type'), sig: Array.from(b.slice(1, 4)) };
        }, i.src);
        expect(got.type).toBe('image/png');
        expect(String.fromCharCode(...got.sig)).toBe('PNG');
      }
      const sw = await page.evaluate(async () => {
        // bounded: a worker whose install failed would leave `ready` pending for ever
        const reg = await Promise.race([
          navigator.serviceWorker.ready,
          new Promise((_, reject) =>
            setTimeout(() => reject(new Error('the service worker was not ready in 30 s')), 30_000),
          ),
        ]);
        return { script: reg.active?.scriptURL, scope: reg.scope };
      });
      expect(sw).toEqual({ script: `${origin}/sw.js`, scope: `${origin}/` });
      // the offline shell: the page loads with the network gone
      await page.reload();
      await page.getByRole('textbox', { name: /^Message #/ }).waitFor({ timeout: TIMEOUT });
      await page.context().setOffline(true);
      await page.goto(`/g/${guildId}/${channelId}`);
      // served by the worker from its cache: the app starts (and says it is reconnecting)
      await page.waitForFunction(
        () => (document.getElementById('app')?.childElementCount ?? 0) > 0,
        undefined,
        {
          timeout: TIMEOUT,
        },
      );
      expect(await page.title()).toBe('Parley');
      await page.getByText('You are offline.').waitFor({ timeout: TIMEOUT });
      // the shell's own files come from the cache too (the logo is no broken image)
      expect(
        await page
          .locator('img[src="/favicon.svg"]')
          .evaluate((i: HTMLImageElement) => i.naturalWidth),
      ).toBeGreaterThan(0);
      await shot(page, '26-push-offline-shell');
      expect(errors.filter((e) => !/net::ERR_INTERNET_DISCONNECTED|WebSocket/.test(e))).toEqual([]);
      // Closed while still offline: back online, the app reloads itself, and Chromium (Debian's
      // 2026-11 build) then left the context's close pending for ever in about one run of three.
      await page.context().close();
    },
  );

  it(
    'settings → Enable notifications asks on click, subscribes with the VAPID key; a visible tab gets no push, no tab does',
    { timeout: 180_000 },
    async () => {
      const { ctx, page, errors } = await person(browser, origin);
      const sub = push.subscribe();
      await ctx.grantPermissions(['notifications'], { origin });
      // The far edge (see the top): subscribe() answers with the local service's subscription.
      await ctx.addInitScript((s: { endpoint: string; keys: { p256dh: string; auth: string } }) => {
        const w = window as unknown as { __push: { key: string | null; calls: number } };
        w.__push = { key: null, calls: 0 };
        PushManager.prototype.subscribe = async function (opts?: PushSubscriptionOptionsInit) {
          w.__push.calls++;
          const k = opts?.applicationServerKey;
          const bytes =
            k instanceof ArrayBuffer
              ? new Uint8Array(k)
              : k
                ? new Uint8Array(k as ArrayBufferLike)
                : null;
          w.__push.key = bytes
            ? btoa(String.fromCharCode(...bytes))
                .replace(/\+/g, '-')
                .replace(/\//g, '_')
                .replace(/=+$/, '')
            : null;
          return {
            endpoint: s.endpoint,
            options: { userVisibleOnly: opts?.userVisibleOnly ?? false, applicationServerKey: k },
            toJSON: () => ({ endpoint: s.endpoint, expirationTime: null, keys: s.keys }),
            unsubscribe: async () => true,
            getKey: () => null,
          } as unknown as PushSubscription;
        };
        PushManager.prototype.getSubscription = async () => null;
      }, sub);
      await login(page, 'bob');
      await page.goto('/settings');
      const section = page.getByRole('region', { name: 'Notifications' });
      await section.waitFor({ timeout: TIMEOUT });
      // nothing asked before the click
      expect(await page.evaluate(() => window.__push.calls)).toBe(0);
      await section.scrollIntoViewIfNeeded();
      await shot(page, '26-push-settings-off');
      const posted = page.waitForResponse(
        (r) => r.url().endsWith('/app/v1/push-subscriptions') && r.request().method() === 'POST',
      );
      await section.getByRole('button', { name: 'Enable notifications' }).click();
      expect((await posted).status()).toBe(201);
      await section
        .getByText('Notifications are on for this device.')
        .waitFor({ timeout: TIMEOUT });
      await shot(page, '26-push-settings-on');
      const vapid = await callOk(
        origin,
        'GET',
        '/app/v1/push-subscriptions/vapid-key',
        tokens['bob'],
      );
      expect(await page.evaluate(() => window.__push.key)).toBe(vapid.publicKey);

      // Bob's tab is open and visible: a mention of bob and carol reaches carol only.
      await page.goto(`/g/${guildId}/${channelId}`);
      await page.getByRole('textbox', { name: /^Message #/ }).waitFor({ timeout: TIMEOUT });
      expect(await page.evaluate(() => document.visibilityState)).toBe('visible');
      // the app reported it (op 3) once READY came: wait until a mention skips bob
      const c0 = push.to(carolPath).length;
      await mention('while you look');
      await push.waitFor(carolPath, c0 + 1);
      await page.getByText('while you look').waitFor({ timeout: TIMEOUT });
      await new Promise((r) => setTimeout(r, 500));
      expect(push.to(sub.path)).toHaveLength(0);
      await shot(page, '26-push-visible-tab');

      // Bob closes the tab: the next mention is pushed to his device.
      expect(errors).toEqual([]);
      await page.close();
      await mention('after you left');
      const got = await push.waitFor(sub.path, 1);
      expect(got[0]!.payload).toStrictEqual({
        title: 'alice in #general',
        body: '@bob @carol after you left',
        url: `/g/${guildId}/${channelId}`,
        tag: `channel:${channelId}`,
      });
      expect(got[0]!.jwt.claims.aud).toBe(push.origin);
      await ctx.close();
    },
  );

  it(
    "the service worker shows a delivered push as a notification (Chromium's DevTools push)",
    { timeout: 120_000 },
    async () => {
      const { ctx, page } = await person(browser, origin);
      await ctx.grantPermissions(['notifications'], { origin });
      await login(page, 'carol');
      await page.evaluate(() => navigator.serviceWorker.ready);
      const cdp = await ctx.newCDPSession(page);
      const regId = new Promise<string>((resolve) => {
        cdp.on('ServiceWorker.workerRegistrationUpdated', (e) => {
          const r = e.registrations.find((x) => x.scopeURL === `${origin}/` && !x.isDeleted);
          if (r) resolve(r.registrationId);
        });
      });
      await cdp.send('ServiceWorker.enable');
      const deliver = async () =>
        cdp.send('ServiceWorker.deliverPushMessage', {
          origin,
          registrationId: await regId,
          data: JSON.stringify({
            title: 'alice in #general',
            body: 'hello from the push service',
            url: `/g/${guildId}/${channelId}`,
            tag: `channel:${channelId}`,
          }),
        });
      // (an async predicate would be a Promise, truthy at once: poll an evaluate instead)
      const shown = () =>
        page.evaluate(async () => {
          const reg = await navigator.serviceWorker.ready;
          const n = await reg.getNotifications();
          return n.length > 0
            ? { title: n[0]!.title, body: n[0]!.body, tag: n[0]!.tag, data: n[0]!.data }
            : null;
        });
      // DevTools' push is the far edge standing in for a push service, and Chromium (Debian's
      // 2026-11 build) dropped about one delivery in ten right after the worker registered: a push
      // service retries too, and the tag makes a repeat replace the notification, not add one.
      for (let attempt = 0; attempt < 5 && (await shown()) === null; attempt++) {
        await deliver();
        await expect
          .poll(shown, { timeout: 5_000, interval: 100 })
          .not.toBeNull()
          .catch(() => undefined);
      }
      await expect.poll(shown, { timeout: TIMEOUT, interval: 100 }).not.toBeNull();
      expect(await shown()).toEqual({
        title: 'alice in #general',
        body: 'hello from the push service',
        tag: `channel:${channelId}`,
        data: { url: `/g/${guildId}/${channelId}` },
      });
      await ctx.close();
    },
  );
});
