import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { multipartBody, PNG_1X1 } from '../helpers/multipart.js';
import { S3_BUCKET, startS3rver } from '../helpers/s3rver.js';

// The attachment routes on INBOX_STORAGE=s3 against a real s3rver, which a test then stops.
const s3 = await startS3rver();
// The AWS SDK's usual environment, as a deployment gives it; this file runs in its own process.
Object.assign(process.env, s3.env);
const ctx = await useTestContext({
  env: { INBOX_STORAGE: 's3', INBOX_S3_BUCKET: S3_BUCKET, INBOX_S3_ENDPOINT: s3.endpoint, INBOX_S3_PREFIX: 'routes/' },
});
afterAll(() => s3.close());
const writer = await makeTenant(ctx.deps, { scopes: ['write'] });

function upload(bytes: Buffer) {
  const body = multipartBody({ filename: 'file.bin', contentType: 'application/octet-stream', bytes });
  return ctx.app.inject({ method: 'POST', url: '/v1/attachments', headers: { ...writer.headers, ...body.headers }, payload: body.payload });
}

const rows = async () => (await ctx.deps.db.selectFrom('attachments').select('id').execute()).length;

describe('attachments on the s3 store', () => {
  it('stores an upload in the bucket and serves it back, nothing in attachment_chunks', async () => {
    const bytes = Buffer.concat([PNG_1X1, randomBytes(6 * 1024 * 1024)]);
    const res = await upload(bytes);
    expect(res.statusCode, res.body).toBe(201);
    const content = await ctx.app.inject({ method: 'GET', url: `/v1/attachments/${res.json().data.id}/content`, headers: writer.headers });
    expect(content.statusCode).toBe(200);
    expect(content.rawPayload.equals(bytes)).toBe(true);
    expect(await ctx.deps.db.selectFrom('attachment_chunks').select('seq').execute()).toEqual([]);
  });

  it('answers 503 with nothing kept when S3 is down during an upload, and 503 for a download', async () => {
    const stored = await upload(Buffer.concat([PNG_1X1, randomBytes(1000)]));
    expect(stored.statusCode, stored.body).toBe(201);
    const before = await rows();
    await s3.stop();
    const res = await upload(Buffer.concat([PNG_1X1, randomBytes(1000)]));
    expect(res.statusCode, res.body).toBe(503);
    expect(res.json().error.code).toBe('unavailable');
    expect(await rows()).toBe(before);
    const content = await ctx.app.inject({
      method: 'GET',
      url: `/v1/attachments/${stored.json().data.id}/content`,
      headers: writer.headers,
    });
    expect(content.statusCode, content.body).toBe(503);
    expect(content.json().error.code).toBe('unavailable');
    expect(content.headers['retry-after']).toBe('5');
  });
});
