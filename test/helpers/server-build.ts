import { spawn } from 'node:child_process';
import path from 'node:path';
// @ts-expect-error: a plain JavaScript module of bin/, without declarations
import { hasSources, isBuildFresh } from '../../bin/build-state.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/**
 * Builds the service into dist/ as `npm run build` does (the console aside: console-build.ts
 * builds it) unless dist/ is already as new as the sources. The many processes tests start
 * through bin/inbox.js (`serve`, the one-shot commands, the docs' `npx inbox`) then run the
 * compiled JavaScript instead of the sources through tsx: the same code, started in half the
 * time. A build that fails (a type error while editing) leaves dist/ stale, and those
 * processes on tsx, as before: the run goes on, and the type check is `npm test`'s own step.
 */
export async function ensureServerBuilt(): Promise<'fresh' | 'built' | 'failed'> {
  if (!hasSources() || isBuildFresh()) return 'fresh';
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'build-state.js'), 'build-if-stale', '--without-console'], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'ignore'],
  });
  const code = await new Promise<number | null>((resolve) => {
    child.once('exit', resolve);
    child.once('error', () => resolve(null));
  });
  return code === 0 && isBuildFresh() ? 'built' : 'failed';
}
