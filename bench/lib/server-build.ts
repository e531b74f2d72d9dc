import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { transformSync } from 'esbuild';
import { REPO_ROOT, RESULTS_DIR } from './paths.js';

/**
 * The benchmarks measure what `npm start` runs (issue #6): the compiled server
 * (packages/server/dist/parley.js, built by packages/server/scripts/build.mjs) under plain
 * `node` with the V8 flags of the start script. The flags are read from
 * packages/server/package.json rather than copied here, so the two cannot drift apart.
 */
const SERVER_DIR = path.join(REPO_ROOT, 'packages/server');

export interface StartCommand {
  /** node options of the start script, e.g. --max-semi-space-size=1 */
  readonly nodeArgs: readonly string[];
  /** the entry, relative to the repository root */
  readonly entry: string;
}

let built: StartCommand | undefined;

/** Builds the server once per benchmark run and returns how `npm start` runs it. */
export function serverStartCommand(): StartCommand {
  if (built) return built;
  execFileSync(process.execPath, [path.join(SERVER_DIR, 'scripts/build.mjs'), '--quiet'], {
    stdio: 'inherit',
  });
  const pkg = JSON.parse(readFileSync(path.join(SERVER_DIR, 'package.json'), 'utf8')) as {
    scripts?: Record<string, string>;
  };
  const start = pkg.scripts?.['start'] ?? '';
  // Expected shape: `node [--flag…] dist/parley.js serve`.
  const m = /^node((?:\s+--\S+)*)\s+(\S+\.js)\s+serve$/.exec(start.trim());
  if (!m?.[2])
    throw new Error(
      `bench: cannot read the node flags from packages/server's start script "${start}" ` +
        '(expected `node [--flag…] <entry>.js serve`)',
    );
  built = {
    nodeArgs: (m[1] ?? '').trim().split(/\s+/).filter(Boolean),
    entry: path.relative(REPO_ROOT, path.join(SERVER_DIR, m[2])),
  };
  return built;
}

/**
 * A baseline script of bench/servers compiled to JavaScript (type annotations stripped), so
 * that it runs the way the server does: plain `node`, no TypeScript loader in the process.
 * Written under bench/results (ignored by git), where `fastify` still resolves from the
 * repository's node_modules. Returns the path relative to the repository root.
 */
export function compiledBaseline(script: string): string {
  const src = path.join(REPO_ROOT, script);
  const outDir = path.join(RESULTS_DIR, 'build');
  mkdirSync(outDir, { recursive: true });
  const out = path.join(outDir, path.basename(script).replace(/\.ts$/, '.mjs'));
  const { code } = transformSync(readFileSync(src, 'utf8'), {
    loader: 'ts',
    format: 'esm',
    target: 'node20.19',
    sourcefile: src,
  });
  // Atomically: another benchmark run (the smoke test, say) may be starting this baseline.
  const tmp = `${out}.${process.pid}.tmp`;
  writeFileSync(tmp, code);
  renameSync(tmp, out);
  return path.relative(REPO_ROOT, out);
}
