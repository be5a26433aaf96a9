import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import bundled from '@sparticuz/chromium';
import { type Browser, chromium } from 'playwright-core';

/**
 * The one place browser tests and scripts get a Chromium from, so `npm test` needs nothing but Node:
 * - `system`: Debian's `chromium` when one of the candidate paths exists (CHROMIUM_PATH, when
 *   set, is the only candidate);
 * - `bundled`: else the Chromium that the npm package `@sparticuz/chromium` carries inside
 *   itself, unpacked once per machine into the temporary directory.
 * INBOX_TEST_BROWSER=bundled picks the bundled one even where a system one exists.
 */
export type BrowserSource = 'system' | 'bundled';

export const SYSTEM_CHROMIUM_PATHS: readonly string[] = ['/usr/bin/chromium', '/usr/bin/chromium-browser'];

export interface LaunchedBrowser {
  browser: Browser;
  source: BrowserSource;
  executablePath: string;
}

/** The first candidate that exists, or null: the bundled Chromium is used then. */
export function findSystemChromium(candidates: readonly string[]): string | null {
  return candidates.find((p) => existsSync(p)) ?? null;
}

function defaultCandidates(): readonly string[] {
  if (process.env.INBOX_TEST_BROWSER === 'bundled') return [];
  const named = process.env.CHROMIUM_PATH;
  if (named) {
    if (!existsSync(named)) throw new Error(`CHROMIUM_PATH names ${named}, which does not exist`);
    return [named];
  }
  return SYSTEM_CHROMIUM_PATHS;
}

export async function launchBrowser(options: { systemPaths?: readonly string[] } = {}): Promise<LaunchedBrowser> {
  const system = findSystemChromium(options.systemPaths ?? defaultCandidates());
  if (system) {
    return { browser: await chromium.launch({ executablePath: system }), source: 'system', executablePath: system };
  }
  const { executablePath, fontConfig } = await unpackBundled();
  const browser = await chromium.launch({
    executablePath,
    // The package's flags are made for serverless hosts. --disable-web-security would switch
    // CORS and the same-origin policy off, and with them the origin checks the tests exist for;
    // with --single-process, closing one browser context brings the whole browser down.
    args: bundled.args.filter((a) => a !== '--disable-web-security' && a !== '--single-process'),
    env: { ...process.env, FONTCONFIG_FILE: fontConfig },
  });
  return { browser, source: 'bundled', executablePath };
}

const LOCK_STALE_MS = 5 * 60_000;

/*
 * The package unpacks into os.tmpdir() and trusts whatever file it finds there, so two test
 * files (two processes) unpacking at once could launch a half-written binary. Each version
 * unpacks into a directory of its own, under a lock (an atomic mkdir), and a `.ready` file
 * written last tells the next process that the unpacking finished.
 */
async function unpackBundled(): Promise<{ executablePath: string; fontConfig: string }> {
  const version = await bundledVersion();
  const dir = path.join(tmpdir(), `inbox-chromium-${version}`);
  const result = { executablePath: path.join(dir, 'chromium'), fontConfig: path.join(dir, 'inbox-fonts.conf') };
  const ready = path.join(dir, '.ready');
  if (existsSync(ready)) return result;

  const lock = `${dir}.lock`;
  await acquire(lock);
  try {
    if (existsSync(ready)) return result;
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    // os.tmpdir() reads TMPDIR at each call: point it at our directory for the unpacking only.
    const before = process.env.TMPDIR;
    process.env.TMPDIR = dir;
    try {
      const unpacked = await bundled.executablePath();
      if (unpacked !== result.executablePath)
        throw new Error(`@sparticuz/chromium unpacked to ${unpacked}, expected ${result.executablePath}`);
    } finally {
      if (before === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = before;
    }
    // The machine's own fonts when it has any, and the ones the package ships in any case.
    await writeFile(
      result.fontConfig,
      `<?xml version="1.0"?>\n<!DOCTYPE fontconfig SYSTEM "fonts.dtd">\n<fontconfig>\n` +
        `  <include ignore_missing="yes">/etc/fonts/fonts.conf</include>\n` +
        `  <dir>${path.join(dir, 'fonts')}</dir>\n  <cachedir>${path.join(dir, 'fonts-cache')}</cachedir>\n</fontconfig>\n`,
    );
    await writeFile(ready, '');
    return result;
  } finally {
    await rmdir(lock).catch(() => undefined);
  }
}

/** Waits for the lock by watching it; a lock older than any unpacking is a crashed run's. */
async function acquire(lock: string): Promise<void> {
  for (;;) {
    try {
      await mkdir(lock);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const since = await stat(lock).then(
      (s) => Date.now() - s.mtimeMs,
      () => 0,
    );
    if (since > LOCK_STALE_MS) await rmdir(lock).catch(() => undefined);
    else await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function bundledVersion(): Promise<string> {
  // The package exports only its code; its package.json is found above the resolved entry.
  let dir = path.dirname(createRequire(import.meta.url).resolve('@sparticuz/chromium'));
  while (dir !== path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(await readFile(file, 'utf8')) as { name?: string; version: string };
      if (pkg.name === '@sparticuz/chromium') return pkg.version;
    }
    dir = path.dirname(dir);
  }
  throw new Error('the package.json of @sparticuz/chromium was not found');
}
