import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The drivers' command lines, run as a user runs them (their own process, nothing built or
 * started before the options are read): `--help` prints every option with its default and exits
 * 0, a misuse prints what was wrong and the usage and exits 2.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');

function run(script: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

const DRIVERS = {
  bench: {
    script: 'scripts/bench/run.ts',
    options: {
      seconds: '5; 10 with --compare',
      rounds: '3',
      connections: '200',
      rate: '500',
      workers: '1',
      sends: '5000',
      outbound: '20000',
      'log-level': 'info',
      sustained: '2000',
      'attachment-mb': '25',
      'attachment-transfers': '10',
      deliveries: '20000',
    },
    flags: ['json', 'ingest-only', 'outbound-only', 'single', 'attachments', 'statements'],
  },
  faults: {
    script: 'scripts/faults/run.ts',
    options: {
      parts: 'kill,postgres,scale,outbound,outbound-kill,hostile,soak,hardening',
      seconds: '24',
      connections: '200',
      'soak-minutes': '2',
      'fuzz-scale': '10',
      'resume-bound': '30',
    },
    flags: [] as string[],
  },
};

describe.each(Object.entries(DRIVERS))('npm run %s', (_name, driver) => {
  it('--help prints every option with its default and exits 0', async () => {
    const { code, stdout } = await run(driver.script, ['--help']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^usage: /);
    for (const [option, value] of Object.entries(driver.options)) {
      expect(stdout).toMatch(new RegExp(`--${option} <value> .*\\(default ${value}\\)`));
    }
    for (const flag of driver.flags) expect(stdout).toMatch(new RegExp(`--${flag} .*\\(default off\\)`));
  }, 60_000);

  it('an unknown option prints a clear line and the usage and exits 2', async () => {
    const { code, stderr, stdout } = await run(driver.script, ['--bogus']);
    expect(code).toBe(2);
    expect(stderr).toContain("Unknown option '--bogus'");
    expect(stderr).toContain('usage: ');
    expect(stdout).toBe('');
  }, 60_000);

  it('an option without its value exits 2', async () => {
    const { code, stderr } = await run(driver.script, ['--seconds']);
    expect(code).toBe(2);
    expect(stderr).toContain("'--seconds <value>' argument missing");
  }, 60_000);
});

describe('npm run bench', () => {
  it('refuses a number option that is not a positive number, exit 2', async () => {
    const { code, stderr } = await run(DRIVERS.bench.script, ['--seconds', 'abc']);
    expect(code).toBe(2);
    expect(stderr).toContain('--seconds must be a positive number');
  }, 60_000);
});
