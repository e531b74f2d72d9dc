// Builds the production entry point: packages/server/dist/parley.js (issue #6, idle memory).
//
// `npm start` runs this compiled JavaScript with plain `node` instead of `tsx`: the tsx loader
// runs its hooks in a thread with a V8 isolate of its own (~30 MiB of RSS for the life of the
// server). Our own TypeScript (and the workspace's @parley/protocol, which is TypeScript source
// too) is bundled; every npm package stays an external import resolved from node_modules as
// usual (except the few pure-ESM libraries in BUNDLED) — native addons (better-sqlite3, @node-rs/argon2) cannot be bundled, and packages that
// find files next to themselves (@fastify/swagger-ui's static assets) break when moved, so none
// are bundled rather than a hand-kept list of exceptions.
//
// Code splitting: a module reached only through `await import()` (the Redis rate limiter, say)
// goes into a chunk of its own with its own imports. Without it esbuild hoists every import of
// every bundled module to the top of one file, and a single-node server would load ioredis.
//
// Several builds may run at once (`npm start`, the benchmarks, the tests) and servers may be
// running from an earlier build: chunks are named by their content and each file is written
// atomically (temporary file + rename), the entry last, so a starting server reads either the
// old build or the new one, never half of one. Chunks of earlier builds are removed only
// when a day old (a running server may still import one lazily).
//
// Usage: node packages/server/scripts/build.mjs [--quiet]
import { mkdirSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const serverDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outDir = path.join(serverDir, 'dist');
const ENTRY = 'parley.js';
const STALE_MS = 24 * 3600_000;
/** npm packages bundled in (pure JavaScript ESM, nothing read from beside themselves) */
const BUNDLED = /^(typebox|kysely|jose)(\/|$)/;
const started = Date.now();

const result = await build({
  entryPoints: { parley: path.join(serverDir, 'src', 'cli', 'main.ts') },
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  outdir: outDir,
  entryNames: '[name]',
  chunkNames: 'chunk-[hash]',
  write: false,
  // Not minified and without a source map: stack traces stay readable (esbuild marks each
  // module's origin with a `// src/…` comment) and the server keeps no map in memory.
  logLevel: 'warning',
  plugins: [
    {
      name: 'external-packages',
      setup(b) {
        // Bare specifiers are npm packages (external), except our own workspace packages and
        // the pure-ESM libraries of many small modules: loading typebox, kysely and jose file by
        // file was most of a CLI command's time (issue #13: ~2,500 module resolutions).
        b.onResolve({ filter: /^[^./]/ }, (args) =>
          args.path.startsWith('@parley/') || BUNDLED.test(args.path)
            ? undefined
            : { path: args.path, external: true },
        );
      },
    },
  ],
});

mkdirSync(outDir, { recursive: true });
const write = (file, contents) => {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, contents);
  renameSync(tmp, file);
};
const entry = result.outputFiles.find((f) => path.basename(f.path) === ENTRY);
if (!entry) throw new Error(`esbuild produced no ${ENTRY}`);
const current = new Set(result.outputFiles.map((f) => path.basename(f.path)));
for (const f of result.outputFiles) if (f !== entry) write(f.path, f.contents);
write(entry.path, entry.contents);

for (const name of readdirSync(outDir)) {
  if (current.has(name) || !/^chunk-\w+\.js$/.test(name)) continue;
  const file = path.join(outDir, name);
  if (Date.now() - statSync(file).mtimeMs > STALE_MS) unlinkSync(file);
}
if (!process.argv.includes('--quiet'))
  process.stdout.write(
    `built ${path.relative(process.cwd(), entry.path)} (+${current.size - 1} chunks) in ` +
      `${Date.now() - started} ms\n`,
  );
