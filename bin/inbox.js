#!/usr/bin/env node
// In a source checkout, runs the TypeScript CLI through tsx, so `npm start` and `npx inbox`
// always run the code as it is. The Docker image ships only the compiled dist/ (no src/).
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
