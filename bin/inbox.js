#!/usr/bin/env node
// `npx inbox …` in a source checkout runs the TypeScript CLI through tsx, so admin commands
// need no build step. `npm start` and the Docker image run the compiled dist/ instead.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const source = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
if (existsSync(source)) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(source).href);
} else {
  await import(new URL('../dist/src/cli.js', import.meta.url).href);
}
