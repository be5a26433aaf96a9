import { readdirSync, readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

/**
 * Files that replace a module with vi.mock: each needs a module registry of its own (in the
 * shared registry the module is already loaded and the mock never applies). Found by reading
 * the files, so a new one cannot be left out.
 */
const TESTS = new URL('./test/', import.meta.url);
const MOCKING = readdirSync(TESTS, { recursive: true, encoding: 'utf8' })
  .map((f) => f.split('\\').join('/'))
  .filter((f) => f.endsWith('.test.ts') && readFileSync(new URL(f, TESTS), 'utf8').includes('vi.mock('))
  .map((f) => `test/${f}`);

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
