import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './paths.js';
import { targetMet, type BenchOutcome, type Figure, type TableRow } from './types.js';

/** Printing (a short table and one summary line per figure) and the JSON results file. */

const fmt = (v: string | number): string =>
  typeof v === 'number'
    ? Number.isInteger(v)
      ? v.toLocaleString('en-US')
      : v.toLocaleString('en-US', { maximumFractionDigits: 3 })
    : v;

export function renderTable(rows: readonly TableRow[]): string {
  if (rows.length === 0) return '';
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cells = rows.map((r) => cols.map((c) => (r[c] === undefined ? '' : fmt(r[c]))));
  const widths = cols.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]?.length ?? 0)));
  const line = (vals: string[]): string =>
    '| ' + vals.map((v, i) => v.padEnd(widths[i] ?? 0)).join(' | ') + ' |';
  return [
    line(cols),
    '|' + widths.map((w) => '-'.repeat(w + 2)).join('|') + '|',
    ...cells.map(line),
  ].join('\n');
}

export function verdict(f: Figure): string {
  const met = targetMet(f);
  if (met === undefined || !f.target) return '';
  return `target ${f.target.op === '>=' ? '≥' : '≤'} ${fmt(f.target.value)}: ${met ? 'met' : 'MISSED'}`;
}

/** `send: send/hello req/s @10 conns = 0.62x (send 2,345 req/s ÷ hello 3,780 req/s) — target ≥ 0.5: met` */
export function summaryLine(bench: string, f: Figure): string {
  const value = f.unit === 'x' ? `${fmt(f.value)}x` : `${fmt(f.value)} ${f.unit}`;
  const v = verdict(f);
  return `${bench}: ${f.label} = ${value}${f.basis ? ` (${f.basis})` : ''}${v ? ` — ${v}` : ''}`;
}

export interface RunInfo {
  readonly commit: string;
  /** tracked files differed from the commit when the run started */
  readonly dirty: boolean;
  readonly node: string;
  readonly cpus: number;
  readonly cpuModel: string;
}

export function runInfo(): RunInfo {
  const git = (...args: string[]): string => {
    try {
      return execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
    } catch {
      return '';
    }
  };
  return {
    commit: git('rev-parse', '--short', 'HEAD') || 'unknown',
    dirty: git('status', '--porcelain', '--untracked-files=no') !== '',
    node: process.version,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
  };
}

export interface StoredResult extends BenchOutcome {
  readonly title: string;
  readonly startedAt: string;
  readonly durationS: number;
  readonly size: { readonly smoke: boolean; readonly scale: number };
  readonly run: RunInfo;
}

interface ResultsFile {
  updatedAt: string;
  benchmarks: Record<string, StoredResult>;
}

/**
 * Merges one benchmark's result into the JSON file: `npm run bench -- send` replaces the send
 * entry and keeps the others' latest figures.
 */
export function storeResult(file: string, name: string, result: StoredResult): void {
  let data: ResultsFile = { updatedAt: '', benchmarks: {} };
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<ResultsFile>;
    if (parsed.benchmarks && typeof parsed.benchmarks === 'object')
      data.benchmarks = parsed.benchmarks;
  } catch {
    // no file yet, or not ours: start a fresh one
  }
  data = {
    updatedAt: new Date().toISOString(),
    benchmarks: {
      ...data.benchmarks,
      [name]: { ...result, figures: result.figures.map((f) => ({ ...f, met: targetMet(f) })) },
    },
  };
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(data, null, 2) + '\n');
}

/**
 * The results file as the markdown table of bench/README.md ("Latest figures"):
 * `npm run bench -- --report` prints it, so the README is pasted from measurements.
 */
export function markdownReport(file: string): string {
  const data = JSON.parse(readFileSync(file, 'utf8')) as ResultsFile;
  const runs = Object.entries(data.benchmarks);
  const first = runs[0]?.[1];
  const lines: string[] = [];
  if (first) {
    const r = first.run;
    const commits = [
      ...new Set(runs.map(([, b]) => b.run.commit + (b.run.dirty ? ' (modified)' : ''))),
    ];
    const days = [...new Set(runs.map(([, b]) => b.startedAt.slice(0, 10)))];
    lines.push(
      `Measured ${days.join(', ')} at commit ${commits.join(', ')}; Node ${r.node}, ` +
        `${r.cpus} × ${r.cpuModel}.`,
      '',
    );
  }
  lines.push('| benchmark | figure | value | how | target |', '|---|---|---|---|---|');
  for (const [name, b] of runs) {
    const size = b.size.smoke ? ' (smoke)' : b.size.scale !== 1 ? ` (scale ${b.size.scale})` : '';
    if (b.status !== 'ok') {
      lines.push(`| ${name}${size} | — | ${b.status}: ${b.reason ?? ''} | | |`);
      continue;
    }
    for (const f of b.figures) {
      const value = f.unit === 'x' ? `${fmt(f.value)}x` : `${fmt(f.value)} ${f.unit}`;
      const met = targetMet(f);
      const target = f.target
        ? `${f.target.op === '>=' ? '≥' : '≤'} ${fmt(f.target.value)} ${met ? '✅ met' : '❌ missed'}`
        : '';
      lines.push(`| ${name}${size} | ${f.label} | ${value} | ${f.basis ?? ''} | ${target} |`);
    }
  }
  return lines.join('\n');
}
