import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { firstScreen, FIRST_SCREEN_BUDGET } from '../scripts/first-screen.mjs';
import { buildApp } from './helpers/browser.js';

// Issue #12: the first screen (index.html's scripts and styles) is at most 250 KiB gzipped, and
// the build loads nothing from another origin.
describe('the web app build (D55)', () => {
  it('first screen within budget, every asset from this origin, no inline script', async () => {
    buildApp();
    const dist = fileURLToPath(new URL('../dist', import.meta.url));
    const { files, gzipBytes } = firstScreen(dist);
    console.log(`first screen: ${(gzipBytes / 1024).toFixed(1)} KiB gzipped (${files.join(', ')})`);
    expect(files.some((f) => f.endsWith('.js'))).toBe(true);
    expect(gzipBytes).toBeLessThanOrEqual(FIRST_SCREEN_BUDGET);
    const { readFileSync } = await import('node:fs');
    const html = readFileSync(path.join(dist, 'index.html'), 'utf8');
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/); // no inline script (CSP)
    expect(html).not.toMatch(/(?:src|href)="(?:https?:)?\/\//); // nothing from elsewhere
    for (const f of files) {
      const text = readFileSync(path.join(dist, f), 'utf8');
      expect(text, f).not.toMatch(/url\((["']?)https?:\/\//); // no remote fonts or images
    }
  });
});
