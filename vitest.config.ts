import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
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
  },
});
