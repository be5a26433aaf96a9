import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresStorage } from '../../src/attachments/postgres-storage.js';
import { withPostgresFallback } from '../../src/attachments/storage-factory.js';
import { createDatabase } from '../../src/db/database.js';
import { readAll } from '../attachments/storage-contract.js';
import { createTestDatabase } from '../helpers/db.js';
import { S3_BUCKET, startS3rver, testS3Storage } from '../helpers/s3rver.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const database = await createTestDatabase();
const { db, close } = createDatabase(database.url, { max: 3 });
const s3 = await startS3rver();
afterAll(async () => {
  await close();
  await database.drop();
  await s3.close();
});

const PREFIX = 'moved/';
const pg = postgresStorage(db);
const bucket = testS3Storage(s3, PREFIX);

/** `inbox <args>` against this file's database and the s3rver, as an operator runs it. */
function inbox(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/inbox.js'), ...args], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        DATABASE_URL: database.url,
        LOG_LEVEL: 'warn',
        INBOX_S3_BUCKET: S3_BUCKET,
        INBOX_S3_ENDPOINT: s3.endpoint,
        INBOX_S3_PREFIX: PREFIX,
        ...s3.env,
        ...env,
      },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function* once(bytes: Buffer) {
  yield bytes;
}

const chunkKeys = async () =>
  (await db.selectFrom('attachment_chunks').select('storage_key').distinct().execute()).map((r) => r.storage_key);

describe('inbox attachments move-storage --to s3', () => {
  it('moves every file from PostgreSQL to the bucket, reads them through the switch, and a second run finds nothing', async () => {
    const files = new Map([
      ['a-empty', Buffer.alloc(0)],
      ['b-small', randomBytes(10)],
      ['c-large', randomBytes(2 * 1024 * 1024 + 3)],
    ]);
    for (const [key, bytes] of files) await pg.put(key, once(bytes), { maxBytes: 10 * 1024 * 1024 });
    // A file already in the bucket (a run that copied it and stopped before the delete) is copied again.
    await bucket.put('b-small', once(Buffer.from('stale')), { maxBytes: 100 });

    // The service switched to s3 before the move reads every file, wherever it is now.
    const switched = withPostgresFallback(bucket, pg);
    expect((await readAll((await switched.get('c-large'))!)).equals(files.get('c-large')!)).toBe(true);

    const first = await inbox(['attachments', 'move-storage', '--to', 's3']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toEqual({ moved: 3, bytes: 2 * 1024 * 1024 + 13, to: 's3', bucket: S3_BUCKET });
    expect(await chunkKeys()).toEqual([]);
    for (const [key, bytes] of files) {
      expect((await readAll((await bucket.get(key))!)).equals(bytes)).toBe(true);
      expect((await readAll((await switched.get(key))!)).equals(bytes)).toBe(true);
    }

    const again = await inbox(['attachments', 'move-storage', '--to', 's3']);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ moved: 0, bytes: 0 });
  });

  it('stops with S3 down, keeps every file in PostgreSQL, and finishes when run again', async () => {
    const own = await startS3rver();
    try {
      await pg.put('d-kept', once(randomBytes(1000)), { maxBytes: 10_000 });
      const env = { INBOX_S3_ENDPOINT: own.endpoint };
      await own.stop();
      const failed = await inbox(['attachments', 'move-storage', '--to', 's3'], env);
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain('StorageUnavailableError');
      expect(await chunkKeys()).toEqual(['d-kept']);
    } finally {
      await own.close();
    }
    const resumed = await inbox(['attachments', 'move-storage', '--to', 's3']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ moved: 1, bytes: 1000 });
    expect(await chunkKeys()).toEqual([]);
  });

  it('a switched service writes to S3, deletes in both stores, and reads a key in neither as missing', async () => {
    const switched = withPostgresFallback(bucket, pg);
    await pg.put('e-old', once(Buffer.from('old')), { maxBytes: 100 });
    await bucket.put('e-old', once(Buffer.from('old')), { maxBytes: 100 });
    await switched.put('e-new', once(Buffer.from('new')), { maxBytes: 100 });
    expect(await pg.get('e-new')).toBeUndefined();
    expect((await readAll((await bucket.get('e-new'))!)).toString()).toBe('new');
    await switched.delete('e-old');
    expect(await pg.get('e-old')).toBeUndefined();
    expect(await bucket.get('e-old')).toBeUndefined();
    expect(await switched.get('e-never')).toBeUndefined();
  });

  it('refuses without --to s3 or without a bucket, exit 64', async () => {
    const noTarget = await inbox(['attachments', 'move-storage']);
    expect(noTarget.code).toBe(64);
    expect(noTarget.stderr).toContain('--to s3 is required');
    const noBucket = await inbox(['attachments', 'move-storage', '--to', 's3'], { INBOX_S3_BUCKET: '' });
    expect(noBucket.code).toBe(64);
    expect(noBucket.stderr).toContain('INBOX_S3_BUCKET');
  });
});
