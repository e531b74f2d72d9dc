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

// Issue 26 / D67 in a real browser: the search box in the channel header with its filters
// (`from:`, `in:`, `before:`), hits grouped by channel with the words marked (never as HTML),
// and a click that opens the message in its context, paged both ways from there.

const ADMIN = 'browser-search-admin-token-0123456789';
const PASSWORD = 'amber finch over lakes';
const TIMEOUT = 15_000;

describe.skipIf(!chromiumAvailable())('search in a real browser (D67, issue 26)', () => {
  let server: Running;
  let browser: Browser;
  let dataDir: string;
  let origin: string;
  let guildId = 0;
  let general = 0;
  let random = 0;
  let alice: Awaited<ReturnType<typeof person>>;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    buildApp();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-browser-search-'));
    server = await startParley(
      {
        PARLEY_PORT: String(await freePort()),
        PARLEY_DATA_DIR: dataDir,
        PARLEY_ADMIN_TOKEN: ADMIN,
        PARLEY_LOG_LEVEL: 'warn',
        PARLEY_RATE_MESSAGES: 'off',
        PARLEY_RATE_GLOBAL: 'off',
        PARLEY_LINK_PREVIEWS: 'off',
      },
      180_000,
    );
    origin = server.origin;
    const ids: Record<string, number> = {};
    for (const name of ['alice', 'bob']) {
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
    guildId = (
      await callOk(origin, 'POST', '/admin/v1/guilds', ADMIN, {
        name: 'Parley HQ',
        ownerId: ids['alice'],
      })
    ).id;
    await callOk(origin, 'PUT', `/admin/v1/guilds/${guildId}/members/${ids['bob']}`, ADMIN, {});
    const channel = async (name: string) =>
      (await callOk(origin, 'POST', `/admin/v1/guilds/${guildId}/channels`, ADMIN, { name })).id;
    general = await channel('general');
    random = await channel('random');
    const send = (who: string, channelId: number, content: string) =>
      callOk(origin, 'POST', `/api/v1/channels/${channelId}/messages`, tokens[who], { content });
    // 60 messages, the one to find, 60 more: its context is in the middle of a long history.
    for (let i = 1; i <= 60; i++) await send('alice', general, `filler ${i}`);
    await send('bob', general, 'The release notes for v2 are out <img src=x onerror=alert(1)>');
    for (let i = 61; i <= 120; i++) await send('alice', general, `filler ${i}`);
    await send('alice', random, 'release party tonight in 東京');
    await send('bob', random, 'who wrote the release notes?');
    browser = await launch();
    alice = await person(browser, origin);
    await alice.page.goto('/login');
    await alice.page.getByLabel('Name').fill('alice');
    await alice.page.getByLabel('Password').fill(PASSWORD);
    await alice.page.getByRole('button', { name: 'Log in' }).click();
    await alice.page.getByRole('textbox', { name: /^Message #/ }).waitFor({ timeout: TIMEOUT });
  }, 400_000);

  afterAll(async () => {
    await browser?.close();
    await stopParley(server);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function search(page: Page, text: string): Promise<void> {
    const box = page.getByRole('searchbox', { name: 'Search messages' });
    await box.fill(text);
    await box.press('Enter');
  }
  const panel = (page: Page) => page.getByRole('region', { name: 'Search results' });

  it('the empty box, focused, lists the filters; a click types one into it', async () => {
    const { page } = alice;
    await page.goto(`/g/${guildId}/${general}`);
    const box = page.getByRole('searchbox', { name: 'Search messages' });
    const hints = page.locator('#search-hints');
    expect(await hints.count()).toBe(0);
    await box.click();
    await hints.waitFor({ timeout: TIMEOUT });
    expect(await box.getAttribute('aria-describedby')).toBe('search-hints');
    const offered = await hints.locator('code').allTextContents();
    expect(offered).toEqual([
      'from:name',
      'in:#channel',
      'has:image',
      'before:2026-01-31',
      'after:2026-01-01',
      'pinned:true',
    ]);
    await shot(page, '26-search-00-filters-offered');
    await hints.getByRole('button', { name: /from:name/ }).click();
    expect(await box.inputValue()).toBe('from:');
    // the box kept the focus, and with text in it the list is gone
    expect(await box.evaluate((e) => e === e.ownerDocument.activeElement)).toBe(true);
    await hints.waitFor({ state: 'detached', timeout: TIMEOUT });
    await box.fill('');
    await box.blur();
    expect(await hints.count()).toBe(0);
  });

  it(
    'finds words in every readable channel, grouped by channel, words marked, no HTML from text',
    { timeout: 120_000 },
    async () => {
      const { page } = alice;
      await page.goto(`/g/${guildId}/${general}`);
      await search(page, 'release');
      const results = panel(page);
      await results.getByText('3 results').waitFor({ timeout: TIMEOUT });
      const groups = results.locator('.search-group');
      await expect.poll(() => groups.count()).toBe(2);
      // the channel of the newest hit first
      expect(await groups.nth(0).locator('h3').textContent()).toBe('# random');
      expect(await groups.nth(1).locator('h3').textContent()).toBe('# general');
      expect(await groups.nth(0).locator('.search-hit').count()).toBe(2);
      const marks = await results.locator('mark').allTextContents();
      expect(marks.map((m) => m.toLowerCase())).toEqual(['release', 'release', 'release']);
      // the hit's text is text: the <img> in it is shown, not made
      await results.getByText('<img src=x onerror=alert(1)>', { exact: false }).waitFor();
      expect(await page.locator('.search-panel img').count()).toBe(0);
      await shot(page, '26-search-01-results');

      // CJK: a word of two characters
      await search(page, '東京');
      await results.getByText('1 result').waitFor({ timeout: TIMEOUT });
      expect(await results.locator('mark').allTextContents()).toEqual(['東京']);
    },
  );

  it(
    'filters: from:, in:#, phrases; before: a date with nothing; what it cannot read is said',
    { timeout: 120_000 },
    async () => {
      const { page } = alice;
      const results = panel(page);
      await search(page, 'from:bob in:#general release');
      await results.getByText('1 result').waitFor({ timeout: TIMEOUT });
      expect(await results.locator('.search-group h3').allTextContents()).toEqual(['# general']);
      expect(await results.locator('.search-hit .author').allTextContents()).toEqual(['bob']);
      await shot(page, '26-search-02-filters');
      await search(page, '"notes release"');
      await results.getByText('No results').waitFor({ timeout: TIMEOUT });
      await search(page, 'release before:2026-01-01');
      await results.getByText('No results').waitFor({ timeout: TIMEOUT });
      await search(page, 'from:nobody has:gif release');
      await results
        .getByText(/Could not read: .*has:gif.*from:nobody/)
        .waitFor({ timeout: TIMEOUT });
    },
  );

  it(
    'a click opens the message in its context, marked, and pages older and newer from it',
    { timeout: 120_000 },
    async () => {
      const { page, errors } = alice;
      const results = panel(page);
      await search(page, 'from:bob in:#general release');
      await results.locator('.search-hit').first().click();
      const target = results.locator('.search-context-msg.target');
      await target.waitFor({ timeout: TIMEOUT });
      expect(await target.getAttribute('aria-current')).toBe('true');
      expect(await target.locator('mark').allTextContents()).toEqual(['release']);
      await expect.poll(() => target.isVisible()).toBe(true);
      const rows = results.locator('.search-context-msg');
      const texts = async () =>
        (await rows.locator('.text').allTextContents()).map((t) => t.trim());
      // 25 up to it (it included) and 25 after it
      await expect.poll(async () => (await texts()).length).toBe(50);
      const now = await texts();
      expect(now[0]).toBe('filler 37');
      expect(now[23]).toBe('filler 60');
      expect(now[25]).toBe('filler 61');
      expect(now[49]).toBe('filler 85');
      // the target is in view inside the panel
      const box = await target.boundingBox();
      expect(box && box.y > 52 && box.y < 800).toBe(true);
      await shot(page, '26-search-03-context');

      // older messages come in above without moving what the reader looks at
      const older = results.getByRole('button', { name: 'Load older' });
      await older.scrollIntoViewIfNeeded();
      const yBefore = (await target.boundingBox())?.y ?? 0;
      await older.click();
      await expect.poll(async () => (await texts())[0]).toBe('filler 12');
      expect(Math.abs(((await target.boundingBox())?.y ?? 0) - yBefore)).toBeLessThan(4);
      await results.getByRole('button', { name: 'Load newer' }).click();
      await expect.poll(async () => (await texts()).at(-1)).toBe('filler 110');
      await results.getByRole('button', { name: 'Load older' }).click();
      await expect.poll(async () => (await texts())[0]).toBe('filler 1');
      expect(await results.getByRole('button', { name: 'Load older' }).count()).toBe(0);
      await results.getByRole('button', { name: 'Load newer' }).click();
      await expect.poll(async () => (await texts()).at(-1)).toBe('filler 120');
      expect(await results.getByRole('button', { name: 'Load newer' }).count()).toBe(0);
      await target.scrollIntoViewIfNeeded();
      await shot(page, '26-search-04-context-paged');

      // back to the results, then to the channel itself
      await results.getByRole('button', { name: '← Results' }).click();
      await results.getByText('1 result').waitFor({ timeout: TIMEOUT });
      await results.locator('.search-hit').first().click();
      await results.getByRole('button', { name: 'Open channel' }).click();
      await page.waitForURL(`**/g/${guildId}/${general}`);
      await page.getByRole('button', { name: 'Close search' }).click();
      expect(await panel(page).count()).toBe(0);
      expect(errors).toEqual([]);
    },
  );
});
