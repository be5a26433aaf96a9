import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * Imports the service's whole module graph (main.ts: what `inbox serve` loads for every role) in a child
 * process that records each @opentelemetry module resolved; then starts tracing as
 * OTEL_EXPORTER_OTLP_ENDPOINT would. One child for both: the graph takes seconds to load.
 */
async function loadedModules(): Promise<{ unset: string[]; started: string[] }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'inbox-otel-'));
  const file = path.join(dir, 'resolved.txt');
  // The hook writes before the import it resolves goes on, so the file is complete when read.
  const hooks = `import { appendFileSync } from 'node:fs'; let file; export function initialize(d) { file = d.file; }
export async function resolve(s, c, next) { const r = await next(s, c); const m = /\\/node_modules\\/(@opentelemetry\\/[^/]+)\\//.exec(r.url); if (m) appendFileSync(file, m[1] + '\\n'); return r; }`;
  const script = `
import { readFileSync, writeFileSync } from 'node:fs';
import { register } from 'node:module';
const file = ${JSON.stringify(file)};
writeFileSync(file, '');
const seen = () => [...new Set(readFileSync(file, 'utf8').split('\\n').filter(Boolean))].sort();
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(hooks)}), { data: { file } });
await import('./src/main.ts');
const unset = seen();
const t = await import('./src/tracing/tracing.ts');
await t.startTracing({ endpoint: 'http://127.0.0.1:9', role: 'all', version: 'x' });
await t.stopTracing();
console.log(JSON.stringify({ unset, started: seen() }));
`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: ROOT,
  });
  rmSync(dir, { recursive: true, force: true });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as { unset: string[]; started: string[] };
}

describe('OpenTelemetry unset', () => {
  it('loads no SDK (only the API pg-boss imports itself, a no-op), and loads it once tracing starts', async () => {
    const { unset, started } = await loadedModules();
    expect(unset).toEqual(['@opentelemetry/api']);
    expect(started).toEqual(expect.arrayContaining(['@opentelemetry/sdk-trace-base', '@opentelemetry/exporter-trace-otlp-http']));
  });
});
