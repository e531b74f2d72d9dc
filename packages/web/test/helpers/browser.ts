import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

/**
 * The browser tests' tools (issue #12): Debian's Chromium driven by playwright-core (Playwright's
 * own browser downloads are not available here), the app built from the current sources, and a
 * folder for screenshots.
 */
export const CHROMIUM = '/usr/bin/chromium';
const WEB = fileURLToPath(new URL('../../', import.meta.url));
export const REPO = path.resolve(WEB, '../..');
export const SCREENSHOTS = path.join(REPO, 'test-results', 'screenshots');

/** Like the PostgreSQL suites: skipped with a loud warning without Chromium; required in CI. */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM)) return true;
  if (process.env['CI'] === 'true')
    throw new Error(
      `Chromium is required in CI but ${CHROMIUM} is missing (apt-get install chromium)`,
    );
  console.warn(
    `\n!!! ${CHROMIUM} not found: the web app's browser tests are SKIPPED ` +
      '(apt-get install -y chromium to run them) !!!\n',
  );
  return false;
}

/** Builds packages/web/dist when a source is newer than the build. */
export function buildApp(): void {
  const r = spawnSync(process.execPath, [path.join(WEB, 'scripts/build.mjs'), '--if-stale'], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`web build failed:\n${r.stdout}\n${r.stderr}`);
  if (r.stdout.trim()) console.log(r.stdout.trim());
}

/** Chromium with the flags of issue #12; Playwright gives each launch a fresh profile dir. */
export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export async function person(
  browser: Browser,
  origin: string,
  opts: { phone?: boolean } = {},
): Promise<{ ctx: BrowserContext; page: Page; errors: string[] }> {
  const ctx = await browser.newContext({
    baseURL: origin,
    viewport: opts.phone ? { width: 360, height: 740 } : { width: 1280, height: 800 },
    ...(opts.phone ? { isMobile: true, hasTouch: true, deviceScaleFactor: 2 } : {}),
    colorScheme: 'light',
  });
  await ctx.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  const page = await ctx.newPage();
  const errors: string[] = [];
  // Any script error or CSP violation in the page is a test failure (see the afterAll checks).
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    // Failed requests are answers the app handles (a 401 before login); refused WebSocket
    // connections happen while the server restarts (the reconnect test).
    if (
      m.type() === 'error' &&
      !/Failed to load resource|WebSocket connection to .* failed/.test(m.text())
    )
      errors.push(`console: ${m.text()}`);
  });
  return { ctx, page, errors };
}

/**
 * A screenshot in test-results/screenshots; `height` shows more of a long page. Transitions are
 * finished first (the phone drawer slides for 0.18 s), so the picture shows where the page
 * settles, not a frame of the slide.
 */
export async function shot(page: Page, name: string, height?: number): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const file = path.join(SCREENSHOTS, `${name}.png`);
  const before = page.viewportSize();
  if (height && before) await page.setViewportSize({ width: before.width, height });
  await page.screenshot({ path: file, animations: 'disabled' });
  if (height && before) await page.setViewportSize(before);
  return file;
}
