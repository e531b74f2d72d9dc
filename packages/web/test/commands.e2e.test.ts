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
import { Bot, button, defineCommand, OptionType, row, select } from '../../sdk/src/index.js';
import { buildApp, chromiumAvailable, launch, person, shot } from './helpers/browser.js';

// Issue #25 in a real browser (D64–D65): a person runs a bot's command from the `/` picker with
// its options, sees the reply and its "Roll again" button (disabled while pending) update the
// message; an ephemeral reply only the invoker sees, with a dismiss; a deferred answer shown as
// "thinking…" first; and "did not answer" only when the 15-minute window has passed (clock).
// The bot is the SDK's, in this process, on the gateway.

const ADMIN = 'browser-commands-admin-token-012345';
const PASSWORD = 'amber finch over lakes';
const TIMEOUT = 15_000;

const roll = defineCommand({
  name: 'roll',
  description: 'Roll dice',
  options: [
    {
      type: OptionType.INTEGER,
      name: 'sides',
      description: 'Sides of each die',
      required: true,
      minValue: 2,
      maxValue: 1000,
    },
    { type: OptionType.INTEGER, name: 'count', description: 'How many dice', minValue: 1 },
  ],
});
const secret = defineCommand({ name: 'secret', description: 'A word only you see' });
const slow = defineCommand({ name: 'slow', description: 'Thinks before answering' });
const ghost = defineCommand({ name: 'ghost', description: 'Never answers' });
const colour = defineCommand({ name: 'colour', description: 'A select menu' });
const pick = defineCommand({
  name: 'pick',
  description: 'Pick a fruit',
  options: [
    {
      type: OptionType.STRING,
      name: 'fruit',
      description: 'Start typing',
      required: true,
      autocomplete: true,
    },
    {
      type: OptionType.STRING,
      name: 'size',
      description: 'How big',
      choices: [
        { name: 'Small', value: 's' },
        { name: 'Large', value: 'l' },
      ],
    },
  ],
});

describe.skipIf(!chromiumAvailable())('slash commands and buttons in a real browser (#25)', () => {
  let server: Running;
  let browser: Browser;
  let bot: Bot;
  let dataDir: string;
  let origin: string;
  let guildId = 0;
  let general = 0;
  let alice: Awaited<ReturnType<typeof person>>;
  let bob: Awaited<ReturnType<typeof person>>;
  let rolls = 0;
  let releaseRoll: (() => void) | undefined;

  beforeAll(async () => {
    buildApp();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-browser-25-'));
    server = await startParley(
      {
        PARLEY_PORT: String(await freePort()),
        PARLEY_DATA_DIR: dataDir,
        PARLEY_ADMIN_TOKEN: ADMIN,
        PARLEY_LOG_LEVEL: 'warn',
      },
      180_000,
    );
    origin = server.origin;
    const ids: Record<string, number> = {};
    for (const name of ['alice', 'bob'])
      ids[name] = (
        await callOk(origin, 'POST', '/admin/v1/users', ADMIN, { name, password: PASSWORD })
      ).id;
    guildId = (
      await callOk(origin, 'POST', '/admin/v1/guilds', ADMIN, {
        name: 'Dice Club',
        ownerId: ids['alice'],
      })
    ).id;
    await callOk(origin, 'PUT', `/admin/v1/guilds/${guildId}/members/${ids['bob']}`, ADMIN, {});
    general = (
      await callOk(origin, 'POST', `/admin/v1/guilds/${guildId}/channels`, ADMIN, {
        name: 'general',
      })
    ).id;
    const b = await callOk(origin, 'POST', '/admin/v1/bots', ADMIN, {
      ownerId: ids['alice'],
      name: 'dicebot',
    });
    await callOk(
      origin,
      'PUT',
      `/admin/v1/guilds/${guildId}/members/${b.bot.botUser.id}`,
      ADMIN,
      {},
    );

    bot = new Bot({ token: b.token, url: origin });
    bot.command(roll, (i) => {
      const { sides, count = 1 } = i.options;
      return i.reply({
        content: `rolled ${count}d${sides}: ${++rolls}`,
        components: [row(button(`again:${sides}:${count}`, 'Roll again', { emoji: '🎲' }))],
      });
    });
    // the button's answer waits until the test has seen the button disabled
    bot.component('again:', async (i) => {
      await new Promise<void>((r) => {
        releaseRoll = r;
        setTimeout(r, 10_000);
      });
      return i.update({ content: `rolled again by ${i.user.name}: ${++rolls}` });
    });
    bot.command(secret, (i) => i.reply({ content: 'the word is *marmalade*', ephemeral: true }));
    bot.command(slow, async (i) => {
      await i.defer();
      await new Promise((r) => setTimeout(r, 2500));
      await i.editReply('thought it through: 42');
    });
    bot.autocomplete(pick, (i) =>
      i.autocomplete(
        ['apple', 'apricot', 'banana']
          .filter((f) => f.startsWith(String(i.focused?.value ?? '')))
          .map((f) => ({ name: f, value: f })),
      ),
    );
    bot.command(colour, (i) =>
      i.reply({
        content: 'pick colours',
        components: [
          row(
            select(
              'colour',
              [
                { label: 'Red', value: 'red' },
                { label: 'Blue', value: 'blue' },
              ],
              { placeholder: 'Colour' },
            ),
          ),
        ],
      }),
    );
    bot.component('colour', (i) => i.update({ content: `chose ${i.values.join(', ')}` }));
    bot.command(pick, (i) => i.reply(`picked ${i.options.fruit} (${i.options.size ?? '-'})`));
    await bot.commands.set([roll, secret, slow, ghost, pick, colour], { guildId });
    await bot.start();

    browser = await launch();
    alice = await person(browser, origin);
    bob = await person(browser, origin);
    await login(alice.page, 'alice');
    await login(bob.page, 'bob');
  }, 400_000);

  afterAll(async () => {
    await bot?.stop();
    await browser?.close();
    await stopParley(server);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    for (const p of [alice, bob]) expect(p?.errors ?? []).toEqual([]);
  });

  async function login(page: Page, name: string): Promise<void> {
    await page.goto('/login');
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('textbox', { name: /^Message #/ }).waitFor({ timeout: TIMEOUT });
  }
  const composer = (page: Page) => page.getByRole('textbox', { name: /^Message #/ });
  const message = (page: Page, text: string | RegExp) =>
    page.locator('.msg', { hasText: text }).last();

  it('`/` opens the picker; a command runs with its options; the reply and its button update the message', async () => {
    const { page } = alice;
    await page.goto(`/g/${guildId}/${general}`);
    await composer(page).fill('/');
    const picker = page.getByRole('listbox', { name: 'Commands' });
    await picker.getByRole('option', { name: /\/roll/ }).waitFor({ timeout: TIMEOUT });
    expect(await picker.getByRole('option').allInnerTexts()).toEqual([
      expect.stringContaining('/roll'),
      expect.stringContaining('/secret'),
      expect.stringContaining('/slow'),
      expect.stringContaining('/ghost'),
      expect.stringContaining('/pick'),
      expect.stringContaining('/colour'),
    ]);
    await expect.poll(() => picker.textContent()).toContain('dicebot');
    await composer(page).fill('/ro');
    await expect.poll(() => picker.getByRole('option').count()).toBe(1);
    await shot(page, 'commands-picker');
    await composer(page).press('Enter');
    const form = page.getByRole('form', { name: '/roll options' });
    await form.waitFor({ timeout: TIMEOUT });
    // required marked; Enter with it empty says so without a request
    await composer(page).press('Enter');
    await form.getByRole('alert').filter({ hasText: 'Required.' }).waitFor({ timeout: TIMEOUT });
    await form.getByLabel(/^sides/).fill('20');
    await form.getByLabel(/^count/).fill('2');
    expect(await form.getByRole('alert').count()).toBe(0); // the field's error went with its input
    await shot(page, 'commands-form');
    await form.getByLabel(/^count/).press('Enter');
    const reply = message(page, /rolled 2d20: \d+/);
    await reply.waitFor({ timeout: TIMEOUT });
    expect(await reply.innerText()).toContain('alice used /roll');
    expect(await page.getByRole('form', { name: '/roll options' }).count()).toBe(0);
    await expect.poll(() => composer(page).inputValue()).toBe('');

    // bob presses "Roll again": disabled while the bot has not answered, then the message changes
    const b = bob.page;
    await b.goto(`/g/${guildId}/${general}`);
    const again = message(b, /rolled 2d20/).getByRole('button', { name: /Roll again/ });
    await again.click({ timeout: TIMEOUT });
    await expect.poll(() => again.isDisabled(), { timeout: TIMEOUT }).toBe(true);
    await shot(b, 'commands-button-pending');
    releaseRoll?.();
    await message(page, /rolled again by bob: \d+/).waitFor({ timeout: TIMEOUT });
    const updated = message(b, /rolled again by bob/);
    await updated.waitFor({ timeout: TIMEOUT });
    await expect
      .poll(() => updated.getByRole('button', { name: /Roll again/ }).isDisabled())
      .toBe(false);
    await shot(page, 'commands-reply-updated');
  }, 120_000);

  it('an ephemeral reply: only the invoker sees it, marked, and can dismiss it', async () => {
    const { page } = alice;
    await composer(page).fill('/sec');
    await page.getByRole('listbox', { name: 'Commands' }).getByRole('option').first().waitFor();
    await composer(page).press('Enter');
    await page.getByRole('form', { name: '/secret options' }).waitFor({ timeout: TIMEOUT });
    await composer(page).press('Enter');
    const secretMsg = message(page, 'the word is');
    await secretMsg.waitFor({ timeout: TIMEOUT });
    expect(await secretMsg.innerText()).toContain('Only you can see this');
    await shot(page, 'commands-ephemeral');
    // bob's page got a later message from the bot? it never gets this one
    await bob.page.waitForTimeout(500);
    expect(await bob.page.locator('.msg', { hasText: 'the word is' }).count()).toBe(0);
    await secretMsg.getByRole('button', { name: 'Dismiss' }).click();
    await expect.poll(() => page.locator('.msg', { hasText: 'the word is' }).count()).toBe(0);
  }, 60_000);

  it('a deferred answer shows "thinking…" first, then the answer in its place', async () => {
    const { page } = alice;
    await composer(page).fill('/slow');
    await page.getByRole('listbox', { name: 'Commands' }).getByRole('option').first().waitFor();
    await composer(page).press('Enter');
    await page.getByRole('form', { name: '/slow options' }).waitFor({ timeout: TIMEOUT });
    await composer(page).press('Enter');
    const thinking = page.getByRole('status').filter({ hasText: 'dicebot is thinking…' });
    await thinking.first().waitFor({ timeout: TIMEOUT });
    await shot(page, 'commands-thinking');
    await message(page, 'thought it through: 42').waitFor({ timeout: TIMEOUT });
    await expect.poll(() => thinking.count()).toBe(0);
  }, 60_000);

  it('autocomplete from the bot and choices as a list', async () => {
    const { page } = alice;
    await composer(page).fill('/pi');
    await page.getByRole('listbox', { name: 'Commands' }).getByRole('option').first().waitFor();
    await composer(page).press('Enter');
    const form = page.getByRole('form', { name: '/pick options' });
    await form.waitFor({ timeout: TIMEOUT });
    await form.getByLabel(/^fruit/).pressSequentially('ap');
    const suggestions = form.getByRole('listbox', { name: 'Suggestions for fruit' });
    await expect
      .poll(() => suggestions.getByRole('option').allInnerTexts(), { timeout: TIMEOUT })
      .toEqual(['apple', 'apricot']);
    await shot(page, 'commands-autocomplete');
    await suggestions.getByRole('option', { name: 'apricot' }).click();
    await form.getByLabel(/^size/).selectOption({ label: 'Large' });
    await form.getByRole('button', { name: 'Run /pick' }).click();
    await message(page, 'picked apricot (l)').waitFor({ timeout: TIMEOUT });
  }, 60_000);

  it('a select on a bot message: the choice goes to the bot, which updates the message', async () => {
    const { page } = alice;
    await composer(page).fill('/col');
    await page.getByRole('listbox', { name: 'Commands' }).getByRole('option').first().waitFor();
    await composer(page).press('Enter');
    await page.getByRole('form', { name: '/colour options' }).waitFor({ timeout: TIMEOUT });
    await composer(page).press('Enter');
    const m = message(page, 'pick colours');
    await m.waitFor({ timeout: TIMEOUT });
    await m.getByRole('combobox', { name: 'Colour' }).selectOption('blue');
    await message(page, 'chose blue').waitFor({ timeout: TIMEOUT });
    await shot(page, 'commands-select');
  }, 60_000);

  it('"did not answer" only after the 15-minute window (the page clock moved)', async () => {
    const carol = await person(browser, origin);
    await carol.ctx.clock.install();
    await login(carol.page, 'alice');
    const page = carol.page;
    await page.goto(`/g/${guildId}/${general}`);
    await composer(page).fill('/ghost');
    await page.getByRole('listbox', { name: 'Commands' }).getByRole('option').first().waitFor();
    await composer(page).press('Enter');
    await page.getByRole('form', { name: '/ghost options' }).waitFor({ timeout: TIMEOUT });
    await composer(page).press('Enter');
    await page.getByText('dicebot is thinking…').waitFor({ timeout: TIMEOUT });
    await page.clock.fastForward('14:00');
    await page.waitForTimeout(300);
    expect(await page.getByText('dicebot did not answer.').count()).toBe(0);
    await page.clock.fastForward('01:05');
    await page.getByText('dicebot did not answer.').waitFor({ timeout: TIMEOUT });
    await shot(page, 'commands-did-not-answer');
    await carol.ctx.close();
  }, 90_000);
});
