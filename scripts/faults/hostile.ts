// Part 5: the seeded property-based fuzz of test/fuzz (every adapter's verify and normalise,
// every route of the OpenAPI document with made-up parameters, queries, cursors, headers and
// bodies, hostile deliveries processed by the worker) at FUZZ_SCALE times the cases `npm test`
// runs: thousands per adapter. Same seeds, so a failure here reproduces in `npm test` with
// FUZZ_SCALE set the same.
import { spawn } from 'node:child_process';
import { ROOT } from '../../harness/service.js';
import type { FaultPart } from './part.js';

export const hostilePart: FaultPart = {
  key: 'hostile',
  title: '5. hostile input (fast-check, seeded)',
  async run({ options }, report) {
    report.did(
      `vitest run test/fuzz with FUZZ_SCALE=${options.fuzzScale}: per adapter ${400 * options.fuzzScale} mutated real payloads, ${200 * options.fuzzScale} provider-shaped ones, ${200 * options.fuzzScale} byte strings at verify, JSON nested 5,000 deep; ${600 * options.fuzzScale} requests across every route; ${300 * options.fuzzScale} hostile deliveries processed`,
    );
    let output = '';
    const child = spawn(process.execPath, [`${ROOT}/node_modules/vitest/vitest.mjs`, 'run', 'test/fuzz'], {
      cwd: ROOT,
      env: { ...process.env, FUZZ_SCALE: String(options.fuzzScale), FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    const summary = output
      .split('\n')
      .filter((l) => /Test Files|Tests {2}|Duration/.test(l))
      .map((l) => l.trim());
    const failures = output
      .split('\n')
      .filter((l) => /FAIL|Counterexample|Caused by/.test(l))
      .map((l) => l.trim().slice(0, 600));
    report.check(
      'no 5xx, no hung request, no row for a refused delivery, no crash in verify or normalise',
      code === 0,
      [...summary, ...failures.slice(0, 6)].join(' | '),
    );
  },
};
