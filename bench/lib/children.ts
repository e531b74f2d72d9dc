import type { ChildProcess } from 'node:child_process';

/**
 * Every process a benchmark starts is registered here, so an interrupted or crashed run never
 * leaves a server behind: the runner kills what is left on exit and on SIGINT/SIGTERM.
 */
const live = new Set<ChildProcess>();

export function track(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
}

export function killAll(): void {
  for (const child of live) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  live.clear();
}
