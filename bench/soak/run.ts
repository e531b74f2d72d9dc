import path from 'node:path';
import { parseArgs } from 'node:util';
import { killAll } from '../lib/children.js';
import { RESULTS_DIR } from '../lib/paths.js';
import { renderTable, runInfo, storeResult, summaryLine } from '../lib/report.js';
import { runSoak, smokeConfig, soakConfig, type SoakConfig } from './soak.js';

/**
 * `npm run soak [-- --minutes N] [--smoke] [--out file]` (issue 10): the soak of soak.ts against
 * one server process it starts itself. Prints a table and one line per figure, stores the result
 * in bench/results/soak.json (gitignored) and exits 1 when a check failed. PARLEY_SOAK_MINUTES
 * sets the length too (default 5 minutes); `--smoke` is the 30-second, scaled-down run that
 * `npm test` makes (packages/server/test/process/soak-smoke.test.ts).
 */
const USAGE = `usage: npm run soak [-- --minutes <n>] [--smoke] [--out <file>]
  --minutes n  length of the traffic phase (default 5, or PARLEY_SOAK_MINUTES)
  --smoke      the 30-second scaled-down run npm test makes
  --out file   results file (default bench/results/soak.json)`;

const { values: opts } = parseArgs({
  options: {
    minutes: { type: 'string' },
    smoke: { type: 'boolean', default: false },
    out: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (opts.help) {
  process.stdout.write(USAGE + '\n');
  process.exit(0);
}
const minutes = Number(opts.minutes ?? process.env['PARLEY_SOAK_MINUTES'] ?? 5);
if (!(minutes > 0) || !Number.isFinite(minutes)) {
  process.stderr.write(`soak: --minutes must be a positive number\n${USAGE}\n`);
  process.exit(2);
}
const outFile = path.resolve(opts.out ?? path.join(RESULTS_DIR, 'soak.json'));

process.once('exit', killAll);
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    killAll();
    process.exit(130);
  });
}

const started = performance.now();
const log = (m: string): void =>
  void process.stderr.write(`  … ${((performance.now() - started) / 1000).toFixed(1)} s: ${m}\n`);
const cfg: SoakConfig = opts.smoke ? smokeConfig(log) : soakConfig(minutes * 60, log);
const say = (s: string): void => void process.stdout.write(s + '\n');
const info = runInfo();
say(
  `Parley soak — commit ${info.commit}${info.dirty ? ' (modified)' : ''}, node ${info.node}, ` +
    `${info.cpus} × ${info.cpuModel}; ${cfg.durationS} s of traffic` +
    `${opts.smoke ? ' (SMOKE sizes)' : ''}: ${cfg.bots} bots, ${cfg.people} people, ` +
    `${cfg.hostileSockets} hostile sockets`,
);

// A watchdog: the run ends by itself even if something hangs (set-up, checks, closing).
const watchdogMs = (cfg.durationS + 300) * 1000;
const watchdog = setTimeout(() => {
  say(`soak: ERROR: stopped by the watchdog after ${watchdogMs / 1000} s`);
  killAll();
  process.exit(1);
}, watchdogMs);
watchdog.unref();

try {
  const result = await runSoak(cfg);
  const durationS = Math.round((performance.now() - started) / 100) / 10;
  say(renderTable(result.table));
  for (const f of result.figures) say(summaryLine('soak', f));
  for (const w of result.warnings) say(`soak: warning: ${w}`);
  for (const u of (result.details['unexpected'] as string[] | undefined) ?? [])
    say(`soak: unexpected answer: ${u}`);
  storeResult(outFile, opts.smoke ? 'soak-smoke' : 'soak', {
    status: 'ok',
    title: 'soak (issue 10)',
    startedAt: new Date(Date.now() - durationS * 1000).toISOString(),
    durationS,
    size: { smoke: opts.smoke, scale: cfg.durationS / 300 },
    run: info,
    figures: result.figures,
    table: result.table,
    details: result.details,
    warnings: result.warnings,
  });
  if (result.failures.length > 0) {
    say(`\nsoak: FAILED (${result.failures.length}) in ${durationS} s:`);
    for (const f of result.failures) say(`  - ${f}`);
    process.exit(1);
  }
  say(
    `\nsoak: every check passed in ${durationS} s — results in ${path.relative(process.cwd(), outFile)}`,
  );
  process.exit(0);
} catch (err) {
  say(`soak: ERROR: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exit(1);
}
