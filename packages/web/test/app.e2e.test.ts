import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import {
  callOk,
  freePort,
  startParley,
  stopParley,
  type Running,
} from '../../server/test/helpers/process.js';
import { Receiver, type Answer } from '../../server/test/helpers/receiver.js';
import {
  buildApp,
  chromiumAvailable,
  launch,
  person,
  SCREENSHOTS,
  shot,
} from './helpers/browser.js';
import { gradientPng } from './helpers/picture.js';

// Issue #12 "Tested in a real browser": the web app (D55) in Debian's Chromium against a real
// server process — two people in two browser contexts, and a bot on the raw gateway (D28–D33).

const ADMIN = 'browser-test-admin-token-0123456789';
const PASSWORD = 'correct horse battery';
const TIMEOUT = 15_000;

const haveChromium = chromiumAvailable();

/** The accessible name of the focused element: its <label>, aria-label or text (run in the page). */
const FOCUSED_LABEL = `(() => {
  const el = document.activeElement;
  if (!el) return '';
  const label = el.id ? document.querySelector('label[for="' + el.id + '"]') : null;
  return ((label && label.textContent) || el.getAttribute('aria-label') || el.textContent || '')
    .trim()
    .slice(0, 40);
})()`;

describe.skipIf(!haveChromium)('web app in a real browser (D55, issue #12)', () => {
  let server: Running;
  let browser: Browser;
  let dataDir: string;
  let receiver: Receiver;
  let origin: string;
  let alice: Awaited<ReturnType<typeof person>>;
  let bob: Awaited<ReturnType<typeof person>>;
  let guildId: number;
  let inviteUrl = '';
  let botToken = '';
  let bot: { ws: WebSocket; closed: Promise<number>; ready: Promise<void> } | undefined;
  /** the bot's token after the reset */
  let botNow = '';
  let serverEnv: Record<string, string> = {};
  let webhookAnswer: Answer = (res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
  };

  beforeAll(async () => {
    buildApp();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-browser-'));
    receiver = await new Receiver().always((res, req) => webhookAnswer(res, req)).listen();
    serverEnv = {
      PARLEY_PORT: String(await freePort()),
      PARLEY_DATA_DIR: dataDir,
      PARLEY_ADMIN_TOKEN: ADMIN,
      PARLEY_LOG_LEVEL: 'warn',
      // The local receiver is http://127.0.0.1 (D37 lets the operator allow both).
      PARLEY_WEBHOOK_ALLOW_INSECURE: 'true',
      PARLEY_WEBHOOK_ALLOW_PRIVATE: 'true',
      // One retry, a second later: a failing receiver gives a `failed` delivery quickly (D39).
      PARLEY_WEBHOOK_RETRY_S: '1',
    };
    server = await startParley(serverEnv);
    origin = server.origin;
    // The operator makes the first person and her guild (registration is by invite, D46).
    const a = await callOk(origin, 'POST', '/admin/v1/users', ADMIN, {
      name: 'alice',
      password: PASSWORD,
    });
    const g = await callOk(origin, 'POST', '/admin/v1/guilds', ADMIN, {
      name: 'Parley HQ',
      ownerId: a.id,
    });
    guildId = g.id;
    await callOk(origin, 'POST', `/admin/v1/guilds/${guildId}/channels`, ADMIN, {
      name: 'general',
      topic: 'Say hello',
    });
    browser = await launch();
    alice = await person(browser, origin);
    bob = await person(browser, origin);
    console.log(`screenshots: ${SCREENSHOTS}`);
  }, 180_000);

  afterAll(async () => {
    bot?.ws.terminate();
    await browser?.close();
    await stopParley(server);
    await receiver?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  const message = (page: Page, text: string) =>
    page.locator('.msg .text', { hasText: text }).first();

  async function login(page: Page, name: string): Promise<void> {
    await page.goto('/login');
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('textbox', { name: /^Message #/ }).waitFor({ timeout: TIMEOUT });
  }

  async function send(page: Page, text: string): Promise<void> {
    const box = page.getByRole('textbox', { name: /^Message / });
    await box.fill(text);
    await box.press('Enter');
  }

  it('the login page: every control reachable by keyboard, and Enter logs in', async () => {
    const { page } = alice;
    await page.goto('/login');
    await shot(page, '01-login');
    // Tab from the top of the page: name, password, the button and the register link, in order.
    const reached: string[] = [];
    for (let i = 0; i < 4; i++) {
      await page.keyboard.press('Tab');
      reached.push(await page.evaluate<string>(FOCUSED_LABEL));
    }
    expect(reached).toEqual(['Name', 'Password', 'Log in', 'Create an account']);
    // Focus is visible (an outline) on a focused control.
    await page.getByLabel('Name').focus();
    const outline = await page.evaluate<string>(
      'getComputedStyle(document.activeElement).outlineStyle',
    );
    expect(outline).not.toBe('none');

    // A wrong password is said on the form, not as a crash.
    await page.keyboard.type('alice');
    await page.keyboard.press('Tab');
    await page.keyboard.type('not the password');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.getByRole('alert').first().textContent(), { timeout: TIMEOUT })
      .toMatch(/./);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByLabel('Password').press('Enter');
    await page.getByRole('textbox', { name: 'Message #general' }).waitFor({ timeout: TIMEOUT });
    await expect.poll(() => page.url()).toMatch(new RegExp(`/g/${guildId}/\\d+$`));
  });

  it('the owner creates an invite in guild settings and copies its link', async () => {
    const { page } = alice;
    await page.getByRole('link', { name: 'Guild settings' }).click();
    await page.getByRole('tab', { name: 'Invites' }).click();
    await page.getByLabel('Uses').selectOption('5');
    await page.getByRole('button', { name: 'Create invite' }).click();
    const link = page.locator('.invite-url').first();
    await link.waitFor({ timeout: TIMEOUT });
    inviteUrl = (await link.textContent()) ?? '';
    expect(inviteUrl).toMatch(new RegExp(`^${origin}/invite/\\S+$`));
    await page.getByRole('button', { name: 'Copy link' }).first().click();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(inviteUrl);
    await shot(page, '02-guild-invites');
  });

  it('registering without an invite is refused with a plain reason (D46 invite mode)', async () => {
    const { page } = bob;
    await page.goto('/register');
    await page.getByLabel('Name').fill('mallory');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await expect
      .poll(() => page.getByRole('alert').first().textContent(), { timeout: TIMEOUT })
      .toContain('Registration needs an invite');
  });

  it('register by invite: the preview names the guild, then the new member lands in it', async () => {
    const { page } = bob;
    await page.goto(inviteUrl);
    await page.getByRole('heading', { name: 'Join Parley HQ' }).waitFor({ timeout: TIMEOUT });
    await expect.poll(() => page.locator('.auth-card').textContent()).toContain('1 member');
    await shot(page, '03-invite');
    await page.getByLabel('Name').fill('bob');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('textbox', { name: 'Message #general' }).waitFor({ timeout: TIMEOUT });
    expect(page.url()).toContain(`/g/${guildId}/`);
  });

  it('chat both ways, live (gateway with the session cookie, D51)', async () => {
    await alice.page.getByRole('link', { name: /^general/ }).click();
    await send(alice.page, 'Hello Bob, welcome!');
    await message(bob.page, 'Hello Bob, welcome!').waitFor({ timeout: TIMEOUT });
    await send(bob.page, 'Thanks Alice!');
    await message(alice.page, 'Thanks Alice!').waitFor({ timeout: TIMEOUT });
    // Shift+Enter is a newline, not a send.
    const box = bob.page.getByRole('textbox', { name: 'Message #general' });
    await box.fill('line one');
    await box.press('Shift+Enter');
    await box.pressSequentially('line two');
    expect(await box.inputValue()).toBe('line one\nline two');
    await box.press('Enter');
    await message(alice.page, 'line two').waitFor({ timeout: TIMEOUT });
    expect(await message(alice.page, 'line two').textContent()).toBe('line one\nline two');
    // Each message once: the send answer and the gateway's copy are the same message.
    expect(await alice.page.locator('.msg .text', { hasText: 'Thanks Alice' }).count()).toBe(1);
    expect(await bob.page.locator('.msg .text', { hasText: 'Thanks Alice' }).count()).toBe(1);
  });

  it('the 2,000-character limit is shown before sending (D14)', async () => {
    const box = alice.page.getByRole('textbox', { name: 'Message #general' });
    await box.fill('x'.repeat(2001));
    await expect
      .poll(() => alice.page.locator('.count').textContent())
      .toContain('1 characters too long');
    expect(await alice.page.getByRole('button', { name: 'Send message' }).isDisabled()).toBe(true);
    await box.fill('');
  });

  it('upload an image: both see it inline (D22, D23)', async () => {
    // Issue #24 (D61): a picked file waits in the composer's tray and goes with Send, as an
    // attachment of one message (it was sent at once as a bare link before)
    await bob.page.getByLabel('Choose files to upload').setInputFiles({
      name: 'gradient.png',
      mimeType: 'image/png',
      buffer: gradientPng(),
    });
    await bob.page.getByRole('list', { name: 'Files to send' }).waitFor({ timeout: TIMEOUT });
    await bob.page.getByRole('button', { name: 'Send message' }).click();
    for (const p of [alice.page, bob.page]) {
      const img = p.locator('.attachment-image img').first();
      await img.waitFor({ timeout: TIMEOUT });
      expect(await img.getAttribute('src')).toMatch(
        new RegExp(`^${origin}/cdn/files/\\d+/gradient\\.png$`),
      );
      await expect
        .poll(() => img.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth))
        .toBe(240);
    }
    // A file type the server refuses is said plainly, not as a toast storm.
    await bob.page.getByLabel('Choose files to upload').setInputFiles({
      name: 'notes.png',
      mimeType: 'image/png',
      buffer: Buffer.from('this is not a png'),
    });
    await bob.page.getByRole('button', { name: 'Send message' }).click();
    await expect
      .poll(() => bob.page.locator('.composer-error').textContent(), { timeout: TIMEOUT })
      .toMatch(/not allowed|type/i);
    // the refused file stays in the tray until removed
    await bob.page.getByRole('button', { name: 'Remove notes.png' }).click();
    await shot(alice.page, '04-chat');
  });

  it('the owner creates a bot, copies its token, and adds it to the guild (D50)', async () => {
    const { page } = alice;
    await page.getByRole('link', { name: 'My bots' }).click();
    await page.getByRole('heading', { name: /My bots \(/ }).waitFor({ timeout: TIMEOUT });
    expect(await page.getByRole('heading', { name: /My bots \(/ }).textContent()).toContain(
      '0 of 3',
    );
    await page.getByLabel('Bot name').fill('echo');
    await page.getByLabel('Description (optional)').fill('Answers !ping');
    await page.getByRole('button', { name: 'Create bot' }).click();
    const token = page.getByTestId('secret-value');
    await token.waitFor({ timeout: TIMEOUT });
    await page.getByRole('group', { name: 'Token' }).getByRole('button', { name: 'Copy' }).click();
    botToken = await page.evaluate<string>('navigator.clipboard.readText()');
    expect(botToken).toBe(await token.textContent());
    expect(botToken.split('.')).toHaveLength(3); // a JWT (D8)

    await page.getByLabel('Add to guild').selectOption({ label: 'Parley HQ' });
    await page.getByRole('button', { name: 'Add bot' }).click();
    await expect
      .poll(() => page.locator('.card', { hasText: 'Guilds' }).textContent(), {
        timeout: TIMEOUT,
      })
      .toContain('Parley HQ');
  });

  it('the bot on the raw gateway answers in the channel; the people see it, marked BOT', async () => {
    const ws = new WebSocket(server.gatewayUrl, {
      headers: { authorization: `Bearer ${botToken}` },
    });
    let readyResolve: () => void = () => {};
    const ready = new Promise<void>((r) => (readyResolve = r));
    const closed = new Promise<number>((r) => ws.on('close', (code) => r(code)));
    ws.on('message', (raw) => {
      const f = JSON.parse((raw as Buffer).toString()) as {
        op: number;
        t?: string;
        d: { content: string; channelId: number; author: { name: string } };
      };
      if (f.op === 0 && f.t === 'READY') readyResolve();
      if (f.op === 0 && f.t === 'MESSAGE_CREATE' && f.d.content === '!ping') {
        void callOk(origin, 'POST', `/api/v1/channels/${f.d.channelId}/messages`, botToken, {
          content: `pong, ${f.d.author.name}`,
        });
      }
    });
    bot = { ws, closed, ready };
    await ready;
    await send(bob.page, '!ping');
    const botPage = alice.page.url();
    await alice.page.getByRole('link', { name: /^Parley HQ/ }).click();
    for (const p of [bob.page, alice.page]) {
      const pong = p.locator('.msg', { hasText: 'pong, bob' });
      await pong.waitFor({ timeout: TIMEOUT });
      expect(await pong.locator('.tag').textContent()).toBe('BOT');
    }
    // The bot is a member now, marked in the member list too.
    await alice.page.locator('.member', { hasText: 'echo' }).locator('.tag').waitFor();
    await shot(alice.page, '05-chat');
    await alice.page.goto(botPage);
  });

  it('webhook: a test event is delivered with status and latency; a failure is redelivered from the log', async () => {
    const { page } = alice;
    // The server's reason for refusing an address goes on the field (D37).
    await page.getByLabel('Webhook URL').fill('ftp://example.com/x');
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.locator('.field.has-error .field-error').waitFor({ timeout: TIMEOUT });

    await page.getByLabel('Webhook URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Save webhook' }).click();
    await page.getByRole('group', { name: 'Signing secret' }).waitFor({ timeout: TIMEOUT });
    const before = receiver.received.length;
    await page.getByRole('button', { name: 'Send test event' }).click();
    await receiver.waitFor(before + 1);
    const row = page.locator('tbody tr[data-state="delivered"]').first();
    await row.waitFor({ timeout: TIMEOUT }); // the log refreshes by itself
    const cells = await row.locator('td').allTextContents();
    expect(cells[3]).toBe('200');
    expect(cells[4]).toMatch(/^\d+ ms$/);
    await shot(page, '06-bot-page', 1080);

    // The receiver fails: two tries (PARLEY_WEBHOOK_RETRY_S=1), then `failed`.
    webhookAnswer = (res) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end('receiver is down');
    };
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByLabel('State').selectOption('failed');
    const failed = page.locator('tbody tr[data-state="failed"]').first();
    await failed.waitFor({ timeout: 30_000 });
    expect((await failed.locator('td').allTextContents())[3]).toBe('500');
    await failed.getByRole('button', { name: 'Details' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delivery' });
    await expect.poll(() => dialog.locator('.attempt').count()).toBeGreaterThanOrEqual(2);
    expect(await dialog.locator('.attempt-status').first().textContent()).toBe('500');
    expect(await dialog.locator('.attempt-latency').first().textContent()).toMatch(/^\d+ ms$/);
    expect(await dialog.locator('.response-body').first().textContent()).toBe('receiver is down');
    await shot(page, '07-delivery-detail');

    webhookAnswer = (res) => {
      res.writeHead(200).end('back');
    };
    const n = receiver.received.length;
    await dialog.getByRole('button', { name: 'Redeliver' }).click();
    await receiver.waitFor(n + 1);
    await page.getByLabel('State').selectOption('all');
    await expect
      .poll(async () => (await page.locator('tbody tr').first().getAttribute('data-state')) ?? '', {
        timeout: TIMEOUT,
      })
      .toBe('delivered');
  });

  it('reset the token: the confirmation says the old one dies, and the bot is closed with 4004 (D8)', async () => {
    const { page } = alice;
    await page.getByRole('button', { name: 'Reset token' }).click();
    const dialog = page.getByRole('dialog', { name: 'Reset the token?' });
    expect(await dialog.textContent()).toContain('at once');
    await shot(page, '08-reset-token');
    await dialog.getByRole('button', { name: 'Reset token' }).click();
    expect(await bot!.closed).toBe(4004);
    botNow =
      (await page
        .getByRole('group', { name: 'Token' })
        .getByTestId('secret-value')
        .textContent()) ?? '';
    expect(botNow).not.toBe(botToken);
    // Escape closes a dialog.
    await page.getByRole('button', { name: 'Delete bot' }).click();
    await page.getByRole('dialog', { name: /Delete echo/ }).waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
  });

  it(
    'the gateway drops (server restart): a banner, then what was missed appears once (D51)',
    {
      timeout: 120_000,
    },
    async () => {
      const { page } = alice;
      await page.goto(`/g/${guildId}`);
      const box = page.getByRole('textbox', { name: 'Message #general' });
      await box.waitFor({ timeout: TIMEOUT });
      const channelId = Number(page.url().split('/').pop());
      await stopParley(server);
      await page.getByText('Connection lost — reconnecting…').waitFor({ timeout: TIMEOUT });
      await shot(page, '09-reconnecting');
      server = await startParley(serverEnv);
      // Sent while the person is away: the app must read it after reconnecting (after=).
      const missed = `sent while you were away ${Date.now()}`;
      await callOk(origin, 'POST', `/api/v1/channels/${channelId}/messages`, botNow, {
        content: missed,
      });
      try {
        await message(page, missed).waitFor({ timeout: 45_000 });
        await message(bob.page, missed).waitFor({ timeout: 45_000 });
      } finally {
        await shot(page, '09-after-restart-alice');
        await shot(bob.page, '09-after-restart-bob');
      }
      await expect
        .poll(() => page.getByText('Connection lost — reconnecting…').count(), { timeout: TIMEOUT })
        .toBe(0);
      expect(await page.locator('.msg .text', { hasText: missed }).count()).toBe(1);
      expect(await bob.page.locator('.msg .text', { hasText: missed }).count()).toBe(1);
      expect(await page.locator('.msg .text', { hasText: 'Hello Bob, welcome!' }).count()).toBe(1);
    },
  );

  it('kick a member: their view loses the guild (GUILD_DELETE, D51)', async () => {
    const { page } = alice;
    // Roles with their permissions by name (D11), given to a member.
    await page.goto(`/g/${guildId}/settings?tab=roles`);
    await page.getByLabel('New role name').fill('moderators');
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.getByLabel('Name of role moderators').waitFor({ timeout: TIMEOUT });
    await page.getByRole('tab', { name: 'Members' }).click();
    const bobRow = page.locator('.member-admin', { hasText: 'bob' });
    await bobRow.getByLabel('moderators').check();
    await expect.poll(() => bobRow.getByLabel('moderators').isChecked()).toBe(true);
    // each member's moderation is folded until opened (a long list stays a list)
    expect(await page.getByRole('button', { name: 'Kick bob' }).isVisible()).toBe(false);
    await shot(page, '10-guild-members');
    await bobRow.locator('summary', { hasText: 'Moderate bob' }).click();
    await page.getByRole('button', { name: 'Kick bob' }).click();
    await page
      .getByRole('dialog', { name: 'Kick bob?' })
      .getByRole('button', { name: 'Kick' })
      .click();
    await bob.page
      .getByText('You are no longer a member of Parley HQ.')
      .waitFor({ timeout: TIMEOUT });
    expect(await bob.page.getByRole('link', { name: /Parley HQ/ }).count()).toBe(0);
    await shot(bob.page, '11-kicked');
  });

  it('the send flow by keyboard alone: the composer and its buttons are reachable', async () => {
    const { page } = alice;
    await page.goto(`/g/${guildId}`);
    const box = page.getByRole('textbox', { name: 'Message #general' });
    await box.waitFor({ timeout: TIMEOUT });
    await page.locator('body').focus();
    const seen = new Set<string>();
    for (let i = 0; i < 40 && !seen.has('Message #general'); i++) {
      await page.keyboard.press('Tab');
      seen.add(await page.evaluate<string>(FOCUSED_LABEL));
    }
    expect(seen).toContain('Attach a file');
    expect(seen).toContain('Message #general');
    await page.keyboard.type('sent by keyboard');
    await page.keyboard.press('Enter');
    await message(page, 'sent by keyboard').waitFor({ timeout: TIMEOUT });
  });

  it('the phone layout (360 px): no sideways scrolling, navigation in a drawer', async () => {
    const phone = await person(browser, origin, { phone: true });
    try {
      await login(phone.page, 'alice');
      const { page } = phone;
      await message(page, 'sent by keyboard').waitFor({ timeout: TIMEOUT });
      expect(
        await page.evaluate<number>('document.documentElement.scrollWidth'),
      ).toBeLessThanOrEqual(360);
      await shot(page, '12-phone-chat');
      await page.getByRole('button', { name: 'Open navigation' }).click();
      await page.getByRole('link', { name: 'My bots' }).waitFor();
      await shot(page, '13-phone-drawer');
      await page.getByRole('link', { name: 'My bots' }).click();
      await page.getByRole('heading', { name: /My bots \(/ }).waitFor({ timeout: TIMEOUT });
      expect(
        await page.evaluate<number>('document.documentElement.scrollWidth'),
      ).toBeLessThanOrEqual(360);
      await shot(page, '14-phone-bots');
      expect(phone.errors).toEqual([]);
    } finally {
      await phone.ctx.close();
    }
  });

  it('a desktop window narrowed to a phone width takes the phone layout, and back', async () => {
    const desk = await person(browser, origin);
    try {
      await login(desk.page, 'alice');
      const { page } = desk;
      await message(page, 'sent by keyboard').waitFor({ timeout: TIMEOUT });
      // today's messages start under a "Today" divider and are stamped "Today at …"
      await page.getByRole('separator', { name: 'Today' }).first().waitFor({ timeout: TIMEOUT });
      expect(await page.locator('.msg-head time').first().textContent()).toMatch(
        /^Today at \d{1,2}:\d{2}\s[AP]M$/,
      );
      const members = page.getByRole('complementary', { name: 'Members' });
      const menu = page.getByRole('button', { name: 'Open navigation' });
      await members.waitFor({ timeout: TIMEOUT });
      expect(await menu.isVisible()).toBe(false);
      // narrowed: the member list closes (it would cover the chat), the guild rail goes into
      // the drawer, nothing scrolls sideways
      await page.setViewportSize({ width: 360, height: 740 });
      await members.waitFor({ state: 'detached', timeout: TIMEOUT });
      await menu.waitFor({ timeout: TIMEOUT });
      // (off-screen to the left: translated out of view, which Playwright still calls visible)
      // (the rail and the channel list slide out together over 0.18 s)
      const nav = page.locator('#nav');
      const navRight = async () => {
        const box = await nav.boundingBox();
        return box ? box.x + box.width : NaN;
      };
      await expect.poll(navRight).toBeLessThanOrEqual(0);
      expect(
        await page.evaluate<number>('document.documentElement.scrollWidth'),
      ).toBeLessThanOrEqual(360);
      // the search box says one word, not a list of filters cut to "Searc"
      const search = page.getByRole('searchbox', { name: 'Search messages' });
      expect(await search.getAttribute('placeholder')).toBe('Search');
      await shot(page, '15-narrowed-window');
      // the drawer opened on the phone width closes when the window is widened again, and the
      // member list comes back beside the chat
      await menu.click();
      await page.getByRole('link', { name: 'My bots' }).waitFor();
      await page.setViewportSize({ width: 1280, height: 800 });
      await members.waitFor({ timeout: TIMEOUT });
      expect(await page.locator('.drawer-open').count()).toBe(0);
      // the rail back at the left edge, the channel list beside it, the chat right after
      await expect.poll(async () => (await nav.boundingBox())?.x).toBe(0);
      const chatLeft = (await page.getByRole('main').boundingBox())?.x;
      expect(chatLeft).toBe(await navRight());
      expect(await menu.isVisible()).toBe(false);
      expect(await search.getAttribute('placeholder')).toBe('Search messages');
      await shot(page, '16-widened-window');
      expect(desk.errors).toEqual([]);
    } finally {
      await desk.ctx.close();
    }
  });

  it('a tab left open past midnight renames the day: Today becomes Yesterday', async () => {
    const night = await person(browser, origin);
    try {
      const { page } = night;
      // the page's clock is the real one until fast-forwarded (Playwright's clock)
      await page.clock.install();
      await login(page, 'alice');
      await message(page, 'sent by keyboard').waitFor({ timeout: TIMEOUT });
      await page.getByRole('separator', { name: 'Today' }).first().waitFor({ timeout: TIMEOUT });
      const toMidnight = await page.evaluate<number>(
        '(() => { const n = new Date(); n.setHours(24, 0, 1, 0); return n.getTime() - Date.now(); })()',
      );
      await page.clock.fastForward(toMidnight + 1000);
      await page
        .getByRole('separator', { name: 'Yesterday' })
        .first()
        .waitFor({ timeout: TIMEOUT });
      expect(await page.getByRole('separator', { name: 'Today' }).count()).toBe(0);
      expect(await page.locator('.msg-head time').first().textContent()).toMatch(/^Yesterday at /);
      expect(night.errors).toEqual([]);
    } finally {
      await night.ctx.close();
    }
  });

  it('no script error or CSP violation in any page', () => {
    expect(alice.errors).toEqual([]);
    expect(bob.errors).toEqual([]);
  });
});
