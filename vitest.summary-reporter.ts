import type { Reporter, TestModule } from 'vitest/node';

/**
 * One plain closing line, `N passed, N failed, N skipped`, after vitest's own summary: the line
 * CI reads to count tests (vitest's table is not one it knows).
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const m of testModules) {
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
    }
    // Printed after vitest's own summary (reporters run in order), so it is the last line.
    setImmediate(() =>
      process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`),
    );
  }
}
