import { spawn } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const RECORD = path.join(ROOT, 'test/fixtures/imports/record.mjs');

/**
 * The packages a process resolves: `node --import tsx <args>` with a resolve hook recording
 * each (test/fixtures/imports), in a process of its own, as `npm start` would load them.
 */
export function packagesResolvedBy(args: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', RECORD, ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`exit ${code}: ${stderr.slice(-2000)}`));
      else resolve([...stderr.matchAll(/^resolved (\S+)$/gm)].map((m) => m[1]!));
    });
  });
}
