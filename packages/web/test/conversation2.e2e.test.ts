import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGateway, type GatewayClient } from '../../server/test/helpers/live-server.js';
import {
  callOk,
  freePort,
  startParley,
  stopParley,
  type Running,
} from '../../server/test/helpers/process.js';
import { buildApp, chromiumAvailable, launch, person, shot } from './helpers/browser.js';
import { gradientPng } from './helpers/picture.js';

// Issue #24 in a real browser, the composer's side: two people exchange a formatted message with
// a code block and a mention picked from the autocomplete (D62), a reply through the quote bar
// (D61), reactions both ways through the picker (D63), a pin and the pins panel (D63), three
// attachments with a caption through the tray (D61), a link whose preview appears (D71, a page
// on this machine), and a bot on a raw gateway WebSocket answers with an embed as a reply.

const ADMIN = 'browser-conversation2-admin-token-0123';
/** The picker's emoji the page's fonts do not draw as one colour glyph (run in the page). */
/**
 * The picker's emoji the page's fonts do not draw as one colour glyph (run in the page): a colour
 * glyph looks the same drawn in black and in blue (🖤 too), a missing glyph's box takes the fill.
 */
const NOT_DRAWN = `(() => {
  const c = document.createElement('canvas');
  c.width = 96;
  c.height = 48;
  const x = c.getContext('2d', { willReadFrequently: true });
  x.font = '24px sans-serif';
  x.textBaseline = 'top';
  const one = x.measureText('\\u{1F600}').width;
  const bad = [];
  for (const b of document.querySelectorAll('dialog[open] .emoji-btn')) {
    const e = b.textContent;
    x.clearRect(0, 0, 96, 48);
    x.fillStyle = '#000';
    x.fillText(e, 0, 0);
    x.fillStyle = '#00f';
    x.fillText(e, 48, 0);
    const l = x.getImageData(0, 0, 48, 48).data;
    const r = x.getImageData(48, 0, 48, 48).data;
    let same = true;
    let ink = false;
    for (let i = 0; i < l.length && same; i++) {
      same = l[i] === r[i];
      if (i % 4 === 3 && l[i] > 0) ink = true;
    }
    if (!same || !ink || x.measureText(e).width > one * 1.5) bad.push(e);
  }
  return bad;
})()`;
const PASSWORD = 'amber finch over lakes';
const TIMEOUT = 20_000;

describe.skipIf(!chromiumAvailable())('the composer in a real browser (issue #24)', () => {
  let server: Running;
  let page0: Server;
  let pageOrigin = '';
  let browser: Browser;
  let dataDir: string;
  let origin: string;
  let guildId = 0;
  let general = 0;
  const ids: Record<string, number> = {};
  const tokens: Record<string, string> = {};
  let alice: Awaited<ReturnType<typeof person>>;
  let bob: Awaited<ReturnType<typeof person>>;
  let bot: { token: string; userId: number };
  let gw: GatewayClient | undefined;

  beforeAll(async () => {
    buildApp();
    // D71: the linked page, on this machine (allowed by PARLEY_WEBHOOK_ALLOW_PRIVATE below)
    const cover = gradientPng(320, 160);
    page0 = createServer((req, res) => {
      if (req.url === '/cover.png') {
        res.writeHead(200, { 'content-type': 'image/png' }).end(cover);
        return;
      }
      res
        .writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        .end(
          '<!doctype html><html><head><title>fallback</title>' +
            '<meta property="og:title" content="Parley release notes">' +
            '<meta property="og:description" content="Replies, reactions, pins and previews.">' +
            '<meta property="og:site_name" content="Local Blog">' +
            '<meta property="og:image" content="/cover.png"></head><body>notes</body></html>',
        );
    });
    await new Promise<void>((r) => page0.listen(0, '127.0.0.1', r));
    pageOrigin = `http://127.0.0.1:${(page0.address() as AddressInfo).port}`;

    dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-browser-24b-'));
    server = await startParley(
      {
        PARLEY_PORT: String(await freePort()),
        PARLEY_DATA_DIR: dataDir,
        PARLEY_ADMIN_TOKEN: ADMIN,
        PARLEY_LOG_LEVEL: 'warn',
        PARLEY_RATE_MESSAGES: 'off',
        PARLEY_RATE_GLOBAL: 'off',
        PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true',
        PARLEY_WEBHOOK_ALLOW_INSECURE: 'true',
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
        await callOk(origin, 'POST', '/app/v1/auth/login', undefined, { name, password: PASSWORD })
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
    const made = await callOk(origin, 'POST', '/admin/v1/bots', ADMIN, {
      ownerId: ids['alice'],
      name: 'statusbot',
    });
    bot = { token: made.token, userId: made.bot.botUser.id };
    await callOk(origin, 'PUT', `/admin/v1/guilds/${guildId}/members/${bot.userId}`, ADMIN, {});

    browser = await launch();
    alice = await person(browser, origin);
    bob = await person(browser, origin);
    for (const [p, name] of [
      [alice.page, 'alice'],
      [bob.page, 'bob'],
    ] as const) {
      await p.goto('/login');
      await p.getByLabel('Name').fill(name);
      await p.getByLabel('Password').fill(PASSWORD);
      await p.getByRole('button', { name: 'Log in' }).click();
      await p.getByRole('textbox', { name: /^Message #/ }).waitFor({ timeout: TIMEOUT });
      await p.goto(`/g/${guildId}/${general}`);
      await box(p).waitFor({ timeout: TIMEOUT });
    }
  }, 400_000);

  afterAll(async () => {
    gw?.terminate();
    await browser?.close();
    await stopParley(server);
    await new Promise((r) => page0?.close(r));
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const box = (p: Page) => p.getByRole('textbox', { name: 'Message #general' });
  /** a message row by a piece of its text (the newest such) */
  const row = (p: Page, text: string): Locator =>
    p.locator('.msg', { has: p.locator('.text', { hasText: text }) }).last();
  /** the message menu's button on a row (shown on hover) */
  async function menu(p: Page, r: Locator, name: string): Promise<void> {
    await r.hover();
    await r.locator('.msg-actions').getByRole('button', { name }).click();
  }
  const newest = (who: string) =>
    callOk(origin, 'GET', `/api/v1/channels/${general}/messages?limit=1`, tokens[who]).then(
      (l) => l.messages[0],
    );

  it(
    'a formatted message with a code block and a mention picked from the autocomplete (D62); Up-arrow edits it',
    { timeout: 120_000 },
    async () => {
      const a = alice.page;
      await box(a).fill('Release **today**:\n```js\nconsole.log("ship it");\n```\n');
      await box(a).press('End');
      await a.keyboard.type('ping @bo');
      const list = a.getByRole('listbox', { name: 'Mention suggestions' });
      await list.waitFor({ timeout: TIMEOUT });
      expect(await list.getByRole('option').first().textContent()).toContain('@bob');
      // each person with their avatar, as the message list shows them (bob has none: initials)
      expect(await list.getByRole('option').first().locator('.avatar').textContent()).toBe('B');
      await shot(a, '24b-01-mention-autocomplete');
      await a.keyboard.press('Enter'); // picks, does not send
      await expect.poll(() => box(a).inputValue()).toContain(`ping <@${ids['bob']}> `);
      await a.keyboard.type('please check');
      await a.keyboard.press('Enter');
      await expect
        .poll(async () => (await newest('alice')).content as string, { timeout: TIMEOUT })
        .toContain('please check');
      const sent = await newest('alice');
      expect(sent.mentions).toEqual([ids['bob']]); // D61: the server resolved it
      // bob sees the highlight, the mention and the code block
      const b = bob.page;
      const r = row(b, 'please check');
      await r.waitFor({ timeout: TIMEOUT });
      expect(await r.getAttribute('class')).toContain('mentions-me');
      expect(await r.locator('.mention.me').textContent()).toBe('@bob');
      expect(await r.locator('pre code').textContent()).toContain('console.log("ship it");');
      expect(await r.locator('strong').textContent()).toBe('today');
      await shot(b, '24b-02-mention-highlight');
      // Up-arrow in alice's empty composer opens her last message; Enter saves; "(edited)"
      await box(a).click();
      await a.keyboard.press('ArrowUp');
      const editor = a.getByRole('textbox', { name: 'Edit message' });
      await editor.waitFor({ timeout: TIMEOUT });
      await editor.press('End');
      await a.keyboard.type(' now');
      await a.keyboard.press('Enter');
      await row(b, 'please check now').getByText('(edited)').waitFor({ timeout: TIMEOUT });
      // and the composer has the focus again
      expect(await a.evaluate("document.activeElement?.getAttribute('aria-label')")).toBe(
        'Message #general',
      );
      await shot(b, '24b-03-edited');
    },
  );

  it('a reply through the quote bar (D61) and reactions both ways through the picker (D63)', async () => {
    const a = alice.page;
    const b = bob.page;
    await menu(b, row(b, 'please check now'), 'Reply');
    const bar = b.getByRole('status', { name: 'Replying to alice' });
    await bar.waitFor({ timeout: TIMEOUT });
    await b.keyboard.type('looks good');
    await shot(b, '24b-04-quote-bar');
    await b.keyboard.press('Enter');
    await bar.waitFor({ state: 'detached', timeout: TIMEOUT });
    const reply = await newest('bob');
    expect(reply.reference.messageId).toBeGreaterThan(0);
    expect(reply.referencedMessage.content).toContain('please check now');
    expect(reply.mentions).toEqual([ids['alice']]); // D61: the replied-to author is pinged
    const ra = row(a, 'looks good');
    await ra.waitFor({ timeout: TIMEOUT });
    expect(await ra.locator('.reply-to').textContent()).toContain('please check now');
    // the replied-to line shows the words, not the markup (**, the code fence)
    expect(await ra.locator('.reply-to').textContent()).not.toMatch(/\*\*|```/);
    expect(await ra.getAttribute('class')).toContain('mentions-me');

    // alice reacts with the picker's search
    await menu(a, ra, 'Add reaction');
    const picker = a.getByRole('dialog', { name: 'Add a reaction' });
    await picker.getByRole('searchbox', { name: 'Search emoji' }).fill('party');
    await picker.getByRole('button', { name: 'party popper' }).waitFor({ timeout: TIMEOUT });
    await shot(a, '24b-05-reaction-picker');
    await picker.getByRole('button', { name: 'party popper' }).click();
    const rb = row(b, 'looks good');
    const partyB = rb.locator('.reaction', { hasText: '🎉' });
    await partyB.waitFor({ timeout: TIMEOUT });
    expect(await partyB.locator('.count').textContent()).toBe('1');
    // bob adds his to it, and another through the row's + button
    await partyB.click();
    await expect.poll(() => partyB.locator('.count').textContent(), { timeout: TIMEOUT }).toBe('2');
    await rb.getByRole('button', { name: 'Add a reaction' }).click();
    const pickerB = b.getByRole('dialog', { name: 'Add a reaction' });
    await pickerB.getByRole('searchbox', { name: 'Search emoji' }).fill('thumbs up');
    await pickerB.getByRole('button', { name: 'thumbs up' }).first().click();
    const thumbsA = ra.locator('.reaction', { hasText: '👍' });
    await thumbsA.waitFor({ timeout: TIMEOUT });
    const partyA = ra.locator('.reaction', { hasText: '🎉' });
    await expect.poll(() => partyA.locator('.count').textContent(), { timeout: TIMEOUT }).toBe('2');
    expect(await partyA.getAttribute('class')).toContain('me');
    expect(await thumbsA.getAttribute('class')).not.toContain(' me');
    // who reacted, on hover
    await partyA.hover();
    const who = ra.getByRole('tooltip');
    await expect
      .poll(() => who.textContent(), { timeout: TIMEOUT })
      .toMatch(/alice.*bob|bob.*alice/);
    await shot(a, '24b-06-reactions-who');
  });

  it('a pin from the message menu and the channel pins panel (D63)', async () => {
    const a = alice.page;
    const b = bob.page;
    await menu(a, row(a, 'please check now'), 'Pin message');
    await row(a, 'please check now').locator('.tag.pinned').waitFor({ timeout: TIMEOUT });
    await b.getByRole('button', { name: 'Pinned messages' }).click();
    const panel = b.getByRole('dialog', { name: 'Pinned messages' });
    await panel.locator('.pin', { hasText: 'please check now' }).waitFor({ timeout: TIMEOUT });
    expect(await panel.locator('.pin').count()).toBe(1);
    await shot(b, '24b-07-pins-panel');
    await panel.getByRole('button', { name: 'Jump' }).click();
    await panel.waitFor({ state: 'hidden', timeout: TIMEOUT });
  });

  it('three attachments with a caption through the tray, one removed before sending (D61)', async () => {
    const a = alice.page;
    const b = bob.page;
    const png = (n: number, w: number) => ({
      name: `shot-${n}.png`,
      mimeType: 'image/png',
      buffer: gradientPng(w, 120),
    });
    await b
      .getByLabel('Choose files to upload')
      .setInputFiles([png(1, 200), png(2, 240), png(3, 280), png(4, 160)]);
    const tray = b.getByRole('list', { name: 'Files to send' });
    await expect.poll(() => tray.locator('.tray-item').count(), { timeout: TIMEOUT }).toBe(4);
    await tray.getByRole('button', { name: 'Remove shot-4.png' }).click();
    await expect.poll(() => tray.locator('.tray-item').count()).toBe(3);
    await box(b).fill('three screenshots of the release');
    await shot(b, '24b-08-attachment-tray');
    await box(b).press('Enter');
    await tray.waitFor({ state: 'detached', timeout: TIMEOUT });
    const m = await newest('bob');
    expect(m.content).toBe('three screenshots of the release');
    expect(m.attachments.map((x: { filename: string }) => x.filename)).toEqual([
      'shot-1.png',
      'shot-2.png',
      'shot-3.png',
    ]);
    expect(m.attachments[1]).toMatchObject({ contentType: 'image/png', width: 240, height: 120 });
    const r = row(a, 'three screenshots');
    await r.waitFor({ timeout: TIMEOUT });
    await expect.poll(() => r.locator('.attachment-image img').count()).toBe(3);
    await expect
      .poll(
        () =>
          r
            .locator('.attachment-image img')
            .nth(2)
            .evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth),
        { timeout: TIMEOUT },
      )
      .toBe(280);
    await shot(a, '24b-09-attachments');
  });

  it('files pasted into the composer or dropped on the channel wait in the tray too (D61)', async () => {
    const a = alice.page;
    const png = gradientPng(64, 64).toString('base64');
    // a screenshot pasted (no name: the app names it) and a file dropped on the channel
    // (a script string: the browser's DOM types are not those of this Node test)
    await a.evaluate(`(() => {
      const bytes = Uint8Array.from(atob('${png}'), (c) => c.charCodeAt(0));
      const file = (name) => new File([bytes], name, { type: 'image/png' });
      const pasted = new DataTransfer();
      pasted.items.add(file('clipboard.png'));
      document
        .querySelector('.composer-box textarea')
        .dispatchEvent(new ClipboardEvent('paste', { clipboardData: pasted, bubbles: true }));
      const dropped = new DataTransfer();
      dropped.items.add(file('dropped.png'));
      const view = document.querySelector('.channel-view');
      view.dispatchEvent(new DragEvent('dragover', { dataTransfer: dropped, bubbles: true }));
      view.dispatchEvent(new DragEvent('drop', { dataTransfer: dropped, bubbles: true }));
    })()`);
    const tray = a.getByRole('list', { name: 'Files to send' });
    await expect.poll(() => tray.locator('.tray-item').count(), { timeout: TIMEOUT }).toBe(2);
    expect(await tray.locator('.tray-name').allTextContents()).toEqual([
      'clipboard.png',
      'dropped.png',
    ]);
    await box(a).fill('pasted and dropped');
    await box(a).press('Enter');
    await tray.waitFor({ state: 'detached', timeout: TIMEOUT });
    const m = await newest('alice');
    expect(m.attachments.map((x: { filename: string }) => x.filename)).toEqual([
      'clipboard.png',
      'dropped.png',
    ]);
  });

  it('a link whose preview appears, its image through this server (D71)', async () => {
    const a = alice.page;
    const b = bob.page;
    await box(a).fill(`the notes: ${pageOrigin}/notes`);
    await box(a).press('Enter');
    const r = row(b, 'the notes:');
    const embed = r.locator('.embed.link');
    await embed.waitFor({ timeout: 30_000 });
    expect(await embed.locator('.embed-title').textContent()).toBe('Parley release notes');
    expect(await embed.textContent()).toContain('Local Blog');
    const src = await embed.locator('img.embed-image').getAttribute('src');
    expect(src?.startsWith(`${origin}/cdn/proxy/`)).toBe(true); // the reader never calls the site
    await expect
      .poll(
        () =>
          embed
            .locator('img.embed-image')
            .evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth),
        { timeout: TIMEOUT },
      )
      .toBe(320);
    await shot(b, '24b-10-link-preview');
  });

  it('a bot on a raw gateway WebSocket answers a command with an embed, as a reply (D61)', async () => {
    const b = bob.page;
    const opened = await openGateway(`${origin.replace(/^http/, 'ws')}/gateway`, bot.token);
    if (opened.kind !== 'open') throw new Error(`gateway refused: ${opened.status}`);
    gw = opened.client;
    await gw.ready();
    await box(b).fill('!status');
    await box(b).press('Enter');
    for (;;) {
      const f = await gw.next({ timeoutMs: TIMEOUT });
      if (f.op !== 0 || f.t !== 'MESSAGE_CREATE' || f.d.content !== '!status') continue;
      await callOk(origin, 'POST', `/api/v1/channels/${general}/messages`, bot.token, {
        content: 'Here is the status:',
        messageReference: { messageId: f.d.id },
        embeds: [
          {
            title: 'Release status',
            description: 'Everything is **green**',
            color: 0x2ecc71,
            fields: [
              { name: 'Build', value: 'passed', inline: true },
              { name: 'Deploy', value: 'done', inline: true },
            ],
            footer: { text: 'statusbot' },
          },
        ],
      });
      break;
    }
    const r = row(b, 'Here is the status:');
    await r.waitFor({ timeout: TIMEOUT });
    expect(await r.locator('.tag', { hasText: 'BOT' }).count()).toBe(1);
    expect(await r.locator('.reply-to').textContent()).toContain('!status');
    const embed = r.locator('.embed.rich');
    expect(await embed.locator('.embed-title').textContent()).toBe('Release status');
    expect(await embed.locator('strong').textContent()).toBe('green');
    expect(await embed.locator('.embed-field').count()).toBe(2);
    // the reply pinged bob (D61), so his copy is highlighted
    expect(await r.getAttribute('class')).toContain('mentions-me');
    await shot(b, '24b-11-bot-embed-reply');
    expect([...alice.errors, ...bob.errors]).toEqual([]);
  });

  it('a mention of a role I hold is highlighted as mentioning me (D58, D61)', async () => {
    const b = bob.page;
    const role = await callOk(origin, 'POST', `/admin/v1/guilds/${guildId}/roles`, ADMIN, {
      name: 'reviewers',
      permissions: 0,
    });
    await callOk(origin, 'PATCH', `/admin/v1/roles/${role.id}`, ADMIN, { mentionable: true });
    await callOk(origin, 'PUT', `/admin/v1/guilds/${guildId}/members/${ids['bob']}`, ADMIN, {
      roles: [role.id],
    });
    // bob's app reads his roles again once the guild changes (GUILD_MEMBER_UPDATE)
    const sent = await callOk(
      origin,
      'POST',
      `/api/v1/channels/${general}/messages`,
      tokens['alice'],
      {
        content: `<@&${role.id}> one more review, please`,
      },
    );
    expect(sent.mentionRoles).toEqual([role.id]);
    const r = b.locator(`.msg[data-id="${sent.id}"]`);
    await r.waitFor({ timeout: TIMEOUT });
    await expect.poll(() => r.getAttribute('class'), { timeout: TIMEOUT }).toContain('mentions-me');
    expect(await r.locator('.mention.role.me').textContent()).toBe('@reviewers');
    await shot(b, '24b-12-role-mention');
    expect([...alice.errors, ...bob.errors]).toEqual([]);
  });

  it('the conversation on a phone (360 px): message actions without hover, the reaction picker and the pins panel fit, nothing scrolls sideways', async () => {
    const phone = await person(browser, origin, { phone: true });
    try {
      const p = phone.page;
      await p.goto('/login');
      await p.getByLabel('Name').fill('bob');
      await p.getByLabel('Password').fill(PASSWORD);
      await p.getByRole('button', { name: 'Log in' }).click();
      await box(p).waitFor({ timeout: TIMEOUT });
      const wide = () => p.evaluate<number>('document.documentElement.scrollWidth');
      const fits = async (l: Locator) => {
        const b = await l.boundingBox();
        expect(b).not.toBeNull();
        expect((b as { x: number }).x).toBeGreaterThanOrEqual(0);
        expect(
          (b as { x: number; width: number }).x + (b as { width: number }).width,
        ).toBeLessThanOrEqual(360);
      };
      const r = row(p, 'one more review');
      await r.waitFor({ timeout: TIMEOUT });
      expect(await wide()).toBeLessThanOrEqual(360);
      // the header keeps the channel's name readable beside the search box
      const title = p.locator('.topbar .title');
      expect(await title.evaluate((e) => e.scrollWidth <= e.clientWidth)).toBe(true);
      // a bot's inline embed fields: name above value, words never broken
      const field = p.locator('.embed-field-inline').first();
      const [name, value] = await Promise.all([
        field.locator('.embed-field-name').boundingBox(),
        field.locator('.text').boundingBox(),
      ]);
      expect((value as { y: number }).y).toBeGreaterThanOrEqual(
        (name as { y: number; height: number }).y + (name as { height: number }).height - 1,
      );
      await shot(p, '24b-13-phone-conversation');
      // a touch screen has no hover: the actions do not sit beside every message (the text
      // keeps the row's width), a tap on the message shows them over it, a tap elsewhere hides
      const actions = r.locator('.msg-actions');
      const opacity = () =>
        actions.evaluate((e) => {
          const view = e.ownerDocument.defaultView as unknown as {
            getComputedStyle(x: unknown): { opacity: string };
          };
          return view.getComputedStyle(e).opacity;
        });
      expect(await opacity()).toBe('0');
      const text = await r.locator('.msg-main').boundingBox();
      expect((text as { width: number }).width).toBeGreaterThan(250);
      await r.locator('.msg-main .text').first().tap();
      await expect.poll(opacity, { timeout: TIMEOUT }).toBe('1');
      await shot(p, '24b-13b-phone-message-tapped');
      await p.locator('.composer-box textarea').tap();
      await expect.poll(opacity, { timeout: TIMEOUT }).toBe('0');
      await r.locator('.msg-main .text').first().tap();
      await expect.poll(opacity, { timeout: TIMEOUT }).toBe('1');
      const react = actions.getByRole('button', { name: 'Add reaction' });
      await react.tap();
      const picker = p.getByRole('dialog', { name: 'Add a reaction' });
      await picker.waitFor({ timeout: TIMEOUT });
      await fits(picker);
      // every emoji offered is drawn by the device's emoji font: none of a release newer than
      // the font (Debian's Noto Color Emoji lacks Emoji 16's 🫩, an empty box in the picker
      // before), drawn on a canvas in the page as the picker's own check does
      await p.locator('.emoji-scroll .emoji-btn').first().waitFor({ timeout: TIMEOUT });
      const offered = await picker.locator('.emoji-btn').count();
      expect(offered).toBeGreaterThan(1500);
      expect(await p.evaluate<string[]>(NOT_DRAWN)).toEqual([]);
      expect(await picker.getByRole('button', { name: 'grinning face', exact: true }).count()).toBe(
        1,
      );
      await shot(p, '24b-14-phone-reaction-picker');
      await p.keyboard.press('Escape');
      await picker.waitFor({ state: 'hidden', timeout: TIMEOUT });
      await p.getByRole('button', { name: 'Pinned messages' }).click();
      const panel = p.getByRole('dialog', { name: 'Pinned messages' });
      await panel.waitFor({ timeout: TIMEOUT });
      await fits(panel);
      // a moment written as everywhere else in the app, without seconds (lib/time.ts)
      expect(await panel.locator('.pin-head .muted').first().textContent()).toMatch(
        /^[A-Z][a-z]{2} \d{1,2}, \d{4}, \d{1,2}:\d{2}\s[AP]M$/,
      );
      expect(await wide()).toBeLessThanOrEqual(360);
      await shot(p, '24b-15-phone-pins');
      expect(phone.errors).toEqual([]);
    } finally {
      await phone.ctx.close();
    }
  });
});
