import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Permission } from '@parley/protocol';
import {
  callOk,
  freePort,
  startParley,
  stopParley,
  type Running,
} from '../../server/test/helpers/process.js';
import { buildApp, chromiumAvailable, launch, person, shot } from './helpers/browser.js';

// Issue 23 in a real browser: a moderator who is not an administrator (MODERATE_MEMBERS and
// KICK_MEMBERS through a role, D57) times a member out and kicks them from the member menu, each
// with a reason (D60 X-Audit-Log-Reason); the owner reorders a role (D58); the audit log page
// shows both actions with their reasons, filtered by action and by actor; a refusal by rank is
// explained in plain words. Names are coloured by their top role. Screenshots at each step.

const ADMIN = 'browser-moderation-admin-token-0123';
const PASSWORD = 'amber finch over lakes';
const TIMEOUT = 20_000;
/** An element's computed text colour (evaluated in the page, where the DOM is). */
const colorOf = (l: Locator): Promise<string> =>
  l.evaluate((e) => {
    const view = e.ownerDocument.defaultView as unknown as {
      getComputedStyle(x: unknown): { color: string };
    };
    return view.getComputedStyle(e).color;
  });
const rgb = (c: number) => `rgb(${c >> 16}, ${(c >> 8) & 255}, ${c & 255})`;
const GREEN = 0x2e8b57;
const ORANGE = 0xd35400;
const BLUE = 0x2f6fd0;

describe.skipIf(!chromiumAvailable())('moderation in a real browser (issue 23)', () => {
  let server: Running;
  let browser: Browser;
  let dataDir: string;
  let origin: string;
  let guildId = 0;
  let general = 0;
  const ids: Record<string, number> = {};
  const tokens: Record<string, string> = {};
  const roles: Record<string, number> = {};
  let olivia: Awaited<ReturnType<typeof person>>;
  let mona: Awaited<ReturnType<typeof person>>;
  let hugo: Awaited<ReturnType<typeof person>>;
  let maxP: Awaited<ReturnType<typeof person>>;

  beforeAll(async () => {
    buildApp();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'parley-browser-23-'));
    server = await startParley(
      {
        PARLEY_PORT: String(await freePort()),
        PARLEY_DATA_DIR: dataDir,
        PARLEY_ADMIN_TOKEN: ADMIN,
        PARLEY_LOG_LEVEL: 'warn',
        PARLEY_RATE_GLOBAL: 'off',
        PARLEY_RATE_MESSAGES: 'off',
      },
      180_000,
    );
    origin = server.origin;
    for (const name of ['olivia', 'mona', 'hugo', 'max']) {
      ids[name] = (
        await callOk(origin, 'POST', '/admin/v1/users', ADMIN, { name, password: PASSWORD })
      ).id;
      tokens[name] = (
        await callOk(origin, 'POST', '/app/v1/auth/login', undefined, { name, password: PASSWORD })
      ).token;
    }
    const g = await callOk(origin, 'POST', '/app/v1/guilds', tokens['olivia'], { name: 'Town' });
    guildId = g.id;
    general = g.channels[0].id;
    // D58: each new role goes in just above @everyone, so the last made ranks lowest:
    // moderators (3) > helpers (2) > regulars (1).
    const role = async (name: string, permissions: number, color: number) =>
      (
        await callOk(origin, 'POST', `/api/v1/guilds/${guildId}/roles`, tokens['olivia'], {
          name,
          permissions,
          color,
        })
      ).id as number;
    roles['moderators'] = await role(
      'moderators',
      Permission.MODERATE_MEMBERS | Permission.KICK_MEMBERS,
      ORANGE,
    );
    roles['helpers'] = await role('helpers', Permission.MANAGE_ROLES, BLUE);
    roles['regulars'] = await role('regulars', 0, GREEN);
    const join = (who: string, r: number[]) =>
      callOk(origin, 'PUT', `/admin/v1/guilds/${guildId}/members/${ids[who]}`, ADMIN, {
        roles: r,
      });
    await join('mona', [roles['moderators']]);
    await join('hugo', [roles['helpers']]);
    await join('max', [roles['regulars']]);
    await callOk(origin, 'POST', `/api/v1/channels/${general}/messages`, tokens['max'], {
      content: 'buy cheap links here',
    });
    browser = await launch();
    olivia = await person(browser, origin);
    mona = await person(browser, origin);
    hugo = await person(browser, origin);
    maxP = await person(browser, origin);
    await login(olivia.page, 'olivia');
    await login(mona.page, 'mona');
    await login(hugo.page, 'hugo');
    await login(maxP.page, 'max');
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

  const roleOrder = async () =>
    (
      (await callOk(origin, 'GET', `/api/v1/guilds/${guildId}/roles`, tokens['olivia'])) as {
        roles: Array<{ name: string; position: number }>;
      }
    ).roles.map((r) => r.name);

  it('the owner reorders a role with the role editor (D58)', { timeout: 120_000 }, async () => {
    const { page } = olivia;
    await page.goto(`/g/${guildId}/settings?tab=roles`);
    const rows = page.locator('li.admin-row.role');
    const names = () => rows.evaluateAll((l) => l.map((e) => e.getAttribute('data-name')));
    await expect
      .poll(() => names(), { timeout: TIMEOUT })
      .toEqual(['moderators', 'helpers', 'regulars', '@everyone']);
    // every bit by its plain name with what it allows (one table for the app)
    await page.getByText('Edit moderators').click();
    await page.getByText('Time members out').first().waitFor({ timeout: TIMEOUT });
    await page
      .getByText('Let members ranked below them only read, for up to 28 days.')
      .first()
      .waitFor({ timeout: TIMEOUT });
    expect(await page.locator('details[open] .perm').count()).toBe(Object.keys(Permission).length);
    await shot(page, 'moderation-01-roles-editor', 1100);
    await page.getByText('Edit moderators').click();
    await page.getByRole('button', { name: 'Move regulars up' }).click();
    await expect
      .poll(() => names(), { timeout: TIMEOUT })
      .toEqual(['moderators', 'regulars', 'helpers', '@everyone']);
    expect(await roleOrder()).toEqual(['@everyone', 'helpers', 'regulars', 'moderators']);
    await shot(page, 'moderation-02-role-reordered');
  });

  it(
    "the owner edits a role's colour and mentionable, and a channel's permissions per role (allow/neutral/deny)",
    { timeout: 120_000 },
    async () => {
      const { page } = olivia;
      await page.getByText('Edit helpers').click();
      await page.getByLabel('Colour of helpers').fill('#8e44ad');
      await page
        .locator(`li.admin-row.role[data-role="${roles['helpers']}"]`)
        .getByText('Anyone may @mention it')
        .click();
      await page.getByRole('button', { name: 'Save helpers' }).click();
      await expect
        .poll(
          async () =>
            (
              (await callOk(
                origin,
                'GET',
                `/api/v1/guilds/${guildId}/roles`,
                tokens['olivia'],
              )) as {
                roles: Array<{ name: string; color: number | null; mentionable: boolean }>;
              }
            ).roles.find((r) => r.name === 'helpers'),
          { timeout: TIMEOUT },
        )
        .toMatchObject({ color: 0x8e44ad, mentionable: true });

      await page.getByRole('tab', { name: 'Channels' }).click();
      await page.getByRole('button', { name: 'Permissions of #general' }).click();
      const dialog = page.locator('dialog[open]');
      await dialog.getByLabel('Role to edit').selectOption({ label: 'regulars' });
      await dialog.getByRole('radiogroup', { name: 'Attach files' }).getByLabel('Deny').check();
      await dialog.getByRole('radiogroup', { name: 'Manage messages' }).getByLabel('Allow').check();
      await shot(page, 'moderation-02b-channel-permissions', 1100);
      await dialog.getByRole('button', { name: 'Save for regulars' }).click();
      const overwrites = async () =>
        (await callOk(origin, 'GET', `/api/v1/channels/${general}/overwrites`, tokens['olivia']))
          .overwrites;
      await expect.poll(overwrites, { timeout: TIMEOUT }).toEqual([
        {
          channelId: general,
          roleId: roles['regulars'],
          allow: Permission.MANAGE_MESSAGES,
          deny: Permission.ATTACH_FILES,
        },
      ]);
      await dialog.getByText('Roles with an overwrite: regulars').waitFor({ timeout: TIMEOUT });
      // back to neutral: the role's own permissions decide again
      await dialog
        .getByRole('radiogroup', { name: 'Manage messages' })
        .getByLabel('Neutral')
        .check();
      await dialog.getByRole('button', { name: 'Save for regulars' }).click();
      await expect.poll(async () => (await overwrites())[0].allow, { timeout: TIMEOUT }).toBe(0);
      await dialog.getByRole('button', { name: 'Close' }).click();
      await page.getByRole('tab', { name: 'Roles' }).click();
    },
  );

  it(
    'names are coloured by their top role; the member menu shows only what the moderator may do',
    { timeout: 120_000 },
    async () => {
      const { page } = mona;
      await page.goto(`/g/${guildId}/${general}`);
      const maxName = page.locator('.members-panel .member-name', { hasText: /^max$/ });
      await maxName.waitFor({ timeout: TIMEOUT });
      await expect.poll(() => colorOf(maxName), { timeout: TIMEOUT }).toBe(rgb(GREEN));
      const author = page.locator('.msg .author', { hasText: /^max$/ }).first();
      await expect.poll(() => colorOf(author), { timeout: TIMEOUT }).toBe(rgb(GREEN));
      // the owner outranks everyone: no moderation in her menu
      await page.locator('.members-panel .member', { hasText: 'olivia' }).click();
      const dialog = page.locator('dialog[open]');
      await dialog.getByText('Send a message').waitFor({ timeout: TIMEOUT });
      expect(await dialog.getByText('Moderate olivia').count()).toBe(0);
      await dialog.getByRole('button', { name: 'Close' }).click();
    },
  );

  it(
    'a moderator (not admin) times out, then kicks a member from the member menu, with reasons',
    { timeout: 120_000 },
    async () => {
      const { page } = mona;
      // the name on max's message opens the same card and menu as the member list
      await page.locator('.msg .author-btn', { hasText: /^max$/ }).first().click();
      const dialog = page.locator('dialog[open]');
      await dialog.getByText('Moderate max').waitFor({ timeout: TIMEOUT });
      // KICK_MEMBERS and MODERATE_MEMBERS, but not BAN_MEMBERS: no ban button
      expect(await dialog.getByRole('button', { name: 'Ban max' }).count()).toBe(0);
      await dialog.getByLabel('Reason for moderating max').fill('spamming links');
      await dialog.getByLabel('Time-out length').selectOption({ label: '10 minutes' });
      await shot(page, 'moderation-03-member-menu');
      await dialog.getByRole('button', { name: 'Time out max' }).click();
      await dialog.getByText(/Timed out until/).waitFor({ timeout: TIMEOUT });
      const member = await callOk(
        origin,
        'GET',
        `/api/v1/guilds/${guildId}/members/${ids['max']}`,
        tokens['olivia'],
      );
      const left = Date.parse(member.timeoutUntil) - Date.now();
      expect(left).toBeGreaterThan(8 * 60_000);
      expect(left).toBeLessThanOrEqual(10 * 60_000);
      await shot(page, 'moderation-04-timed-out');
      // max's own view: the composer says he can only read, live (GUILD_MEMBER_UPDATE, D58)
      await maxP.page.getByText(/^You are timed out until .*: you can read, not write\.$/).waitFor({
        timeout: TIMEOUT,
      });
      await shot(maxP.page, 'moderation-04b-timed-out-member');
      // the member can only read now (D58)
      const refused = await fetch(`${origin}/api/v1/channels/${general}/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens['max']}`, 'content-type': 'application/json' },
        body: JSON.stringify({ content: 'more links' }),
      });
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('TIMED_OUT');

      await dialog.getByLabel('Reason for moderating max').fill('kept at it after the time-out');
      await dialog.getByRole('button', { name: 'Kick max' }).click();
      const confirm = page.getByRole('dialog', { name: 'Kick max?' });
      await confirm
        .getByText('Reason: kept at it after the time-out')
        .waitFor({ timeout: TIMEOUT });
      await shot(page, 'moderation-05-kick-confirm');
      await confirm.getByRole('button', { name: 'Kick', exact: true }).click();
      await page
        .locator('.members-panel .member-name', { hasText: /^max$/ })
        .waitFor({ state: 'detached', timeout: TIMEOUT });
      await shot(page, 'moderation-06-kicked');
    },
  );

  it(
    'the audit log page shows both actions with their reasons, by action and by actor (D60)',
    { timeout: 120_000 },
    async () => {
      // In-app, as a person would (the page stayed open since the reorder and saw the kick live).
      const { page } = olivia;
      await page.getByRole('tab', { name: 'Audit log' }).click();
      const entries = page.locator('li.audit-entry');
      await expect
        .poll(() => entries.evaluateAll((l) => l.map((e) => e.getAttribute('data-action'))), {
          timeout: TIMEOUT,
        })
        .toEqual(expect.arrayContaining(['MEMBER_KICK', 'MEMBER_TIMEOUT', 'ROLE_UPDATE']));
      const kick = page.locator('li.audit-entry[data-action="MEMBER_KICK"]');
      await expect.poll(() => kick.innerText()).toContain('Reason: kept at it after the time-out');
      expect(await kick.innerText()).toMatch(/mona[\s\S]*kicked a member[\s\S]*max/);
      const timeout = page.locator('li.audit-entry[data-action="MEMBER_TIMEOUT"]');
      expect(await timeout.innerText()).toContain('Reason: spamming links');
      expect(await timeout.innerText()).toMatch(/mona[\s\S]*timed a member out[\s\S]*max/);
      expect(await page.getByText('reordered roles', { exact: true }).count()).toBe(1);
      // a channel's permissions by their names and the role by its name, never bits or ids
      const overwrites = page.locator('li.audit-entry[data-action="OVERWRITE_UPDATE"]');
      expect(await overwrites.count()).toBe(2);
      const [undone, made] = [
        await overwrites.nth(0).innerText(),
        await overwrites.nth(1).innerText(),
      ];
      expect(made).toMatch(
        /for the role regulars[\s\S]*allowed: \+ Manage messages[\s\S]*denied: \+ Attach files/,
      );
      expect(undone).toMatch(/for the role regulars[\s\S]*allowed: − Manage messages/);
      expect(`${made}${undone}`).not.toMatch(/\d{6,}|roleId|allow:|deny:/);
      // the operator's changes to members name the member and the request
      const operator = page.locator('li.audit-entry[data-action="OPERATOR_CHANGE"]');
      expect(await operator.count()).toBeGreaterThanOrEqual(3);
      for (const text of await operator.allInnerTexts())
        expect(text).toMatch(
          /The operator made a change through the operator API [a-z]+\s+request: PUT \/admin\/v1\/guilds\/:guildId\/members\/:userId/,
        );
      await shot(page, 'moderation-07-audit-log', 1000);

      await page.getByLabel('Filter by action').selectOption('MEMBER_KICK');
      await expect
        .poll(() => entries.evaluateAll((l) => l.map((e) => e.getAttribute('data-action'))), {
          timeout: TIMEOUT,
        })
        .toEqual(['MEMBER_KICK']);
      await shot(page, 'moderation-08-audit-by-action');
      await page.getByLabel('Filter by action').selectOption('');
      await page.getByLabel('Filter by who did it').selectOption({ label: 'mona' });
      await expect
        .poll(() => entries.evaluateAll((l) => l.map((e) => e.getAttribute('data-action'))), {
          timeout: TIMEOUT,
        })
        .toEqual(['MEMBER_KICK', 'MEMBER_TIMEOUT']);
      await shot(page, 'moderation-09-audit-by-actor');
    },
  );

  it('a refusal by rank is explained in plain words (D58)', { timeout: 120_000 }, async () => {
    // hugo may manage roles, but "moderators" ranks above his own highest role
    const { page } = hugo;
    await page.goto(`/g/${guildId}/settings?tab=roles`);
    await page.getByRole('button', { name: 'Move moderators down' }).click();
    const alert = page.locator('.refusal[role="alert"]');
    await alert.waitFor({ timeout: TIMEOUT });
    expect(await alert.innerText()).toBe(
      'You can only change roles that are below your own highest role, and only place roles below it. Ask someone ranked higher (or the owner) to do it.',
    );
    expect(await roleOrder()).toEqual(['@everyone', 'helpers', 'regulars', 'moderators']);
    await shot(page, 'moderation-10-rank-refusal');
  });

  it('no script error or CSP violation in any page', () => {
    expect([...olivia.errors, ...mona.errors, ...hugo.errors, ...maxP.errors]).toEqual([]);
  });
});
