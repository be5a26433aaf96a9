import { randomBytes } from 'node:crypto';

/** A multipart/form-data body of one file part (and any text fields), as a browser sends it. */
export function multipartBody(
  file: { field?: string; filename?: string; contentType?: string; bytes: Buffer | string } | null,
  fields: Record<string, string> = {},
) {
  const boundary = `----inbox-test-${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  if (file) {
    const filename = file.filename === undefined ? '' : `; filename="${file.filename}"`;
    parts.push(
      Buffer.from(
        `--${boundary}\r\ncontent-disposition: form-data; name="${file.field ?? 'file'}"${filename}\r\n` +
          `content-type: ${file.contentType ?? 'application/octet-stream'}\r\n\r\n`,
      ),
      Buffer.isBuffer(file.bytes) ? file.bytes : Buffer.from(file.bytes),
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

/** The smallest valid PNG (1×1, transparent): bytes file-type recognises. */
export const PNG_1X1 = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/** Anything that answers an injected request: the service's Fastify app. */
interface Injects {
  inject(options: { method: 'POST'; url: string; headers: Record<string, string>; payload: Buffer }): PromiseLike<{
    statusCode: number;
    body: string;
    json(): { data: { id: number } };
  }>;
}

/**
 * Uploads one file through the real `POST /v1/attachments` with the caller's credential and
 * answers the 201's Attachment; any other status fails the test with the answer's body.
 */
export async function uploadFile(
  app: Injects,
  credential: Record<string, string>,
  file: { filename: string; contentType?: string; bytes: Buffer | string },
): Promise<{ id: number }> {
  const body = multipartBody(file);
  const res = await app.inject({
    method: 'POST',
    url: '/v1/attachments',
    headers: { ...credential, ...body.headers },
    payload: body.payload,
  });
  if (res.statusCode !== 201) throw new Error(`upload answered ${res.statusCode}: ${res.body}`);
  return res.json().data;
}
