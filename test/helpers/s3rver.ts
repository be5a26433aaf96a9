import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';
import { s3Storage } from '../../src/attachments/s3-storage.js';

export const S3_BUCKET = 'inbox-test';

export interface TestS3 {
  /** http://127.0.0.1:<port>, for INBOX_S3_ENDPOINT. */
  endpoint: string;
  /** The AWS SDK's environment the service reads its credentials from (s3rver's own pair). */
  env: Record<string, string>;
  /** Stops the server (S3 "down"); the data directory stays until close(). */
  stop(): Promise<void>;
  close(): Promise<void>;
}

/** A real S3-compatible server on loopback, in a fresh directory, with the bucket made. */
export async function startS3rver(): Promise<TestS3> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'inbox-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: S3_BUCKET }] });
  const { port } = await server.run();
  let running = true;
  const stop = async () => {
    if (!running) return;
    running = false;
    await server.close();
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
    requestTimeoutMs: 2_000,
    client: { credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, maxAttempts: 2 },
  });
}
