// Builds the web app into packages/web/dist (D55) and prints the first screen's weight: the
// gzipped size of every script and stylesheet index.html loads (issue #12: ≤ 250 KiB).
// Run by the root `prepare` (npm install) and, when dist is missing, by `npm start`.
//
// Usage: node packages/web/scripts/build.mjs [--quiet] [--if-missing | --if-stale]
//   --if-missing  only when dist/index.html does not exist (npm start)
//   --if-stale    only when a source file is newer than dist/index.html (the browser tests)
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { firstScreen, FIRST_SCREEN_BUDGET } from './first-screen.mjs';

const webDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(webDir, 'dist');
const quiet = process.argv.includes('--quiet');

const builtAt = existsSync(path.join(dist, 'index.html'))
  ? statSync(path.join(dist, 'index.html')).mtimeMs
  : 0;
if (process.argv.includes('--if-missing') && builtAt > 0) process.exit(0);
if (process.argv.includes('--if-stale') && builtAt > newestSource()) process.exit(0);

/** The newest modification time among the app's sources. */
function newestSource() {
  let newest = 0;
  const walk = (p) => {
    const st = statSync(p);
    if (st.isDirectory()) for (const n of readdirSync(p)) walk(path.join(p, n));
    else newest = Math.max(newest, st.mtimeMs);
  };
  for (const p of ['src', 'public', 'index.html', 'vite.config.mjs', '../protocol/src'])
    if (existsSync(path.join(webDir, p))) walk(path.join(webDir, p));
  return newest;
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
