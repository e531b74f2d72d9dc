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

  it(
    'the message list keeps at most 180 messages in the DOM while scrolling back 400 and down again (README)',
    { timeout: 300_000 },
    async () => {
      // 400 messages, 20 at a time (ids follow each batch: the first and last batches stay ends)
      for (let i = 0; i < 400; i += 20)
        await Promise.all(
          Array.from({ length: 20 }, (_, j) =>
            sendApi('bob', history, { content: `history ${i + j + 1}` }),
          ),
        );
      const { page } = alice;
      await page.goto(`/g/${guildId}/${history}`);
      // messages (a day's divider between them is not one)
      const list = page.locator('.msg-list > li.msg');
      const text = (n: number) =>
        page.locator('.msg .text', { hasText: new RegExp(`^history ${n}$`) });
      await text(400).waitFor({ timeout: TIMEOUT });
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
      expect(await text(400).count()).toBe(0); // the newest left the DOM far below
      await shot(page, '24-01-history-top');
      // And down again, to the newest.
      for (let i = 0; i < 80 && !(await text(400).count()); i++) {
        await scroller.evaluate((el) => (el.scrollTop = el.scrollHeight));
        await page.waitForTimeout(150);
        most = Math.max(most, await list.count());
      }
      await text(400).waitFor({ timeout: TIMEOUT });
      expect(most).toBeLessThanOrEqual(180);
      expect(await text(1).count()).toBe(0);
      // at the bottom the window follows the newest and holds 120 again
      await scroller.evaluate((el) => (el.scrollTop = el.scrollHeight));
      await expect.poll(() => list.count()).toBeLessThanOrEqual(120);
      await sendApi('bob', history, { content: 'history 401' });
      await text(401).waitFor({ timeout: TIMEOUT });
      await shot(page, '24-02-history-bottom');
    },
  );

  it('markdown renders for both (D62): formatting, a code block, links; XSS payloads stay text', async () => {
    const box = (p: Page) => p.getByRole('textbox', { name: 'Message #general' });
    for (const p of [alice.page, bob.page]) await p.goto(`/g/${guildId}/${_general}`);
    const formatted =
      '**bold** *italic* __under__ ~~strike~~ ||secret|| `inline`\n' +
      '```ts\nconst answer: number = 42;\n```\n' +
      '> a quote\n- one\n- two\nsee https://example.com/docs and [the guide](https://example.com/guide)';
    await box(alice.page).fill(formatted);
    await box(alice.page).press('Enter');
    const msg = bob.page.locator('.msg', { hasText: 'a quote' }).last();
    await msg.waitFor({ timeout: TIMEOUT });
    expect(await msg.locator('.text strong').textContent()).toBe('bold');
    expect(await msg.locator('.text em').textContent()).toBe('italic');
    expect(await msg.locator('.text u').textContent()).toBe('under');
    expect(await msg.locator('.text s').textContent()).toBe('strike');
    expect(await msg.locator('.text pre.md-code code').textContent()).toBe(
      'const answer: number = 42;',
    );
    expect(await msg.locator('.text blockquote').textContent()).toBe('a quote');
    expect(await msg.locator('.text li').count()).toBe(2);
    expect(await msg.locator('.text a').first().getAttribute('href')).toBe(
      'https://example.com/docs',
    );
    // a spoiler opens on click
    const spoiler = msg.locator('.spoiler');
    expect(await spoiler.getAttribute('class')).toBe('spoiler');
    await spoiler.click();
    expect(await spoiler.getAttribute('class')).toContain('shown');
    // a masked link says where it goes before leaving
    await msg.getByRole('link', { name: 'the guide' }).click();
    const dialog = bob.page.getByRole('dialog', { name: 'Leave Parley?' });
    await dialog.waitFor({ timeout: TIMEOUT });
    expect(await dialog.textContent()).toContain('https://example.com/guide');
    await shot(bob.page, '24-03-markdown');
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    // The usual payloads: nothing runs, no element comes from the text.
    const payloads = [
      '<img src=x onerror="window.__xss=1">',
      '<script>window.__xss=2</script>',
      '[click](javascript:window.__xss=3)',
      '<svg onload="window.__xss=4">',
      '[x](https://example.com" onmouseover="window.__xss=5)',
      '||<img src=x onerror=window.__xss=6>||',
    ];
    for (const p of payloads) await sendApi('alice', _general, { content: p });
    const last = bob.page.locator('.msg .text', { hasText: 'onmouseover' }).last();
    await last.waitFor({ timeout: TIMEOUT });
    await bob.page.locator('.msg .text a', { hasText: 'click' }).count();
    expect(await bob.page.locator('.msg .text :is(img, script, svg, iframe)').count()).toBe(0);
    expect(await bob.page.locator('.msg .text a[href^="javascript"]').count()).toBe(0);
    await bob.page.locator('.msg .text', { hasText: 'click' }).last().click();
    await bob.page.locator('.msg .text', { hasText: 'onmouseover' }).last().hover();
    expect(await bob.page.evaluate('window.__xss')).toBeUndefined();
    expect(await bob.page.locator('.msg .text', { hasText: '<img src=x' }).count()).toBeGreaterThan(
      0,
    );
    await shot(bob.page, '24-04-xss-as-text');
  });

  it('a reply that mentions me: the replied-to message above, the highlight, reactions (D61–D63)', async () => {
    const page = alice.page;
    await page.goto(`/g/${guildId}/${_general}`);
    const me = await callOk(origin, 'GET', '/app/v1/users/@me', tokens['alice']);
    const first = await sendApi('alice', _general, { content: 'what is the answer?' });
    const reply = await sendApi('bob', _general, {
      content: `<@${me.id}> it is **42**`,
      messageReference: { messageId: first.id },
    });
    const row = page.locator(`.msg[data-id="${reply.id}"]`);
    await row.waitFor({ timeout: TIMEOUT });
    expect(await row.getAttribute('class')).toContain('mentions-me');
    expect(await row.locator('.mention.me').textContent()).toBe('@alice');
    expect(await row.locator('.reply-to').textContent()).toContain('what is the answer?');
    // reactions both ways: bob's arrives live; alice's own is highlighted as hers
    await callOk(
      origin,
      'PUT',
      `/api/v1/channels/${_general}/messages/${reply.id}/reactions/${encodeURIComponent('👍')}/@me`,
      tokens['bob'],
    );
    const thumbs = row.locator('.reaction', { hasText: '👍' });
    await thumbs.waitFor({ timeout: TIMEOUT });
    expect(await thumbs.locator('.count').textContent()).toBe('1');
    await thumbs.click();
    await expect.poll(() => thumbs.locator('.count').textContent(), { timeout: TIMEOUT }).toBe('2');
    expect(await thumbs.getAttribute('class')).toContain('me');
    await shot(page, '24-05-reply-mention-reactions');
  });

  it('a reaction with an emoji this device cannot draw shows its short name, not an empty box', async () => {
    const page = alice.page;
    await page.goto(`/g/${guildId}/${_general}`);
    const m = await sendApi('alice', _general, { content: 'how was the night shift?' });
    // Emoji 16.0 (2024): newer than Debian's Noto Color Emoji, as a phone's reaction may be
    for (const emoji of ['🫩', '🎉'])
      await callOk(
        origin,
        'PUT',
        `/api/v1/channels/${_general}/messages/${m.id}/reactions/${encodeURIComponent(emoji)}/@me`,
        tokens['bob'],
      );
    const row = page.locator(`.msg[data-id="${m.id}"]`);
    const tired = row.locator('.reaction', { hasText: ':face_with_bags_under_eyes:' });
    await tired.waitFor({ timeout: TIMEOUT });
    expect(await tired.locator('.count').textContent()).toBe('1');
    // the name is only a stand-in: the chip still means the emoji (its label, and a click on it)
    expect(await tired.getAttribute('aria-label')).toBe('🫩 1');
    // an emoji the font has stays itself
    const party = row.locator('.reaction', { hasText: '🎉' });
    expect(await party.locator('.emoji-missing').count()).toBe(0);
    await tired.click();
    await expect.poll(() => tired.locator('.count').textContent(), { timeout: TIMEOUT }).toBe('2');
    // who reacted, on hover: the same name, not an empty box
    const who = row.locator('.reaction-who');
    await expect
      .poll(() => who.textContent(), { timeout: TIMEOUT })
      .toMatch(/^:face_with_bags_under_eyes: (alice, bob|bob, alice)$/);
    await shot(page, '24-06-reaction-emoji-not-drawn');

    // At a phone's width: the short-name chip and the mention list (with its avatars) stay on
    // screen, and nothing scrolls sideways.
    await page.setViewportSize({ width: 360, height: 740 });
    try {
      const onScreen = async (l: ReturnType<Page['locator']>) => {
        const b = await l.boundingBox();
        return b !== null && b.x >= 0 && b.x + b.width <= 360;
      };
      await tired.scrollIntoViewIfNeeded();
      await expect.poll(() => onScreen(tired), { timeout: TIMEOUT }).toBe(true);
      const sideways = () =>
        page.evaluate<number>(
          'document.documentElement.scrollWidth - document.documentElement.clientWidth',
        );
      expect(await sideways()).toBe(0);
      await shot(page, '24-06b-reaction-emoji-not-drawn-phone');
      const composer = page.getByRole('textbox', { name: 'Message #general' });
      await composer.fill('');
      await composer.pressSequentially('@bo');
      const list = page.getByRole('listbox', { name: 'Mention suggestions' });
      await list.waitFor({ timeout: TIMEOUT });
      const first = list.getByRole('option').first();
      expect(await first.textContent()).toContain('@bob');
      expect(await first.locator('.avatar').isVisible()).toBe(true);
      await expect.poll(() => onScreen(list), { timeout: TIMEOUT }).toBe(true);
      expect(await sideways()).toBe(0);
      await shot(page, '24-06c-mention-list-phone');
      await page.keyboard.press('Escape');
      await composer.fill('');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });
});
