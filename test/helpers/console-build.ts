import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { build } from 'vite';
import { CONSOLE_DIR } from '../../src/http/console.routes.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const SOURCES = [
  path.join(ROOT, 'src', 'console'),
  path.join(ROOT, 'packages', 'client', 'src'),
  path.join(ROOT, 'vite.console.config.ts'),
];

function newest(p: string): number {
  const s = statSync(p);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(0, ...readdirSync(p).map((name) => newest(path.join(p, name))));
}

function builtAt(): number {
  try {
    return statSync(path.join(CONSOLE_DIR, 'index.html')).mtimeMs;
  } catch {
    return 0;
  }
}

/**
 * Builds the agent console into dist/console (where the service serves it from, as after
 * `npm run build`) unless a build newer than its sources is already there: about a second,
 * once per test run, and nothing at all when the sources did not change.
 */
export async function ensureConsoleBuilt(): Promise<'fresh' | 'built'> {
  if (builtAt() > Math.max(...SOURCES.map(newest))) return 'fresh';
  await build({ configFile: path.join(ROOT, 'vite.console.config.ts'), logLevel: 'warn' });
  return 'built';
}
