#!/usr/bin/env node
// `node scripts/lock-optional-platforms.mjs`: keeps package-lock.json in sync for Biome's
// per-platform binaries. Biome ships one optional package per platform; a registry mirror that
// serves only some of them (this project's serves the Linux ones) makes `npm install` leave the
// others out of the lock file, and `npm ci` then refuses the lock as out of sync. This writes
// an entry for each missing platform package, with the os/cpu/libc fields npm uses to skip it,
// so `npm ci` installs only the binary of the machine it runs on. Run it after `npm install`
// changes Biome; it changes nothing when every entry is there.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const lockPath = path.join(root, 'package-lock.json');
const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
const biome = lock.packages['node_modules/@biomejs/biome'];
if (!biome) throw new Error('package-lock.json has no @biomejs/biome');

/** `@biomejs/cli-<os>-<cpu>[-musl]` → the fields npm matches against the machine. */
function platformOf(name) {
  const m = /^@biomejs\/cli-(win32|darwin|linux|android)-(x64|arm64)(-musl)?$/.exec(name);
  if (!m) throw new Error(`unexpected Biome platform package ${name}`);
  return { os: [m[1]], cpu: [m[2]], ...(m[1] === 'linux' ? { libc: [m[3] ? 'musl' : 'glibc'] } : {}) };
}

let added = 0;
for (const [name, version] of Object.entries(biome.optionalDependencies ?? {})) {
  const key = `node_modules/${name}`;
  if (lock.packages[key]) continue;
  lock.packages[key] = { version, dev: true, license: biome.license, optional: true, ...platformOf(name), engines: biome.engines };
  added++;
}
if (added > 0) writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`${added} Biome platform entries added to package-lock.json\n`);
