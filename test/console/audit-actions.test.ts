import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AUDIT_ACTIONS } from '../../src/console/settings/audit-actions.js';

const root = join(import.meta.dirname, '../..');

/** The actions docs/security.md's audit table names (`…updated` is the row's first prefix). */
function documentedActions(): string[] {
  const doc = readFileSync(join(root, 'docs/security.md'), 'utf8');
  const table = doc.slice(doc.indexOf('## Audit log'), doc.indexOf('- **Written in'));
  const out: string[] = [];
  for (const line of table.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const names = [...(line.split(' | ')[0] ?? '').matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const prefix = names[0]!.split('.')[0]!;
    for (const n of names) out.push(n.startsWith('…') ? `${prefix}.${n.slice(1)}` : n);
  }
  return out;
}

/** The action literals of every `recordAudit(…)` call in the service's code. */
function recordedActions(dir = join(root, 'src')): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'console') out.push(...recordedActions(path));
      continue;
    }
    if (!entry.name.endsWith('.ts')) continue;
    const text = readFileSync(path, 'utf8');
    for (let at = text.indexOf('recordAudit('); at >= 0; at = text.indexOf('recordAudit(', at + 1)) {
      const call = text.slice(at, at + 300).split(/\{ type:/)[0]!;
      for (const m of call.matchAll(/'([a-z_]+\.[a-z0-9_]+)'/g)) out.push(m[1]!);
    }
  }
  return out;
}

describe("the audit log's action filter", () => {
  it('offers every action the service writes and docs/security.md names', () => {
    const offered = new Set<string>(AUDIT_ACTIONS);
    const documented = documentedActions();
    expect(documented.length).toBeGreaterThan(40);
    expect(documented.filter((a) => !offered.has(a))).toEqual([]);
    const recorded = recordedActions();
    expect(recorded.length).toBeGreaterThan(30);
    expect([...new Set(recorded)].filter((a) => !offered.has(a))).toEqual([]);
    expect(new Set(documented)).toEqual(offered);
  });
});
