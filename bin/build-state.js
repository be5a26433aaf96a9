#!/usr/bin/env node
// Whether dist/ was built from the sources as they are now, so `npm start` and `npx inbox`
// skip a build (tens of seconds) that would produce the same files.
//   node bin/build-state.js build           build (tsc, then the console) and stamp dist/
//   node bin/build-state.js build-if-stale  the same, only when a source is newer than the stamp
//   … --without-console                     either, without the console, for a caller that builds
//                                           it itself (the test run: test/helpers/console-build.ts)
// The stamp is dist/.build-stamp, whose mtime is the moment the last good build *started*:
// a file saved while a build runs is newer than the stamp and so builds again next time.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stampOf = (root) => path.join(root, 'dist', '.build-stamp');
/** Everything a build reads besides node_modules (whose changes come with package-lock.json). */
const INPUTS = [
  'src',
  'packages/client/src',
  'migrations',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
  'vite.console.config.ts',
];

function newest(p) {
  let s;
  try {
    s = statSync(p);
  } catch {
    return 0;
  }
  if (!s.isDirectory()) return s.mtimeMs;
  let most = s.mtimeMs; // a deleted file changes its folder's mtime
  for (const name of readdirSync(p)) most = Math.max(most, newest(path.join(p, name)));
  return most;
}

/** True when this is a source checkout (not an image with dist/ only). */
export function hasSources(root = ROOT) {
  return existsSync(path.join(root, 'src', 'cli.ts'));
}

/** True when dist/ holds a finished build at least as new as every source. */
export function isBuildFresh(root = ROOT) {
  let builtAt;
  try {
    builtAt = statSync(stampOf(root)).mtimeMs;
  } catch {
    return false;
  }
  return INPUTS.every((input) => newest(path.join(root, input)) <= builtAt);
}

function run(command, args) {
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

export function build({ withConsole = true } = {}) {
  // Whole seconds: some file systems keep mtimes at that precision, and a source saved in the
  // same second as the stamp must still count as newer than it.
  const startedAt = Math.floor(Date.now() / 1000) - 1;
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const vite = path.join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js');
  run(process.execPath, [tsc, '-p', 'tsconfig.build.json']);
  if (withConsole) run(process.execPath, [vite, 'build', '--config', 'vite.console.config.ts', '--logLevel', 'warn']);
  const stamp = stampOf(ROOT);
  mkdirSync(path.dirname(stamp), { recursive: true });
  writeFileSync(stamp, "dist/ was built from the sources as they were at this file's mtime\n");
  utimesSync(stamp, startedAt, startedAt);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [command, ...options] = process.argv.slice(2);
  const withConsole = !options.includes('--without-console');
  const known = options.every((o) => o === '--without-console');
  if (known && command === 'build') build({ withConsole });
  else if (known && command === 'build-if-stale') {
    if (!hasSources() || isBuildFresh()) process.exit(0);
    process.stderr.write('inbox: building dist/ (the sources changed since the last build)\n');
    build({ withConsole });
  } else {
    process.stderr.write('usage: node bin/build-state.js build | build-if-stale [--without-console]\n');
    process.exit(64);
  }
}
