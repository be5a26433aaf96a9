import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { s3Storage } from '../../src/attachments/s3-storage.js';

export const S3_BUCKET = 'inbox-test';

export interface TestS3 {
  /** http://127.0.0.1:<port>, for INBOX_S3_ENDPOINT. */
  endpoint: string;
  /** The AWS SDK's environment the service reads its credentials from (s3rver's own pair). */
  env: Record<string, string>;
  /** Kills the server (S3 "down"); the data directory stays until close(). */
  stop(): Promise<void>;
  close(): Promise<void>;
}

// s3rver in a process of its own: a test's memory figures are then the client's alone, and
// stopping it is a real outage (refused connections), not a closed handle in the same process.
const SERVER = `
const S3rver = require('s3rver');
const [directory, bucket] = process.argv.slice(1);
new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] })
  .run()
  .then(({ port }) => process.stdout.write(JSON.stringify({ port }) + '\\n'));
`;

/** A real S3-compatible server on loopback, in a fresh directory, with the bucket made. */
export async function startS3rver(): Promise<TestS3> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'inbox-s3rver-'));
  const child = spawn(process.execPath, ['--input-type=commonjs', '-e', SERVER, directory, S3_BUCKET], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const line = /^(\{.*\})\n/.exec(out);
      if (line) resolve((JSON.parse(line[1]!) as { port: number }).port);
    });
    child.once('exit', (code) => reject(new Error(`s3rver exited (${code}) before listening`)));
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    env: { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' },
    stop,
    async close() {
      await stop();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

/**
 * The s3 store against `s3`: s3rver's credentials, a short timeout and one retry, so a stopped
 * server fails a call within seconds instead of the SDK's minutes of backoff.
 */
export function testS3Storage(s3: TestS3, prefix = 'attachments/') {
  return s3Storage({
    bucket: S3_BUCKET,
    endpoint: s3.endpoint,
    region: 'us-east-1',
    prefix,
    requestTimeoutMs: 5_000,
    client: { credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, maxAttempts: 2 },
  });
}
