import { defineConfig } from 'vitest/config';

/** Files that replace a module with vi.mock: each needs a module registry of its own. */
const MOCKING = ['test/teams/visibility.test.ts', 'test/auth/scopes.test.ts'];

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    pool: 'forks',
    // Each file clones its own database from the template, so files run in parallel. Vitest's
    // default is one worker fewer than the cores, which is one file at a time on two cores,
    // while a file spends much of its time waiting on Postgres, a child process or a browser.
    fileParallelism: true,
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    projects: [
      {
        extends: true,
        // A worker keeps the modules it imported for the next file: importing the service
        // anew for every file was half the suite's time. Each file still builds its own app,
        // database and pools, as the service is built to run many apps in one process.
        test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: MOCKING, isolate: false },
      },
      { extends: true, test: { name: 'isolated', include: MOCKING, isolate: true } },
    ],
  },
});
