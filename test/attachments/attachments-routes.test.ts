import { describe, expect, it } from 'vitest';
import { contentDisposition } from '../../src/attachments/content-headers.js';
import { cleanFilename } from '../../src/attachments/content-type.js';
import { linkKey, signedLink } from '../../src/attachments/signed-links.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { multipartBody, PNG_1X1 } from '../helpers/multipart.js';
import { seedMessage, seedThread, signedInUser } from '../helpers/threads.js';

const MAX = 64 * 1024;
const PUBLIC_URL = 'https://inbox.example.test';
const ctx = await useTestContext({ env: { INBOX_MAX_ATTACHMENT_BYTES: String(MAX), INBOX_PUBLIC_URL: PUBLIC_URL } });
const tenant = await makeTenant(ctx.deps);
const writer = await makeTenant(ctx.deps, { scopes: ['write'] });
const reader = await makeTenant(ctx.deps, { scopes: ['read'] });

function upload(headers: Record<string, string>, file: Parameters<typeof multipartBody>[0]) {
  const body = multipartBody(file);
  return ctx.app.inject({ method: 'POST', url: '/v1/attachments', headers: { ...headers, ...body.headers }, payload: body.payload });
}

const countRows = async () =>
  Number(
    (
      await ctx.deps.db
        .selectFrom('attachments')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );
const countChunks = async () =>
  Number(
    (
      await ctx.deps.db
        .selectFrom('attachment_chunks')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe('POST /v1/attachments', () => {
  it('stores an upload typed from its bytes, not from what the sender declared', async () => {
    const res = await upload(tenant.headers, { filename: 'invoice.pdf', contentType: 'application/pdf', bytes: PNG_1X1 });
    expect(res.statusCode, res.body).toBe(201);
    const data = res.json().data;
    expect(data).toEqual({
      id: expect.any(Number),
      messageId: null,
      kind: 'image',
      contentType: 'image/png',
      filename: 'invoice.pdf',
      size: PNG_1X1.byteLength,
      status: 'stored',
      error: null,
      url: `${PUBLIC_URL}/v1/attachments/${data.id}/content`,
    });
    const content = await ctx.app.inject({ method: 'GET', url: `/v1/attachments/${data.id}/content`, headers: tenant.headers });
    expect(content.statusCode).toBe(200);
    expect(content.rawPayload.equals(PNG_1X1)).toBe(true);
    expect(content.headers['content-type']).toBe('image/png');
    expect(content.headers['content-length']).toBe(String(PNG_1X1.byteLength));
    expect(content.headers['content-disposition']).toBe(`inline; filename="invoice.pdf"; filename*=UTF-8''invoice.pdf`);
    expect(content.headers['x-content-type-options']).toBe('nosniff');
    expect(content.headers.vary).toBe('Authorization');
    expect(content.headers['content-security-policy']).toBe('sandbox');
  });

  it('keeps the declared type when the bytes have no signature, then octet-stream', async () => {
    const csv = await upload(writer.headers, { filename: 'r.csv', contentType: 'text/csv; charset=utf-8', bytes: 'a,b\n1,2\n' });
    expect(csv.statusCode, csv.body).toBe(201);
    expect(csv.json().data).toMatchObject({ kind: 'file', contentType: 'text/csv' });
    const bare = await upload(writer.headers, { filename: 'x', contentType: 'not a type', bytes: 'plain words' });
    expect(bare.json().data).toMatchObject({ kind: 'file', contentType: 'application/octet-stream' });
  });

  it('keeps an Office type declared for the container its bytes are, and only an Office type', async () => {
    // A .doc/.xls/.ppt is a Compound File; a .docx whose [Content_Types].xml comes late (as
    // LibreOffice writes it) reads as a plain ZIP in the bytes the type is read from.
    const compoundFile = Buffer.concat([Buffer.from('d0cf11e0a1b11ae1', 'hex'), Buffer.alloc(1024)]);
    const zipEntry = (name: string, data: string) => {
      const header = Buffer.alloc(30);
      header.writeUInt32LE(0x04034b50, 0);
      header.writeUInt16LE(20, 4);
      header.writeUInt32LE(data.length, 18);
      header.writeUInt32LE(data.length, 22);
      header.writeUInt16LE(name.length, 26);
      return Buffer.concat([header, Buffer.from(name), Buffer.from(data)]);
    };
    const lateZip = Buffer.concat([zipEntry('_rels/.rels', '<Relationships/>'), zipEntry('word/document.xml', '<w:document/>')]);
    const docx = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
    // [declared, bytes, stored and served type]
    const cases: [string, Buffer, string][] = [
      ['application/msword', compoundFile, 'application/msword'],
      ['application/vnd.ms-excel', compoundFile, 'application/vnd.ms-excel'],
      ['application/vnd.ms-powerpoint', compoundFile, 'application/vnd.ms-powerpoint'],
      [docx, lateZip, docx],
      // A type the container cannot be stays what the bytes say.
      ['text/html', compoundFile, 'application/x-cfb'],
      ['application/msword', lateZip, 'application/zip'],
      ['application/octet-stream', compoundFile, 'application/x-cfb'],
    ];
    for (const [declared, bytes, stored] of cases) {
      const res = await upload(writer.headers, { filename: 'f', contentType: declared, bytes });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data.contentType, declared).toBe(stored);
      const content = await ctx.app.inject({
        method: 'GET',
        url: `/v1/attachments/${res.json().data.id}/content`,
        headers: writer.headers,
      });
      const served = stored === 'application/x-cfb' ? 'application/octet-stream' : stored;
      expect(content.headers['content-type'], declared).toBe(served);
      expect(content.headers['content-disposition'], declared).toMatch(/^attachment;/);
    }
  });

  it('serves an HTML file as an octet-stream download, its name encoded as RFC 6266 says; the resource keeps its type', async () => {
    const res = await upload(tenant.headers, { filename: 'Café menu.html', contentType: 'text/html', bytes: '<script>alert(1)</script>' });
    const { id, contentType } = res.json().data;
    expect(contentType).toBe('text/html');
    const content = await ctx.app.inject({ method: 'GET', url: `/v1/attachments/${id}/content`, headers: tenant.headers });
    expect(content.headers['content-type']).toBe('application/octet-stream');
    expect(content.headers['content-disposition']).toBe(`attachment; filename="Caf_ menu.html"; filename*=UTF-8''Caf%C3%A9%20menu.html`);
    expect(content.headers['content-security-policy']).toBe('sandbox');
    expect(content.headers['x-content-type-options']).toBe('nosniff');
  });

  it('keeps a file’s own type only for inert types; scriptable and unknown types are octet-stream downloads', async () => {
    // [declared type, bytes, served content-type, disposition]
    const cases: [string, string | Buffer, string, 'inline' | 'attachment'][] = [
      ['image/png', PNG_1X1, 'image/png', 'inline'],
      ['image/jpeg', 'x', 'image/jpeg', 'inline'],
      ['image/gif', 'x', 'image/gif', 'inline'],
      ['image/webp', 'x', 'image/webp', 'inline'],
      ['audio/ogg', 'x', 'audio/ogg', 'inline'],
      ['video/mp4', 'x', 'video/mp4', 'inline'],
      ['application/pdf', 'x', 'application/pdf', 'attachment'],
      ['text/plain', 'words', 'text/plain; charset=utf-8', 'attachment'],
      ['text/csv', 'a,b', 'text/csv', 'attachment'],
      ['application/zip', 'x', 'application/zip', 'attachment'],
      ['application/msword', 'x', 'application/msword', 'attachment'],
      [
        'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        'x',
        'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        'attachment',
      ],
      [
        'image/svg+xml',
        '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
        'application/octet-stream',
        'attachment',
      ],
      ['text/html', '<script>alert(1)</script>', 'application/octet-stream', 'attachment'],
      ['application/xhtml+xml', '<html xmlns="http://www.w3.org/1999/xhtml"/>', 'application/octet-stream', 'attachment'],
      ['application/xml', '<a/>', 'application/octet-stream', 'attachment'],
      ['text/xml', '<a/>', 'application/octet-stream', 'attachment'],
      ['text/javascript', 'alert(1)', 'application/octet-stream', 'attachment'],
      ['application/javascript', 'alert(1)', 'application/octet-stream', 'attachment'],
      ['text/css', 'body{}', 'application/octet-stream', 'attachment'],
      ['image/bmp', 'x', 'application/octet-stream', 'attachment'],
      // Any `…+xml` type renders as an XML document, whatever its family.
      ['audio/x-playlist+xml', '<a/>', 'application/octet-stream', 'attachment'],
      ['application/x-made-up', 'x', 'application/octet-stream', 'attachment'],
    ];
    for (const [declared, bytes, served, disposition] of cases) {
      const res = await upload(writer.headers, { filename: 'f', contentType: declared, bytes });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data.contentType, declared).toBe(declared);
      const content = await ctx.app.inject({
        method: 'GET',
        url: `/v1/attachments/${res.json().data.id}/content`,
        headers: writer.headers,
      });
      expect(content.statusCode, declared).toBe(200);
      expect(content.headers['content-type'], declared).toBe(served);
      expect(content.headers['content-disposition'], declared).toBe(`${disposition}; filename="f"; filename*=UTF-8''f`);
      expect(content.headers['x-content-type-options'], declared).toBe('nosniff');
      expect(content.headers['content-security-policy'], declared).toBe('sandbox');
    }
  });

  it('names files safely: quotes and non-ASCII in the header, no paths or control characters kept', () => {
    expect(contentDisposition('attachment', 'a "b"\\c.txt')).toBe(
      `attachment; filename="a _b__c.txt"; filename*=UTF-8''a%20%22b%22%5Cc.txt`,
    );
    expect(contentDisposition('inline', null)).toBe('inline');
    expect(cleanFilename('../../etc/passwd')).toBe('passwd');
    expect(cleanFilename('C:\\Users\\x\\report.pdf')).toBe('report.pdf');
    expect(cleanFilename('a\u0000b\r\n.txt')).toBe('ab.txt');
    expect(cleanFilename('..')).toBeNull();
    expect(cleanFilename('x'.repeat(300))).toHaveLength(255);
    // 255 characters, not UTF-16 units: an emoji at the cut stays whole (no half pair, no U+FFFD).
    expect(cleanFilename(`${'a'.repeat(254)}😀b`)).toBe(`${'a'.repeat(254)}😀`);
  });

  it('refuses a file over INBOX_MAX_ATTACHMENT_BYTES with 413 and keeps nothing', async () => {
    const [rows, chunks] = [await countRows(), await countChunks()];
    const res = await upload(tenant.headers, { filename: 'big.bin', bytes: Buffer.alloc(MAX + 1, 1) });
    expect(res.statusCode, res.body).toBe(413);
    expect(res.json().error.code).toBe('payload_too_large');
    expect([await countRows(), await countChunks()]).toEqual([rows, chunks]);
    // Exactly the limit is allowed.
    expect((await upload(tenant.headers, { filename: 'max.bin', bytes: Buffer.alloc(MAX, 1) })).statusCode).toBe(201);
  });

  it('answers 4xx with the envelope for a missing file field, a body that is not multipart, and a malformed one', async () => {
    const wrongField = await upload(tenant.headers, { field: 'upload', filename: 'a.txt', bytes: 'x' });
    expect(wrongField.statusCode).toBe(422);
    expect(wrongField.json().error.message).toMatch(/"file"/);
    const noFile = await upload(tenant.headers, null);
    expect(noFile.statusCode).toBe(422);
    const json = await ctx.app.inject({ method: 'POST', url: '/v1/attachments', headers: tenant.headers, payload: { file: 'x' } });
    expect(json.statusCode).toBeGreaterThanOrEqual(400);
    expect(json.statusCode).toBeLessThan(500);
    expect(json.json().error.code).toEqual(expect.any(String));
    const broken = await ctx.app.inject({
      method: 'POST',
      url: '/v1/attachments',
      headers: { ...tenant.headers, 'content-type': 'multipart/form-data; boundary=xyz' },
      payload: '--xyz\r\ncontent-disposition: form-data; name="file"; filename="a"\r\n\r\nunterminated',
    });
    expect(broken.statusCode).toBeGreaterThanOrEqual(400);
    expect(broken.statusCode).toBeLessThan(500);
  });

  it('needs a credential with the write scope', async () => {
    expect((await upload({}, { filename: 'a', bytes: 'x' })).statusCode).toBe(401);
    const res = await upload(reader.headers, { filename: 'a', bytes: 'x' });
    expect(res.statusCode).toBe(403);
  });
});

describe('GET /v1/attachments/:id and its content', () => {
  it('lets a read key and a signed-in user read; another workspace gets 404; no credential 401', async () => {
    const { id } = (await upload(tenant.headers, { filename: 'a.png', bytes: PNG_1X1 })).json().data;
    const readerOfTenant = await makeTenant(ctx.deps, { scopes: ['read'] });
    // A read key of another workspace: 404, never the bytes.
    expect(
      (await ctx.app.inject({ method: 'GET', url: `/v1/attachments/${id}/content`, headers: readerOfTenant.headers })).statusCode,
    ).toBe(404);
    expect((await ctx.app.inject({ method: 'GET', url: `/v1/attachments/${id}`, headers: readerOfTenant.headers })).statusCode).toBe(404);
    expect((await ctx.app.inject({ method: 'GET', url: `/v1/attachments/${id}/content` })).statusCode).toBe(401);
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/attachments/999999999/content', headers: tenant.headers })).statusCode).toBe(
      404,
    );

    const sameWorkspaceReader = await ctx.app.inject({
      method: 'POST',
      url: '/v1/api-keys',
      headers: tenant.headers,
      payload: { name: 'reader', scopes: ['read'] },
    });
    const readKey = { 'x-api-key': sameWorkspaceReader.json().data.key as string };
    const byKey = await ctx.app.inject({ method: 'GET', url: `/v1/attachments/${id}/content`, headers: readKey });
    expect(byKey.statusCode).toBe(200);
    expect(byKey.rawPayload.equals(PNG_1X1)).toBe(true);
    const resource = await ctx.app.inject({ method: 'GET', url: `/v1/attachments/${id}`, headers: readKey });
    expect(resource.json().data).toMatchObject({ id, status: 'stored', kind: 'image' });
    const user = await signedInUser(ctx.app, ctx.deps, tenant.workspace.id);
    expect((await ctx.app.inject({ method: 'GET', url: `/v1/attachments/${id}/content`, headers: user.headers })).statusCode).toBe(200);
  });

  it('serves a signed link without a credential until it expires; a wrong or expired one is 401', async () => {
    const { id } = (await upload(tenant.headers, { filename: 'a.png', bytes: PNG_1X1 })).json().data;
    const key = linkKey(ctx.deps.secretKey);
    const path = (link: string) => link.slice(PUBLIC_URL.length);
    const link = signedLink({ publicUrl: PUBLIC_URL, key, now: new Date() }, id);
    const ok = await ctx.app.inject({ method: 'GET', url: path(link) });
    expect(ok.statusCode).toBe(200);
    expect(ok.rawPayload.equals(PNG_1X1)).toBe(true);
    expect(ok.headers['content-security-policy']).toBe('sandbox');

    const expired = signedLink({ publicUrl: PUBLIC_URL, key, now: new Date(Date.now() - 16 * 60_000) }, id);
    expect((await ctx.app.inject({ method: 'GET', url: path(expired) })).statusCode).toBe(401);
    const tampered = path(link).replace(/signature=(.)/, (_m, c: string) => `signature=${c === '0' ? '1' : '0'}`);
    expect((await ctx.app.inject({ method: 'GET', url: tampered })).statusCode).toBe(401);
    const otherId = path(signedLink({ publicUrl: PUBLIC_URL, key, now: new Date() }, id + 1000)).replace(`/${id + 1000}/`, `/${id}/`);
    expect((await ctx.app.inject({ method: 'GET', url: otherId })).statusCode).toBe(401);
    const noSignature = await ctx.app.inject({ method: 'GET', url: `/v1/attachments/${id}/content?expires=99999999999` });
    expect(noSignature.statusCode).toBe(401);
    expect(noSignature.json().error.code).toBe('unauthorized');
  });

  it("serves a signed link ending in the file's name: the same bytes and headers, the name never read", async () => {
    const { id } = (await upload(tenant.headers, { filename: 'Quarterly report.png', bytes: PNG_1X1 })).json().data;
    const other = (await upload(tenant.headers, { filename: 'secret.png', bytes: Buffer.concat([PNG_1X1, Buffer.from('x')]) })).json().data;
    const key = linkKey(ctx.deps.secretKey);
    const link = signedLink({ publicUrl: PUBLIC_URL, key, now: new Date() }, id, { name: 'Quarterly report.png' });
    const url = new URL(link);
    expect(url.pathname).toBe(`/v1/attachments/${id}/content/Quarterly%20report.png`);
    const plain = await ctx.app.inject({ method: 'GET', url: `/v1/attachments/${id}/content`, headers: tenant.headers });
    const named = await ctx.app.inject({ method: 'GET', url: link.slice(PUBLIC_URL.length) });
    expect(named.statusCode, named.body).toBe(200);
    expect(named.rawPayload.equals(PNG_1X1)).toBe(true);
    for (const header of ['content-type', 'content-disposition', 'content-security-policy', 'x-content-type-options', 'content-length'])
      expect(named.headers[header], header).toBe(plain.headers[header]);

    // The name is not what is served: another file's name on this link still serves this file.
    const renamed = await ctx.app.inject({ method: 'GET', url: `${url.pathname.replace(/[^/]+$/, 'secret.png')}${url.search}` });
    expect(renamed.statusCode).toBe(200);
    expect(renamed.rawPayload.equals(PNG_1X1)).toBe(true);
    // This link's signature on another id, a tampered signature, or no signature: 401.
    const otherId = `/v1/attachments/${other.id}/content/secret.png${url.search}`;
    expect((await ctx.app.inject({ method: 'GET', url: otherId })).statusCode).toBe(401);
    const tampered = `${url.pathname}${url.search.replace(/signature=(.)/, (_m, c: string) => `signature=${c === '0' ? '1' : '0'}`)}`;
    expect((await ctx.app.inject({ method: 'GET', url: tampered })).statusCode).toBe(401);
    expect((await ctx.app.inject({ method: 'GET', url: url.pathname })).statusCode).toBe(401);
    // With a credential instead, the named path answers as the plain one: another workspace's → 404.
    expect((await ctx.app.inject({ method: 'GET', url: url.pathname, headers: tenant.headers })).statusCode).toBe(200);
    expect((await ctx.app.inject({ method: 'GET', url: url.pathname, headers: reader.headers })).statusCode).toBe(404);
    // A long name still makes a link the router matches.
    const long = signedLink({ publicUrl: PUBLIC_URL, key, now: new Date() }, id, { name: `${'ä'.repeat(200)}.png` });
    expect(new URL(long).pathname.endsWith('.png')).toBe(true);
    expect((await ctx.app.inject({ method: 'GET', url: long.slice(PUBLIC_URL.length) })).statusCode).toBe(200);
  });

  it('answers 409 while an attachment is pending or failed', async () => {
    const connection = await makeConnection(ctx.deps, tenant.workspace.id);
    const thread = await seedThread(ctx.deps, { id: connection.id, workspaceId: tenant.workspace.id });
    const message = await seedMessage(ctx.deps, thread, 'a photo');
    const pending = await ctx.deps.db
      .insertInto('attachments')
      .values({ workspace_id: tenant.workspace.id, message_id: message.id, kind: 'image', status: 'pending' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const res = await ctx.app.inject({ method: 'GET', url: `/v1/attachments/${pending.id}/content`, headers: tenant.headers });
    expect(res.statusCode).toBe(409);
    expect(res.json().error.code).toBe('attachment_not_stored');
    const failed = await ctx.deps.db
      .insertInto('attachments')
      .values({ workspace_id: tenant.workspace.id, message_id: message.id, kind: 'file', status: 'failed', error: 'too large: 9 bytes' })
      .returning('id')
      .executeTakeFirstOrThrow();
    expect((await ctx.app.inject({ method: 'GET', url: `/v1/attachments/${failed.id}/content`, headers: tenant.headers })).statusCode).toBe(
      409,
    );
    const resource = await ctx.app.inject({ method: 'GET', url: `/v1/attachments/${failed.id}`, headers: tenant.headers });
    expect(resource.json().data).toMatchObject({ status: 'failed', error: 'too large: 9 bytes', size: null, messageId: message.id });
  });
});
