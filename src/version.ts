import { readFileSync } from 'node:fs';

let version: string | undefined;

/** This package's version (from its package.json, found above this file under src/ or dist/src/). */
export function packageVersion(): string {
  if (version !== undefined) return version;
  let dir = new URL('.', import.meta.url);
  for (let i = 0; i < 4 && version === undefined; i++, dir = new URL('..', dir)) {
    try {
      const pkg = JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'inbox' && pkg.version) version = pkg.version;
    } catch {
      // not here; one folder up
    }
  }
  version ??= '0.0.0';
  return version;
}
