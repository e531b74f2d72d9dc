import { configDefaults, defineConfig } from 'vitest/config';
import SummaryReporter from './vitest.summary-reporter.js';

// One HTTP suite, run once per SQL dialect (ARCHITECTURE habit 5): the `sqlite` and `postgres`
// projects include the same files and differ only in PARLEY_TEST_DIALECT.
const httpSuite = ['packages/server/test/http/**/*.test.ts'];

export default defineConfig({
  test: {
    reporters: ['default', new SummaryReporter()],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['packages/*/test/unit/**/*.test.ts'],
        },
      },
      {
        extends: true,
        test: { name: 'sqlite', include: httpSuite, env: { PARLEY_TEST_DIALECT: 'sqlite' } },
      },
      {
        extends: true,
        test: { name: 'postgres', include: httpSuite, env: { PARLEY_TEST_DIALECT: 'postgres' } },
      },
      {
        extends: true,
        test: { name: 'process', include: ['packages/server/test/process/**/*.test.ts'] },
      },
      {
        extends: true,
        // @parley/sdk: unit tests and end-to-end tests against real server processes.
        test: { name: 'sdk', include: ['packages/sdk/test/**/*.test.ts'] },
      },
      {
        // D55: the web app in a real browser (Debian's Chromium) against a real server process.
        extends: true,
        test: {
          name: 'browser',
          include: ['packages/web/test/**/*.test.ts'],
          // the web app's unit tests (its store, its markdown) need no browser: the unit project
          exclude: [...configDefaults.exclude, 'packages/web/test/unit/**'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // Issue #10: property-based fuzzing over the OpenAPI document and the gateway (SQLite).
        // PARLEY_FUZZ_RUNS sets the requests per route (1,000 by default).
        extends: true,
        test: {
          name: 'fuzz',
          include: ['packages/server/test/fuzz/**/*.test.ts'],
          env: { PARLEY_TEST_DIALECT: 'sqlite' },
        },
      },
    ],
  },
});
