// `npm run faults [-- --parts kill,postgres,scale,outbound,outbound-kill,hostile,soak,hardening] [--seconds 24] [--connections 200]
//                   [--soak-minutes 2] [--fuzz-scale 10] [--resume-bound 30]`
//
// The fault suite: real service processes (the compiled CLI), a real PostgreSQL of its own,
// real load on 127.0.0.1. Each part prints what it did and what it checked; the run exits 1
// if any check failed (a delivery lost or doubled, a reply lost, a 5xx to hostile input, …).
// The soak runs 2 minutes by default; `--soak-minutes 10` is the full soak.
import { execFileSync } from 'node:child_process';
import { Report } from '../../harness/checks.js';
import { ROOT, say, startFake, startPostgres } from '../../harness/service.js';
import { parseOptions } from '../cli-options.js';
import { hardeningPart } from './hardening.js';
import { hostilePart } from './hostile.js';
import { killPart } from './kill.js';
import { outboundPart } from './outbound.js';
import { outboundKillPart } from './outbound-kill.js';
import type { FaultPart, SuiteOptions } from './part.js';
import { outagePart } from './postgres-outage.js';
import { rollingPart } from './rolling.js';
import { scaleOutPart } from './scale-out.js';
import { soakPart } from './soak.js';

/** Every part, in the order they run. */
const PARTS: FaultPart[] = [
  killPart,
  outagePart,
  scaleOutPart,
  outboundPart,
  outboundKillPart,
  hostilePart,
  soakPart,
  hardeningPart,
  rollingPart,
];

const values = parseOptions(
  'npm run faults --',
  'The fault suite: real service processes, a PostgreSQL of its own, real load on 127.0.0.1; exits 1 if a check fails.',
  {
    parts: {
      type: 'string',
      // The rolling upgrade needs an older build (ROLL_FROM_ROOT): only when asked for.
      default: PARTS.filter((p) => p.key !== 'rolling')
        .map((p) => p.key)
        .join(','),
      help: 'comma list of the parts to run, in the order shown (rolling: ROLL_FROM_ROOT=<an older checkout, built>)',
    },
    seconds: { type: 'string', default: '24', help: 'seconds of load in each part' },
    connections: { type: 'string', default: '200', help: 'concurrent senders of deliveries' },
    'soak-minutes': { type: 'string', default: '2', help: 'minutes of the soak (10 is the full soak)' },
    'fuzz-scale': { type: 'string', default: '10', help: "multiplier of the hostile part's fuzz runs" },
    'resume-bound': { type: 'string', default: '30', help: 'seconds a restarted process may take to resume killed work' },
  },
);
const options: SuiteOptions = {
  seconds: Number(values.seconds),
  connections: Number(values.connections),
  soakMinutes: Number(values['soak-minutes']),
  fuzzScale: Number(values['fuzz-scale']),
  resumeBoundSeconds: Number(values['resume-bound']),
};
const chosen = values.parts.split(',').map((k) => k.trim());
const unknown = chosen.filter((k) => !PARTS.some((p) => p.key === k));
if (unknown.length > 0) {
  say(`unknown part(s): ${unknown.join(', ')} (known: ${PARTS.map((p) => p.key).join(', ')})`);
  process.exit(64);
}

say('building the service (npm run build)');
execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
const postgres = await startPostgres();
const fake = await startFake();
const reports: Report[] = [];
const started = Date.now();
try {
  for (const part of PARTS.filter((p) => chosen.includes(p.key))) {
    say(`\n${part.title}`);
    const report = new Report(part.title);
    reports.push(report);
    const partStarted = Date.now();
    try {
      await part.run({ postgres, fake, options }, report);
    } catch (err) {
      report.check('the part ran to the end', false, (err as Error).stack ?? String(err));
    }
    report.did(`${((Date.now() - partStarted) / 1000).toFixed(0)} s`);
  }
} finally {
  await fake.close();
  await postgres.destroy();
}

say(`\nsummary (${((Date.now() - started) / 1000).toFixed(0)} s)`);
for (const r of reports) {
  say(`${r.ok ? 'PASS' : 'FAIL'}  ${r.part}`);
  for (const c of r.checks.filter((c) => !c.ok)) say(`      ✗ ${c.name}: ${c.detail.split('\n')[0]}`);
}
process.exit(reports.every((r) => r.ok) ? 0 : 1);
