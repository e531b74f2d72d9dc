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

// Issue #24 in a real browser: the conversation — the message list's bounded DOM, markdown
// rendered safely (D62), and the rich messages of D61–D63 and D71 between two people and a bot.

const ADMIN = 'browser-conversation-admin-token-0123';
const PASSWORD = 'amber finch over lakes';
const TIMEOUT = 15_000;

describe.skipIf(!chromiumAvailable())('the conversation in a real browser (issue #24)', () => {
  let server: Running;
  let browser: Browser;
  let dataDir: string;
  let origin: string;
  let guildId = 0;
  let _general = 0;
  let history = 0;
  let alice: Awaited<ReturnType<typeof person>>;
  let bob: Awaited<ReturnType<typeof person>>;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    buildApp();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-browser-24-'));
    server = await startParley(
      {
        PARLEY_PORT: String(await freePort()),
        PARLEY_DATA_DIR: dataDir,
        PARLEY_ADMIN_TOKEN: ADMIN,
        PARLEY_LOG_LEVEL: 'warn',
        // a long history is written quickly; link previews fetch a page on this machine (D37)
        PARLEY_RATE_MESSAGES: 'off',
        PARLEY_RATE_GLOBAL: 'off',
        PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true',
        PARLEY_WEBHOOK_ALLOW_INSECURE: 'true',
      },
      180_000,
    ); // a shared, loaded machine may take long to start it
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
    const g = await callOk(origin, 'POST', '/admin/v1/guilds', ADMIN, {
      name: 'Parley HQ',
      ownerId: ids['alice'],
    });
    guildId = g.id;
    await callOk(origin, 'PUT', `/admin/v1/guilds/${guildId}/members/${ids['bob']}`, ADMIN, {});
    _general = (
      await callOk(origin, 'POST', `/admin/v1/guilds/${guildId}/channels`, ADMIN, {
        name: 'general',
      })
    ).id;
    history = (
      await callOk(origin, 'POST', `/admin/v1/guilds/${guildId}/channels`, ADMIN, {
        name: 'history',
      })
    ).id;
    browser = await launch();
    alice = await person(browser, origin);
    bob = await person(browser, origin);
    await login(alice.page, 'alice');
    await login(bob.page, 'bob');
  }, 400_000);

  afterAll(async () => {
    await browser?.close();
    await stopParley(server);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  async function login(page: Page, name: string): Promise<void> {
    await page.goto('/login');
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('textbox', { name: /^Message #/ }).waitFor({ timeout: TIMEOUT });
  }

  const sendApi = (who: string, channelId: number, body: Record<string, unknown>) =>
    callOk(origin, 'POST', `/api/v1/channels/${channelId}/messages`, tokens[who], body);

  it('the message list keeps at most 180 messages in the DOM while scrolling back 600 and down again (README)', async () => {
    for (let i = 1; i <= 600; i++) await sendApi('bob', history, { content: `history ${i}` });
    const { page } = alice;
    await page.goto(`/g/${guildId}/${history}`);
    const list = page.locator('.msg-list > li');
    const text = (n: number) =>
      page.locator('.msg .text', { hasText: new RegExp(`^history ${n}$`) });
    await text(600).waitFor({ timeout: TIMEOUT });
    const scroller = page.getByLabel('Messages in #history');
    let most = 0;
    // Scroll to the top again and again: older pages come in, the window slides up.
    for (let i = 0; i < 80 && !(await text(1).count()); i++) {
      await scroller.evaluate((el) => (el.scrollTop = 0));
      await page.waitForTimeout(150);
      most = Math.max(most, await list.count());
    }
    await text(1).waitFor({ timeout: TIMEOUT });
    await page.getByText('This is the beginning of the conversation.').waitFor();
    expect(most).toBeLessThanOrEqual(180);
    expect(await text(600).count()).toBe(0); // the newest left the DOM far below
    await shot(page, '24-01-history-top');
    // And down again, to the newest.
    for (let i = 0; i < 80 && !(await text(600).count()); i++) {
      await scroller.evaluate((el) => (el.scrollTop = el.scrollHeight));
      await page.waitForTimeout(150);
      most = Math.max(most, await list.count());
    }
    await text(600).waitFor({ timeout: TIMEOUT });
    expect(most).toBeLessThanOrEqual(180);
    expect(await text(1).count()).toBe(0);
    // at the bottom the window follows the newest and holds 120 again
    await scroller.evaluate((el) => (el.scrollTop = el.scrollHeight));
    await expect.poll(() => list.count()).toBeLessThanOrEqual(120);
    await sendApi('bob', history, { content: 'history 601' });
    await text(601).waitFor({ timeout: TIMEOUT });
    await shot(page, '24-02-history-bottom');
  });
});
