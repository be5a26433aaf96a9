#!/usr/bin/env node
// Runs the compiled CLI when it has been built (Docker image), else the TypeScript source
// through tsx, so `npx inbox …` works straight from a clone.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const compiled = fileURLToPath(new URL('../dist/src/cli.js', import.meta.url));
if (existsSync(compiled)) {
  await import(pathToFileURL(compiled).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../src/cli.ts');
}
