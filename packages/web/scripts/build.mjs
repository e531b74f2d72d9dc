// Builds the web app into packages/web/dist (D55) and prints the first screen's weight: the
// gzipped size of every script and stylesheet index.html loads (issue #12: ≤ 250 KiB).
// Run by the root `prepare` (npm install) and, when dist is missing, by `npm start`.
//
// Usage: node packages/web/scripts/build.mjs [--quiet] [--if-missing]
import { existsSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { firstScreen, FIRST_SCREEN_BUDGET } from './first-screen.mjs';

const webDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(webDir, 'dist');
const quiet = process.argv.includes('--quiet');

if (process.argv.includes('--if-missing') && existsSync(path.join(dist, 'index.html'))) {
  process.exit(0);
}

const started = Date.now();
const { build } = await import('vite');
await build({
  configFile: path.join(webDir, 'vite.config.mjs'),
  logLevel: quiet ? 'error' : 'warn',
});

const { files, gzipBytes } = firstScreen(dist);
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
if (!quiet || gzipBytes > FIRST_SCREEN_BUDGET) {
  process.stdout.write(
    `built packages/web/dist in ${Date.now() - started} ms; first screen ${kib(gzipBytes)} ` +
      `gzipped (${files.length} files; budget ${kib(FIRST_SCREEN_BUDGET)})\n`,
  );
}
if (gzipBytes > FIRST_SCREEN_BUDGET) {
  process.stderr.write('the first screen is over its budget\n');
  process.exit(1);
}
