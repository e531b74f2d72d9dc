import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { killAll } from './lib/children.js';
import { summarizeProfiles } from './lib/cpu-profile.js';
import { RESULTS_DIR } from './lib/paths.js';
import {
  markdownReport,
  renderTable,
  runInfo,
  storeResult,
  summaryLine,
  type StoredResult,
} from './lib/report.js';
import {
  BenchSkip,
  targetMet,
  type Benchmark,
  type BenchContext,
  type BenchOutcome,
} from './lib/types.js';
import { BENCHMARKS } from './registry.js';

/**
 * `npm run bench [-- <name>…] [--smoke] [--scale <f>] [--profile] [--out <file>] [--list]`
 *
 * Runs the benchmarks one after another, each against a server it starts itself, prints a
 * table and one summary line per figure, and merges the results into bench/results/latest.json.
 * Every benchmark is bounded: sizes are fixed and a watchdog stops one that overruns.
 */
const USAGE = `usage: npm run bench [-- <name>…] [--smoke] [--scale <factor>] [--profile] [--out <file>] [--list]
  <name>       run only these (default: all): ${BENCHMARKS.map((b) => b.name).join(', ')}
  --smoke      tiny sizes, a few seconds each (what npm test runs); targets are not meaningful
  --scale f    multiply sizes and durations of a full run by f (e.g. 0.2 for a quick look)
  --profile    write server CPU profiles (node --cpu-prof) to bench/results/profiles/
  --out file   results file (default bench/results/latest.json)
  --list       list the benchmarks
  --report     print the results file as the markdown table of bench/README.md`;

const { values: opts, positionals } = parseArgs({
  options: {
    smoke: { type: 'boolean', default: false },
    scale: { type: 'string', default: '1' },
    profile: { type: 'boolean', default: false },
    out: { type: 'string' },
    list: { type: 'boolean', default: false },
    report: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
  allowPositionals: true,
});

if (opts.help) {
  process.stdout.write(USAGE + '\n');
  process.exit(0);
}
if (opts.list) {
  for (const b of BENCHMARKS) process.stdout.write(`${b.name.padEnd(12)} ${b.title}\n`);
  process.exit(0);
}
const scale = Number(opts.scale);
if (!(scale > 0) || !Number.isFinite(scale)) {
  process.stderr.write(`bench: --scale must be a positive number\n${USAGE}\n`);
  process.exit(2);
}
const unknown = positionals.filter((n) => !BENCHMARKS.some((b) => b.name === n));
if (unknown.length) {
  process.stderr.write(`bench: unknown benchmark ${unknown.join(', ')}\n${USAGE}\n`);
  process.exit(2);
}
const selected = positionals.length
  ? BENCHMARKS.filter((b) => positionals.includes(b.name))
  : BENCHMARKS;
const outFile = path.resolve(opts.out ?? path.join(RESULTS_DIR, 'latest.json'));
if (opts.report) {
  process.stdout.write(markdownReport(outFile) + '\n');
  process.exit(0);
}
const profileDir = opts.profile
  ? path.join(RESULTS_DIR, 'profiles', new Date().toISOString().replace(/[:.]/g, '-'))
  : undefined;

// A run must never leave a server behind, however it ends.
process.once('exit', killAll);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    killAll();
    process.exit(130);
  });
}

/**
 * Upper bound of one benchmark's wall time: past it the run moves on (and says so). 300 s, or
 * what the benchmark declares (`watchdogS`: people-fanout opens 10,000 connections first).
 */
const watchdogMsOf = (b: Benchmark): number =>
  opts.smoke ? 90_000 : Math.max(1, scale) * (b.watchdogS ?? 300) * 1000;

/** Where the server's CPU time went (only the processes that were busy: the servers). */
function printProfiles(dir: string): void {
  for (const p of summarizeProfiles(dir, 12)) {
    if (p.busyMs < 500) continue; // the hello-world baseline or a set-up server
    say(
      `profile ${path.relative(process.cwd(), p.file)}: busy ${p.busyMs} ms, idle ${p.idleMs} ms`,
    );
    say('  self time by file: ' + p.files.map((f) => `${f.name} ${f.share}%`).join(', '));
    for (const f of p.functions) say(`  ${String(f.share).padStart(5)}%  ${f.name}`);
  }
}

const info = runInfo();
const say = (s: string): void => void process.stdout.write(s + '\n');
say(
  `Parley benchmarks — commit ${info.commit}${info.dirty ? ' (modified)' : ''}, node ${info.node}, ` +
    `${info.cpus} × ${info.cpuModel}${opts.smoke ? ', SMOKE sizes' : scale !== 1 ? `, scale ${scale}` : ''}`,
);

let errors = 0;
let met = 0;
let missed = 0;
const skipped: string[] = [];
const runStart = performance.now();
for (const bench of selected) {
  const benchStart = performance.now();
  const benchProfileDir = profileDir ? path.join(profileDir, bench.name) : undefined;
  if (benchProfileDir) mkdirSync(benchProfileDir, { recursive: true });
  const ctx: BenchContext = {
    smoke: opts.smoke,
    scale,
    profileDir: benchProfileDir,
    log: (m) =>
      void process.stderr.write(
        `  … ${((performance.now() - benchStart) / 1000).toFixed(1)} s: ${m}\n`,
      ),
  };
  say(`\n== ${bench.name}: ${bench.title}`);
  const startedAt = new Date().toISOString();
  const t0 = performance.now();
  let outcome: BenchOutcome;
  let watchdog: NodeJS.Timeout | undefined;
  const watchdogMs = watchdogMsOf(bench);
  try {
    outcome = await Promise.race([
      bench.run(ctx),
      new Promise<never>((_, reject) => {
        watchdog = setTimeout(
          () => reject(new Error(`stopped by the watchdog after ${watchdogMs / 1000} s`)),
          watchdogMs,
        );
      }),
    ]);
  } catch (err) {
    outcome =
      err instanceof BenchSkip
        ? { status: 'skipped', reason: err.message, figures: [], table: [], details: {} }
        : {
            status: 'error',
            reason: err instanceof Error ? err.message : String(err),
            figures: [],
            table: [],
            details: {},
          };
    // A failed or stopped benchmark may have left its servers running.
    killAll();
  } finally {
    clearTimeout(watchdog);
  }
  const durationS = Math.round((performance.now() - t0) / 100) / 10;
  if (outcome.status === 'skipped') {
    skipped.push(bench.name);
    say(`${bench.name}: skipped: ${outcome.reason ?? ''}`);
  } else if (outcome.status === 'error') {
    errors += 1;
    say(`${bench.name}: ERROR: ${outcome.reason ?? ''}`);
  } else {
    say(renderTable(outcome.table));
    for (const f of outcome.figures) {
      say(summaryLine(bench.name, f));
      const m = targetMet(f);
      if (m === true) met += 1;
      if (m === false) missed += 1;
    }
    for (const w of outcome.warnings ?? []) say(`${bench.name}: warning: ${w}`);
  }
  say(`${bench.name}: ${outcome.status} in ${durationS} s`);
  if (benchProfileDir) printProfiles(benchProfileDir);
  const stored: StoredResult = {
    ...outcome,
    title: bench.title,
    startedAt,
    durationS,
    size: { smoke: opts.smoke, scale },
    run: info,
  };
  storeResult(outFile, bench.name, stored);
}

const total = Math.round((performance.now() - runStart) / 1000);
say(
  `\n${selected.length} benchmark(s) in ${total} s: targets met ${met}, missed ${missed}` +
    `${skipped.length ? `; skipped ${skipped.join(', ')}` : ''}${errors ? `; ${errors} failed` : ''}` +
    ` — results in ${path.relative(process.cwd(), outFile) || outFile}` +
    (profileDir ? `, profiles in ${path.relative(process.cwd(), profileDir)}` : ''),
);
// Sockets of a stopped benchmark may linger; the run is over.
process.exit(errors ? 1 : 0);
