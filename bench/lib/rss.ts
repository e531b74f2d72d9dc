import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** Resident set size of a process, in bytes, from /proc/<pid>/status (VmRSS). */
export function rssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  if (!m?.[1]) throw new Error(`no VmRSS for process ${pid}`);
  return Number(m[1]) * 1024;
}

/**
 * VmRSS split as the kernel accounts it (/proc/<pid>/status): anonymous memory (the JS heap,
 * malloc) and file-backed pages (the node binary's and native addons' code that has been
 * touched; RssShmem is the SQLite WAL index). Says which lever moves a figure.
 */
export function rssParts(pid: number): { anon: number; file: number; shmem: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string): number =>
    Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB$`, 'm').exec(status)?.[1] ?? NaN) * 1024;
  return { anon: kb('RssAnon'), file: kb('RssFile'), shmem: kb('RssShmem') };
}

export const MiB = 1024 * 1024;

/** The soft limit on open files of this process (each socket is one). */
export function openFileLimit(): number {
  const limits = readFileSync('/proc/self/limits', 'utf8');
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(limits);
  if (!m?.[1] || m[1] === 'unlimited') return Number.POSITIVE_INFINITY;
  return Number(m[1]);
}

let ticksPerSecond: number | undefined;

/**
 * CPU time a process has used so far (user + system), in ms, from /proc/<pid>/stat.
 * Per request, it is far steadier than throughput on a shared machine: other processes slow a
 * server down but do not make it spend more CPU per request.
 */
export function cpuMs(pid: number): number {
  const { user, system } = cpuSplitMs(pid);
  return user + system;
}

/**
 * cpuMs, user and system apart. On loopback a write's system time includes the receiver's TCP
 * path (the kernel delivers in the writer's context), so how responses are batched moves it.
 */
export function cpuSplitMs(pid: number): { user: number; system: number } {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond =
        Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  // The command name may contain spaces: fields are counted after its closing parenthesis.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime, stime (fields 14, 15)
  const ms = (ticks: string | undefined) => (Number(ticks) * 1000) / (ticksPerSecond ?? 100);
  return { user: ms(fields[11]), system: ms(fields[12]) };
}

/** Open file descriptors of a process (sockets, files, pipes), from /proc/<pid>/fd. */
export function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}

/**
 * What each descriptor of a process points at, counted by kind (`socket`, `pipe`, a file path,
 * `anon_inode:[eventpoll]`, …): says which kind a leak is of. Descriptors that close while being
 * read are skipped.
 */
export function fdKinds(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    const kind = target.replace(/^(socket|pipe):\[\d+\]$/, '$1');
    out.set(kind, (out.get(kind) ?? 0) + 1);
  }
  return out;
}

/**
 * Waits (at most 10 s) until every process of `pids` uses under 5 % of a core over 200 ms. The
 * benchmarks keep several servers running through all their cases: one still busy after its own
 * case (checkpointing its WAL once the load stops) would take the next case's CPU — session 20
 * found the plain floor after an older build's connected case at half the rate of the floor with
 * the index, in every round.
 */
export async function settled(pids: readonly number[]): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const before = pids.map((p) => cpuMs(p));
    await new Promise((r) => setTimeout(r, 200));
    if (pids.every((p, n) => cpuMs(p) - (before[n] ?? 0) < 10)) return;
  }
}
