import { describe, expect, it } from 'vitest';
import { type InboxClientError, tenantClient } from '../../packages/client/src/index.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { PNG_1X1 } from '../helpers/multipart.js';

/** The typed client's attachments, against the real app over real HTTP. */
const ctx = await useTestContext({ env: { INBOX_MAX_ATTACHMENT_BYTES: '4096' } });
const baseUrl = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
const tenant = await makeTenant(ctx.deps);
const inbox = tenantClient({ baseUrl, apiKey: tenant.apiKey });

describe('client attachments', () => {
  it('uploads bytes and a Blob, reads them back, and names their content URL', async () => {
    const fromBytes = await inbox.attachments.upload(PNG_1X1, 'dot "1".png');
    expect(fromBytes).toMatchObject({
      kind: 'image',
      contentType: 'image/png',
      size: PNG_1X1.byteLength,
      status: 'stored',
      messageId: null,
    });
    const fromBlob = await inbox.attachments.upload(new Blob(['a,b\n1,2\n'], { type: 'text/csv' }), 'report.csv');
    expect(fromBlob).toMatchObject({ kind: 'file', contentType: 'text/csv', filename: 'report.csv', size: 8 });
    expect(await inbox.attachments.get(fromBlob.id)).toEqual(fromBlob);

    const url = inbox.attachments.contentUrl(fromBytes.id);
    expect(url).toBe(`${baseUrl}/v1/attachments/${fromBytes.id}/content`);
    const res = await fetch(url, { headers: { 'x-api-key': tenant.apiKey } });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(PNG_1X1)).toBe(true);
  });

  it('raises the service error for a file over the limit', async () => {
    const err = (await inbox.attachments.upload(new Uint8Array(5000), 'big.bin').catch((e) => e)) as InboxClientError;
    expect(err.status).toBe(413);
    expect(err.code).toBe('payload_too_large');
  });
});
