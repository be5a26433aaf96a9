#!/usr/bin/env node
// `npx inbox …` runs the compiled dist/ when it was built from the sources as they are now
// (`npm start` builds it when they changed; bin/build-state.js), which starts in about a second.
// In a checkout whose dist/ is missing or older than its sources it runs the TypeScript through
// tsx instead, so a command never runs stale code and never needs a build first.
import { pathToFileURL } from 'node:url';
import { hasSources, isBuildFresh, ROOT } from './build-state.js';

if (hasSources() && !isBuildFresh()) {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(`${ROOT}/src/cli.ts`).href);
} else {
  await import(pathToFileURL(`${ROOT}/dist/src/cli.js`).href);
}
