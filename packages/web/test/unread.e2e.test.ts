import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callOk,
  freePort,
  startParley,
  stopParley,
  type Running,
} from '../../server/test/helpers/process.js';
import { buildApp, chromiumAvailable, launch, person, shot } from './helpers/browser.js';

// D66 in a real browser: mention badges on channels, the guild and DMs, and the count in the tab
// title — right on a fresh load (READY's read states) and live; reading clears them; the
// notification menu sets a guild's level and mute.

const ADMIN = 'browser-unread-admin-token-0123456789';
const PASSWORD = 'amber finch over lakes';
const TIMEOUT = 15_000;

describe.skipIf(!chromiumAvailable())(
  'unread counts and mention badges in a real browser (D66)',
  () => {
    let server: Running;
    let browser: Browser;
    let dataDir: string;
    let origin: string;
    let guildId = 0;
    let general = 0;
    let random = 0;
    let dm = 0;
    let alice: Awaited<ReturnType<typeof person>>;
    const ids: Record<string, number> = {};
    const tokens: Record<string, string> = {};

    beforeAll(async () => {
      buildApp();
      dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-browser-unread-'));
      server = await startParley(
        {
          PARLEY_PORT: String(await freePort()),
          PARLEY_DATA_DIR: dataDir,
          PARLEY_ADMIN_TOKEN: ADMIN,
          PARLEY_LOG_LEVEL: 'warn',
          PARLEY_RATE_MESSAGES: 'off',
          PARLEY_RATE_GLOBAL: 'off',
        },
        180_000,
      );
      origin = server.origin;
      for (const name of ['alice', 'bob']) {
        const u = await callOk(origin, 'POST', '/admin/v1/users', ADMIN, {
          name,
          password: PASSWORD,
        });
        ids[name] = u.id;
        tokens[name] = (
          await callOk(origin, 'POST', '/app/v1/auth/login', undefined, {
            name,
            password: PASSWORD,
          })
        ).token;
      }
      guildId = (
        await callOk(origin, 'POST', '/admin/v1/guilds', ADMIN, {
          name: 'Parley HQ',
          ownerId: ids['alice'],
        })
      ).id;
      await callOk(origin, 'PUT', `/admin/v1/guilds/${guildId}/members/${ids['bob']}`, ADMIN, {});
      general = (
        await callOk(origin, 'POST', `/admin/v1/guilds/${guildId}/channels`, ADMIN, {
          name: 'general',
        })
      ).id;
      random = (
        await callOk(origin, 'POST', `/admin/v1/guilds/${guildId}/channels`, ADMIN, {
          name: 'random',
        })
      ).id;
      dm = (await callOk(origin, 'POST', `/api/v1/users/${ids['alice']}/dm`, tokens['bob']))
        .channelId;
      browser = await launch();
      alice = await person(browser, origin);
    }, 400_000);

    afterAll(async () => {
      await browser?.close();
      await stopParley(server);
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    const say = (channelId: number, content: string) =>
      callOk(origin, 'POST', `/api/v1/channels/${channelId}/messages`, tokens['bob'], { content });
    const sayDm = (content: string) =>
      callOk(origin, 'POST', `/api/v1/dm/channels/${dm}/messages`, tokens['bob'], { content });

    const badge = (page: Page, where: string) => page.locator(`${where} .mention-badge`);
    const channelBadge = (page: Page, name: string) =>
      badge(page, `a.nav-item:has(.nav-label:text-is("${name}"))`);
    const guildBadge = (page: Page) => badge(page, `a.rail-btn.guild[title="Parley HQ"]`);
    const dmBadge = (page: Page) => badge(page, 'a.rail-btn[aria-label="Direct messages"]');
    const badgeText = async (l: ReturnType<typeof badge>) =>
      (await l.count()) === 0 ? '' : ((await l.textContent()) ?? '');

    it('a fresh load shows the mentions that waited: channel, guild, DM badges and "(n)" in the title', async () => {
      // While alice is away: a mention, an @everyone bob may not use (no MENTION_EVERYONE: not a
      // mention), a plain message, and a DM.
      await say(random, `<@${ids['alice']}> are you there?`);
      await say(random, '@everyone lunch');
      await say(random, 'plain words');
      await say(general, 'hello general');
      await sayDm('psst');
      const { page } = alice;
      await page.goto('/login');
      await page.getByLabel('Name').fill('alice');
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('textbox', { name: /^Message #/ }).waitFor({ timeout: TIMEOUT });
      await page.goto(`/g/${guildId}/${general}`);
      await page.getByRole('textbox', { name: 'Message #general' }).waitFor({ timeout: TIMEOUT });
      await expect
        .poll(() => badgeText(channelBadge(page, 'random')), { timeout: TIMEOUT })
        .toBe('1');
      await expect.poll(() => badgeText(guildBadge(page))).toBe('1');
      await expect.poll(() => badgeText(dmBadge(page))).toBe('1');
      await expect.poll(() => page.title()).toBe('(2) #general · Parley');
      expect(await channelBadge(page, 'random').getAttribute('aria-label')).toBe(
        '1 unread mention',
      );
      await shot(page, 'unread-01-fresh-load');
    });

    it('live: a new mention raises the badges and the title; reading clears them, also after a reload', async () => {
      const { page } = alice;
      await say(random, `<@${ids['alice']}> again`);
      await expect
        .poll(() => badgeText(channelBadge(page, 'random')), { timeout: TIMEOUT })
        .toBe('2');
      await expect.poll(() => badgeText(guildBadge(page))).toBe('2');
      await expect.poll(() => page.title()).toBe('(3) #general · Parley');
      await sayDm('still there?');
      await expect.poll(() => badgeText(dmBadge(page)), { timeout: TIMEOUT }).toBe('2');
      await expect.poll(() => page.title()).toBe('(4) #general · Parley');
      await shot(page, 'unread-02-live');
      // Opening #random reads it: its badge and the guild's go, the DM's stays.
      await page.locator('a.nav-item', { hasText: 'random' }).click();
      await page.getByRole('textbox', { name: 'Message #random' }).waitFor({ timeout: TIMEOUT });
      // the "New" line above the first message alice had not read (#random was never opened)
      const line = page.getByRole('separator', { name: 'New messages' });
      await line.waitFor({ timeout: TIMEOUT });
      expect(
        await line.evaluate((e) => e.nextElementSibling?.querySelector('.text')?.textContent),
      ).toMatch(/are you there\?/);
      await shot(page, 'unread-02b-new-line');
      // answering says alice has caught up: the line goes
      await page.getByRole('textbox', { name: 'Message #random' }).fill('here now');
      await page.keyboard.press('Enter');
      await line.waitFor({ state: 'detached', timeout: TIMEOUT });
      await expect.poll(() => badgeText(guildBadge(page)), { timeout: TIMEOUT }).toBe('');
      await expect.poll(() => page.title()).toBe('(2) #random · Parley');
      // The server has it too: a reload (a fresh READY) shows the same.
      await expect
        .poll(
          async () =>
            (
              await callOk(origin, 'GET', '/app/v1/users/@me/read-states', tokens['alice'])
            ).readStates.find((r: { channelId: number }) => r.channelId === random)?.mentionCount,
          { timeout: TIMEOUT },
        )
        .toBe(0);
      await page.reload();
      await page.getByRole('textbox', { name: 'Message #random' }).waitFor({ timeout: TIMEOUT });
      // read now: no "New" line after the reload
      await page.getByText('again', { exact: false }).first().waitFor({ timeout: TIMEOUT });
      expect(await page.getByRole('separator', { name: 'New messages' }).count()).toBe(0);
      await expect.poll(() => badgeText(dmBadge(page)), { timeout: TIMEOUT }).toBe('2');
      await expect.poll(() => page.title()).toBe('(2) #random · Parley');
      expect(await badgeText(guildBadge(page))).toBe('');
      // Reading the DM clears the rest.
      await page.goto(`/dm/${dm}`);
      await expect.poll(() => page.title(), { timeout: TIMEOUT }).toBe('bob · Parley');
      expect(await badgeText(dmBadge(page))).toBe('');
      await shot(page, 'unread-03-read');
      // the mark reaches the server (the app sends it shortly after), so the next page's READY
      // (below) has no badge
      await expect
        .poll(
          async () =>
            (
              await callOk(origin, 'GET', '/app/v1/users/@me/read-states', tokens['alice'])
            ).readStates.find((r: { channelId: number }) => r.channelId === dm)?.mentionCount,
          { timeout: TIMEOUT },
        )
        .toBe(0);
    });

    it('the notification menu sets the guild level and a mute (GET notification-settings says so)', async () => {
      const { page } = alice;
      await page.goto(`/g/${guildId}/${general}`);
      await page.getByRole('textbox', { name: 'Message #general' }).waitFor({ timeout: TIMEOUT });
      // a fresh load after everything was read: no badge, no count in the title
      await expect.poll(() => page.title(), { timeout: TIMEOUT }).toBe('#general · Parley');
      expect(await badgeText(dmBadge(page))).toBe('');
      const bell = page.getByRole('button', { name: 'Notifications for Parley HQ' });
      await bell.click();
      const menu = page.getByRole('menu', { name: 'Notifications for Parley HQ' });
      await menu.waitFor({ timeout: TIMEOUT });
      expect(
        await menu
          .getByRole('menuitemradio', { name: 'Only mentions' })
          .getAttribute('aria-checked'),
      ).toBe('true');
      await shot(page, 'unread-04-menu');
      await menu.getByRole('menuitemradio', { name: 'All messages' }).click();
      await expect
        .poll(
          async () =>
            (
              await callOk(
                origin,
                'GET',
                '/app/v1/users/@me/notification-settings',
                tokens['alice'],
              )
            ).settings,
          { timeout: TIMEOUT },
        )
        .toEqual([{ guildId, level: 'all', muteUntil: null }]);
      // #general has no setting of its own: its menu shows the guild's level
      await page.getByRole('button', { name: 'Notifications for #general' }).click();
      const chMenu = page.getByRole('menu', { name: 'Notifications for #general' });
      await expect
        .poll(() =>
          chMenu.getByRole('menuitemradio', { name: 'All messages' }).getAttribute('aria-checked'),
        )
        .toBe('true');
      await page.keyboard.press('Escape');
      await bell.click();
      await menu.getByRole('menuitem', { name: 'Mute for 1 hour' }).click();
      await expect
        .poll(
          async () => {
            const s = (
              await callOk(
                origin,
                'GET',
                '/app/v1/users/@me/notification-settings',
                tokens['alice'],
              )
            ).settings[0];
            return s.level === 'all' && Date.parse(s.muteUntil) > Date.now() + 50 * 60_000;
          },
          { timeout: TIMEOUT },
        )
        .toBe(true);
      await bell.click();
      await menu.getByRole('menuitem', { name: /^Unmute/ }).waitFor({ timeout: TIMEOUT });
      await shot(page, 'unread-05-muted-menu');
      await page.keyboard.press('Escape');
      expect(alice.errors).toEqual([]);
    });
  },
);
