import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { someBytes, storeUpload } from '../helpers/attachments.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { S3_BUCKET, startS3rver, testS3Storage } from '../helpers/s3rver.js';
import { seedMessage, seedThread, signedInUser } from '../helpers/threads.js';
import { waitFor } from '../helpers/webhooks.js';

// Erasure on INBOX_STORAGE=s3 (test/contacts/erasure.test.ts covers the Postgres store): the
// bytes of the person's files leave the bucket, not only their rows in the database.
const PREFIX = 'erasure/';
const s3 = await startS3rver();
// The AWS SDK's usual environment, as a deployment gives it; this file runs in its own process.
Object.assign(process.env, s3.env);
const ctx = await useTestContext({
  workers: true,
  env: { INBOX_STORAGE: 's3', INBOX_S3_BUCKET: S3_BUCKET, INBOX_S3_ENDPOINT: s3.endpoint, INBOX_S3_PREFIX: PREFIX },
});
afterAll(() => s3.close());
const bucket = testS3Storage(s3, PREFIX).client;
const db = ctx.deps.db;
const tenant = await makeTenant(ctx.deps);
const connection = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'whatsapp' });

/** A file on a message of a thread of its own contact, its bytes in the bucket. */
async function fileInThread() {
  const thread = await seedThread(ctx.deps, { id: connection.id, workspaceId: tenant.workspace.id });
  const message = await seedMessage(ctx.deps, thread, 'a photo');
  const bytes = someBytes();
  const id = await storeUpload(ctx.deps, tenant.workspace.id, { bytes, contentType: 'image/png', kind: 'image' });
  await db.updateTable('attachments').set({ message_id: message.id }).where('id', '=', id).execute();
  const { storage_key } = await db.selectFrom('attachments').select('storage_key').where('id', '=', id).executeTakeFirstOrThrow();
  return { id, contactId: thread.contact_id, key: `${PREFIX}${storage_key}`, bytes };
}

const keysInBucket = async () =>
  ((await bucket.send(new ListObjectsV2Command({ Bucket: S3_BUCKET, Prefix: PREFIX }))).Contents ?? []).map((o) => o.Key);

describe('erasure on the s3 store', () => {
  it('removes the bytes of the person’s files from the bucket, and only theirs', async () => {
    const admin = await signedInUser(ctx.app, ctx.deps, tenant.workspace.id, ['admin']);
    const erased = await fileInThread();
    const kept = await fileInThread();
    expect(await keysInBucket()).toEqual(expect.arrayContaining([erased.key, kept.key]));
    const stored = await bucket.send(new GetObjectCommand({ Bucket: S3_BUCKET, Key: erased.key }));
    expect(Buffer.from(await stored.Body!.transformToByteArray()).equals(erased.bytes)).toBe(true);

    const res = await ctx.app.inject({ method: 'POST', url: `/v1/contacts/${erased.contactId}/erase`, headers: admin.headers });
    expect(res.statusCode, res.body).toBe(202);
    // The rows go in the job's last step, after the bytes.
    await waitFor(
      async () => !(await db.selectFrom('attachments').select('id').where('id', '=', erased.id).executeTakeFirst()),
      'the erased file’s row gone',
    );

    const keys = await keysInBucket();
    expect(keys).not.toContain(erased.key);
    expect(keys).toContain(kept.key);
    await expect(bucket.send(new GetObjectCommand({ Bucket: S3_BUCKET, Key: erased.key }))).rejects.toMatchObject({ name: 'NoSuchKey' });
    expect(await db.selectFrom('attachments').select('id').where('id', '=', kept.id).executeTakeFirst()).toEqual({ id: kept.id });
  });
});
