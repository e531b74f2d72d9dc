import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './paths.js';

/**
 * Reads the `.cpuprofile` files `node --cpu-prof` wrote and says where the time went: self time
 * per function and per file (node_modules packages folded into one name), as shares of all
 * samples. Idle time (the event loop waiting) is counted apart, so shares are of busy time.
 */
interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileShare {
  readonly name: string;
  readonly ms: number;
  /** share of busy (non-idle) time, in % */
  readonly share: number;
}

export interface ProfileSummary {
  readonly file: string;
  readonly busyMs: number;
  readonly idleMs: number;
  readonly functions: ProfileShare[];
  readonly files: ProfileShare[];
}

const IDLE = new Set(['(idle)', '(program)', '(garbage collector)']);

/** `node_modules/.pnpm/x/node_modules/@scope/pkg/lib/a.js` → `@scope/pkg`; ours → repo path. */
function fileOf(url: string): string {
  if (!url) return '(native)';
  const p = url.startsWith('file://') ? new URL(url).pathname : url;
  const nm = p.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = p.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : (rest[0] ?? p);
  }
  if (p.startsWith('node:')) return p;
  return path.relative(REPO_ROOT, p) || p;
}

/** The source file, short: `kysely/dist/esm/driver/runtime-driver.js`, `packages/server/src/…`. */
function sourceOf(url: string): string {
  if (!url) return '(native)';
  const p = url.startsWith('file://') ? new URL(url).pathname : url;
  const nm = p.lastIndexOf('node_modules/');
  if (nm >= 0) return p.slice(nm + 'node_modules/'.length);
  if (p.startsWith('node:')) return p;
  return path.relative(REPO_ROOT, p) || p;
}

export function summarizeProfile(file: string, top = 15): ProfileSummary {
  const prof = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  prof.samples.forEach((id, i) =>
    selfUs.set(id, (selfUs.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)),
  );
  const fns = new Map<string, number>();
  const files = new Map<string, number>();
  let busy = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const n = byId.get(id);
    if (!n) continue;
    const fn = n.callFrame.functionName || '(anonymous)';
    // GC is work the server causes: keep it, but idle and "(program)" are not.
    if (IDLE.has(fn) && fn !== '(garbage collector)') {
      idle += us;
      continue;
    }
    busy += us;
    const where = fileOf(n.callFrame.url);
    const key = `${fn} ${sourceOf(n.callFrame.url)}${n.callFrame.url ? `:${n.callFrame.lineNumber + 1}` : ''}`;
    fns.set(key, (fns.get(key) ?? 0) + us);
    files.set(where, (files.get(where) ?? 0) + us);
  }
  const rank = (m: Map<string, number>): ProfileShare[] =>
    [...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({
        name,
        ms: Math.round(us / 1000),
        share: Math.round((us / busy) * 1000) / 10,
      }));
  return {
    file,
    busyMs: Math.round(busy / 1000),
    idleMs: Math.round(idle / 1000),
    functions: rank(fns),
    files: rank(files),
  };
}

/** The main-thread profile of every process that ran with --cpu-prof in a directory. */
export function summarizeProfiles(dir: string, top = 15): ProfileSummary[] {
  let names: string[] = [];
  try {
    // CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: thread 0 is the main thread; the
    // others are the module loader's (tsx) and say nothing about the server at work.
    names = readdirSync(dir).filter((f) => /\.0\.\d+\.cpuprofile$/.test(f));
  } catch {
    return [];
  }
  return names.map((f) => summarizeProfile(path.join(dir, f), top));
}
