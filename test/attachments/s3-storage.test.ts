import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { PART_BYTES, s3Storage } from '../../src/attachments/s3-storage.js';
import { StorageUnavailableError } from '../../src/attachments/storage.js';
import { createStorage } from '../../src/attachments/storage-factory.js';
import { testConfig } from '../helpers/app.js';
import { S3_BUCKET, startS3rver, testS3Storage } from '../helpers/s3rver.js';
import { pieces, readAll, storageContract } from './storage-contract.js';

const s3 = await startS3rver();
afterAll(() => s3.close());
const store = testS3Storage(s3);

// Two parts in flight (one sent, one read) and the SDK's hold on the last one sent.
storageContract('s3', () => store, { heldBytes: 4 * PART_BYTES });

describe('s3 storage', () => {
  it('writes under INBOX_S3_PREFIX in the bucket', async () => {
    await store.put('prefixed', pieces(Buffer.from('hello')), { maxBytes: 100 });
    const got = await store.client.send(new GetObjectCommand({ Bucket: S3_BUCKET, Key: 'attachments/prefixed' }));
    expect(await got.Body!.transformToString()).toBe('hello');
  });

  it('is what INBOX_STORAGE=s3 builds, from the INBOX_S3_* settings', async () => {
    const config = testConfig({
      INBOX_STORAGE: 's3',
      INBOX_S3_BUCKET: S3_BUCKET,
      INBOX_S3_ENDPOINT: s3.endpoint,
      INBOX_S3_PREFIX: 'built/',
    });
    // The SDK's usual environment supplies the credentials, as in production.
    const saved = { ...process.env };
    Object.assign(process.env, s3.env);
    try {
      const built = await createStorage(config, undefined as never);
      await built.put('from-config', pieces(Buffer.from('configured')), { maxBytes: 100 });
    } finally {
      process.env = saved;
    }
    const got = await store.client.send(new GetObjectCommand({ Bucket: S3_BUCKET, Key: 'built/from-config' }));
    expect(await got.Body!.transformToString()).toBe('configured');
  });

  it('reports a bucket that does not exist as StorageUnavailableError, not as a missing file', async () => {
    const wrong = s3Storage({
      bucket: 'no-such-bucket',
      endpoint: s3.endpoint,
      region: 'us-east-1',
      prefix: '',
      client: { credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, maxAttempts: 1 },
    });
    await expect(wrong.get('k')).rejects.toBeInstanceOf(StorageUnavailableError);
    await expect(wrong.put('k', pieces(Buffer.from('x')), { maxBytes: 10 })).rejects.toBeInstanceOf(StorageUnavailableError);
  });

  it('fails with StorageUnavailableError, not a hang, when the server accepts and never answers', async () => {
    const sockets: net.Socket[] = [];
    const silent = net.createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const stalled = s3Storage({
      bucket: S3_BUCKET,
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      prefix: '',
      requestTimeoutMs: 300,
      client: { credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, maxAttempts: 1 },
    });
    try {
      await expect(stalled.put('k', pieces(Buffer.from('x')), { maxBytes: 10 })).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(stalled.get('k')).rejects.toBeInstanceOf(StorageUnavailableError);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('fails with StorageUnavailableError when the server is down, for a small and a multipart write and a read', async () => {
    const own = await startS3rver();
    try {
      const down = testS3Storage(own);
      await down.put('before', pieces(Buffer.from('kept')), { maxBytes: 100 });
      await own.stop();
      await expect(down.put('small', pieces(Buffer.from('x')), { maxBytes: 100 })).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(down.put('large', pieces(randomBytes(13 * 1024 * 1024)), { maxBytes: 20 * 1024 * 1024 })).rejects.toBeInstanceOf(
        StorageUnavailableError,
      );
      await expect(down.get('before')).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(down.delete('before')).rejects.toBeInstanceOf(StorageUnavailableError);
    } finally {
      await own.close();
    }
  });

  it('reads back a multipart upload of several parts whole, a piece larger than a part included', async () => {
    const bytes = randomBytes(3 * PART_BYTES + 5);
    await store.put('multi', pieces(bytes, PART_BYTES + 1), { maxBytes: bytes.byteLength });
    expect((await readAll((await store.get('multi'))!)).equals(bytes)).toBe(true);
  });
});
