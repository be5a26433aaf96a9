// Phase 1, the ceiling: ceiling-server.mjs as its own plain-JavaScript process (no TypeScript
// loader), the bound no ingestion can pass on this machine (read the body, check its HMAC).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { ROOT, rssMbOf, WEBHOOK_SECRET, waitUntil } from '../../harness/service.js';
import { freePort } from '../../src/db/embedded.js';
import { burst, type Measured, signedDeliveries } from './common.js';

export interface Ceiling {
  url: string;
  pid: number | undefined;
  rssMb(): number;
  /** One burst of `seconds` at `connections`. */
  measure(connections: number, seconds: number): Promise<Measured>;
  stop(): Promise<void>;
}

export async function startCeiling(): Promise<Ceiling> {
  const port = await freePort();
  const child = spawn(process.execPath, [path.join(ROOT, 'scripts/bench/ceiling-server.mjs')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', PORT: String(port), BENCH_SECRET: WEBHOOK_SECRET },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output = (output + d).slice(-8192)));
  child.stderr.on('data', (d: Buffer) => (output = (output + d).slice(-8192)));
  const exited = new Promise((r) => child.once('exit', r));
  await waitUntil(
    'the ceiling to listen',
    async () => {
      if (child.exitCode !== null) throw new Error(`the ceiling exited early:\n${output}`);
      return output.includes('ceiling listening');
    },
    30_000,
    50,
  ).catch((err: Error) => {
    throw new Error(`${err.message}\n${output}`);
  });
  const url = `http://127.0.0.1:${port}`;
  // A ring of pre-built deliveries: the ceiling keeps nothing, so repeats cost it nothing.
  const ring = signedDeliveries(4096);
  return {
    url,
    pid: child.pid,
    rssMb: () => rssMbOf(child.pid),
    measure: (connections, seconds) => burst(url, ring, { connections, duration: seconds, ring: true }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
