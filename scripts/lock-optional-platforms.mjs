#!/usr/bin/env node
// `node scripts/lock-optional-platforms.mjs`: keeps package-lock.json in sync for packages that
// ship one optional binary package per platform (Biome, Rollup under Vite). A registry mirror
// that serves only some of them (this project's serves the Linux ones) makes `npm install`
// leave the others out of the lock file, and `npm ci` then refuses the lock as out of sync
// ("Missing: @rollup/rollup-darwin-arm64 from lock file"). This writes an entry for each
// missing one, with the os/cpu/libc fields npm uses to skip it, read from the registry's
// metadata (which it serves for every platform), so `npm ci` installs only the binary of the
// machine it runs on. Run it after any `npm install`; it changes nothing when every entry is
// there.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const lockPath = path.join(root, 'package-lock.json');
const lock = JSON.parse(readFileSync(lockPath, 'utf8'));
const packages = lock.packages;

/** Whether npm would find `name` from the package at `at` (its own node_modules, then the root's). */
function present(at, name) {
  return packages[`${at}/node_modules/${name}`] !== undefined || packages[`node_modules/${name}`] !== undefined;
}

/** The registry's platform fields of one version, as the lock file keeps them. */
function platformOf(name, version) {
  const out = execFileSync('npm', ['view', `${name}@${version}`, 'os', 'cpu', 'libc', 'engines', 'license', '--json'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const meta = out.trim() === '' ? {} : JSON.parse(out);
  const fields = {};
  for (const key of ['license', 'os', 'cpu', 'libc', 'engines']) if (meta[key] !== undefined) fields[key] = meta[key];
  if (!fields.os && !fields.cpu) throw new Error(`${name}@${version} names no platform: not a per-platform binary`);
  return fields;
}

let added = 0;
for (const [at, pkg] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(pkg.optionalDependencies ?? {})) {
    if (present(at, name) || !/^\d+\.\d+\.\d+/.test(version)) continue;
    const { engines, ...platform } = platformOf(name, version);
    // Keys in the order npm writes them, so a later `npm install` leaves the file unchanged.
    const fields = { ...platform, ...(pkg.dev ? { dev: true } : {}), optional: true };
    packages[`node_modules/${name}`] = {
      version,
      ...Object.fromEntries(Object.entries(fields).sort(([a], [b]) => a.localeCompare(b))),
      ...(engines ? { engines } : {}),
    };
    added++;
  }
}
if (added > 0) {
  lock.packages = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
  writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
}
process.stdout.write(`${added} platform entries added to package-lock.json\n`);
