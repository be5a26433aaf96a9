import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('the process-level unhandledRejection guard', () => {
  it('logs the rejection as an error and the process keeps serving', async () => {
    // In a child: a rejection nobody handles would end it with code 1 without the guard.
    const guards = pathToFileURL(path.join(ROOT, 'src/process-guards.ts')).href;
    const logger = pathToFileURL(path.join(ROOT, 'src/logger.ts')).href;
    const code = `
      const { installProcessGuards } = await import(${JSON.stringify(guards)});
      const { createLogger } = await import(${JSON.stringify(logger)});
      installProcessGuards(createLogger('info'));
      Promise.reject(new Error('a row that does not open'));
      setTimeout(() => { process.stdout.write('\\nstill serving\\n'); process.exit(0); }, 50);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const exitCode = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(exitCode, output).toBe(0);
    expect(output).toContain('still serving');
    const line = JSON.parse(output.split('\n').find((l) => l.includes('unhandled promise rejection'))!);
    expect(line).toMatchObject({ level: 50, msg: expect.stringContaining('keeps serving'), err: { message: 'a row that does not open' } });
  });
});
