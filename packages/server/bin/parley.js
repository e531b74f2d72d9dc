#!/usr/bin/env node
// `parley` (npm run parley, npx parley): runs the compiled bundle dist/parley.js with plain node.
// Compiling the TypeScript at every start (tsx) cost seconds per CLI command (issue #13); the
// bundle is rebuilt first (esbuild, well under a second) when a source file is newer than it.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const entry = path.join(serverDir, 'dist', 'parley.js');
const sources = [path.join(serverDir, 'src'), path.join(serverDir, '..', 'protocol', 'src')];

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

const built = existsSync(entry) ? statSync(entry).mtimeMs : 0;
if (built === 0 || sources.some((d) => existsSync(d) && newest(d) > built)) {
  const r = spawnSync(process.execPath, [path.join(serverDir, 'scripts', 'build.mjs'), '--quiet'], {
    stdio: 'inherit',
  });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
await import(pathToFileURL(entry).href);
