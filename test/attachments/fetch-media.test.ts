import { createHmac, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import pg from 'pg';
import twilio from 'twilio';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { MediaFile } from '../../harness/fake-media.js';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { FETCH_MEDIA_QUEUE } from '../../src/attachments/fetch-media.enqueue.js';
import { insertPendingAttachments, type StoredSource } from '../../src/attachments/fetch-media.queries.js';
import { attachmentStorageKey, fetchMedia, MEDIA_RETRY_DELAYS_SECONDS } from '../../src/attachments/fetch-media.queue.js';
import { MediaClient } from '../../src/attachments/media-download.js';
import { CREDENTIALS_DO_NOT_OPEN } from '../../src/connections/connection-credentials.js';
import type { ResolveHost } from '../../src/net/address-guard.js';
import { REALTIME_CHANNEL } from '../../src/realtime/publish.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeOutboundMessage, makeTenant } from '../helpers/factories.js';
import { deliverSigned, fixture, postDelivery, waitFor } from '../helpers/webhooks.js';

const WA_SECRET = 'whatsapp-app-secret-0123456789';
const WA_TOKEN = 'whatsapp-access-token-0123456789';
const META_SECRET = 'messenger-app-secret-0123456789';
const WAHA_HMAC = 'waha-hmac-key-0123456789abcdef';
const WAHA_KEY = 'waha-api-key-0123456789';
const TWILIO_TOKEN = 'twilio-auth-token-0123456789abcdef';
const TWILIO_SID = 'ACXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX';
const POSTMARK_SECRET = 'postmark-basic-auth-secret-01';
const EMAIL_SECRET = 'email-webhook-secret-0123456789';
const MAILGUN_KEY = 'mailgun-signing-key-0123456789';
const BOT_TOKEN = '7000001:AAF-bot-token-0123456789abcdef';
const PUBLIC_URL = 'https://inbox.example.com';
const MAX_BYTES = 1024 * 1024;

/** A 1×1 PNG, as file-type reads it from its first bytes. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
/**
 * A PDF as writers make them: a binary comment line and a stream of bytes that are not UTF-8,
 * with NUL, and the UTF-8 of U+FFFD itself, which a file may hold like any other bytes.
 */
const BINARY_PDF = Buffer.concat([
  Buffer.from('%PDF-1.7\n%'),
  Buffer.from([0xe2, 0xe3, 0xcf, 0xd3]),
  Buffer.from('\n1 0 obj <</Length 12>> stream\n'),
  Buffer.from([0x00, 0xff, 0x80, 0xc3, 0x28, 0xa0, 0xa1, 0xfe, 0xef, 0xbf, 0xbd, 0x0d]),
  Buffer.from('\nendstream endobj\ntrailer <<>>\n%%EOF\n'),
]);
/** The start of a JFIF JPEG (what file-type reads) and bytes of no encoding after it. */
const JPEG = Buffer.concat([
  Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]),
  Buffer.from([0x80, 0x81, 0xfe, 0xfd, 0xc0, 0xc1, 0xf5, 0xf8, 0x0d, 0x0a, 0x2d, 0x2d, 0xff, 0xd9]),
]);

const fake = await startFakeProviders();
afterAll(() => fake.close());
const ctx = await useTestContext({
  workers: true,
  env: {
    INBOX_PUBLIC_URL: PUBLIC_URL,
    INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    INBOX_MAX_ATTACHMENT_BYTES: String(MAX_BYTES),
    INBOX_INTEGRATIONS: JSON.stringify({
      whatsapp: { webhookSecret: WA_SECRET, apiBaseUrl: fake.baseUrls.whatsapp, accessToken: WA_TOKEN },
      'social_one.native': { appSecret: META_SECRET },
      'whatsapp_session.waha': { webhookSecret: WAHA_HMAC, apiBaseUrl: fake.baseUrls.whatsapp_session, accessToken: WAHA_KEY },
      'sms.twilio': { authToken: TWILIO_TOKEN, accountSid: TWILIO_SID, apiBaseUrl: fake.baseUrls.sms },
      'email.postmark': { webhookSecret: POSTMARK_SECRET },
      email: { webhookSecret: EMAIL_SECRET },
      'email.mailgun': { webhookSecret: MAILGUN_KEY },
      telegram: { apiBaseUrl: fake.baseUrls.telegram },
    }),
  },
});
const tenant = await makeTenant(ctx.deps);
const ws = tenant.workspace.id;
const phone = await makeConnection(ctx.deps, ws, { integrationKey: 'whatsapp', externalAccountId: '106540352242922' });
await makeConnection(ctx.deps, ws, { integrationKey: 'social_one.native', externalAccountId: '1126357274156702' });
const waha = await makeConnection(ctx.deps, ws, { integrationKey: 'whatsapp_session.waha', externalAccountId: 'default' });
await makeConnection(ctx.deps, ws, { integrationKey: 'sms.twilio', externalAccountId: '+15557122661' });
await makeConnection(ctx.deps, ws, { integrationKey: 'email.postmark', externalAccountId: 'yourhash+samplehash@inbound.postmarkapp.com' });
await makeConnection(ctx.deps, ws, { integrationKey: 'email', externalAccountId: 'support@acme.test' });
const mailgun = await makeConnection(ctx.deps, ws, { integrationKey: 'email.mailgun', externalAccountId: 'support@acme.test' });
const bot = await makeConnection(ctx.deps, ws, {
  integrationKey: 'telegram',
  externalAccountId: '7000001',
  credentials: { accessToken: BOT_TOKEN },
});
beforeEach(() => fake.reset());

const id = () => randomBytes(6).toString('hex');

const post = (key: string, body: string | Buffer, headers: Record<string, string>, contentType?: string) =>
  postDelivery(ctx, key, body, headers, contentType);

/** A WhatsApp Cloud fixture with its message id and media id replaced, posted signed. */
async function postWhatsApp(name: string, mediaId: string, media: Record<string, unknown> = {}): Promise<string> {
  const body = JSON.parse(fixture('whatsapp', name));
  const m = body.entry[0].changes[0].value.messages[0];
  m.id = `wamid.${id()}`;
  m[m.type] = { ...m[m.type], ...media, id: mediaId };
  const res = await deliverSigned(ctx, 'whatsapp', body);
  expect(res.statusCode, res.body).toBe(200);
  return m.id;
}

async function postMessenger(url: string): Promise<string> {
  const body = JSON.parse(fixture('social_one.native', 'message-image.json'));
  const m = body.entry[0].messaging[0].message;
  m.mid = `m_${id()}`;
  m.attachments[0].payload.url = url;
  const res = await deliverSigned(ctx, 'social_one.native', body);
  expect(res.statusCode, res.body).toBe(200);
  return m.mid;
}

/** A Mailgun inbound mail with `files` as `attachment-N` parts, signed as Mailgun signs (timestamp + token), posted. */
async function postMailgun(files: { bytes: Buffer; type: string; name: string }[]): Promise<{ messageId: string; body: Buffer }> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const token = randomBytes(25).toString('hex');
  const signature = createHmac('sha256', MAILGUN_KEY).update(`${timestamp}${token}`).digest('hex');
  const params = new URLSearchParams(fixture('email.mailgun', 'inbound.form'));
  const messageId = `<${id()}@example.com>`;
  for (const [k, v] of Object.entries({ timestamp, token, signature, 'Message-Id': messageId })) params.set(k, v);
  params.delete('In-Reply-To');
  params.delete('References');
  const form = new FormData();
  for (const [k, v] of params) form.append(k, v);
  for (const [i, f] of files.entries()) form.append(`attachment-${i + 1}`, new Blob([f.bytes], { type: f.type }), f.name);
  const res = new Response(form);
  const body = Buffer.from(await res.arrayBuffer());
  await post('email.mailgun', body, {}, res.headers.get('content-type')!);
  return { messageId, body };
}

const message = (externalId: string) =>
  waitFor(() => ctx.deps.db.selectFrom('messages').selectAll().where('external_id', '=', externalId).executeTakeFirst(), externalId);

const attachmentsOf = (messageId: number) =>
  ctx.deps.db.selectFrom('attachments').selectAll().where('message_id', '=', messageId).orderBy('id').execute();

/** The message's attachments once none is pending any more. */
async function settled(externalId: string) {
  const m = await message(externalId);
  return waitFor(async () => {
    const rows = await attachmentsOf(m.id);
    return rows.length > 0 && rows.every((a) => a.status !== 'pending') && rows;
  }, `attachments of ${externalId}`);
}

async function storedBytes(key: string | null): Promise<Buffer> {
  const stream = await ctx.deps.storage.get(key!);
  const chunks: Buffer[] = [];
  for await (const c of stream!) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** A pending attachment with no job: for tests that run the download themselves, with their own client. */
async function pendingAttachment(source: StoredSource, connection: { id: number } = phone) {
  const m = await makeOutboundMessage(ctx.deps, connection, `direct-${id()}`);
  const [attachmentId] = await insertPendingAttachments(
    ctx.deps.db,
    [{ workspaceId: ws, messageId: m.id, kind: 'image', contentType: undefined, filename: undefined, source }],
    new Date(),
  );
  return attachmentId!;
}

const attachment = (attachmentId: number) =>
  ctx.deps.db.selectFrom('attachments').selectAll().where('id', '=', attachmentId).executeTakeFirstOrThrow();

/** The fetch-media jobs queued for an attachment after its first: its retries. */
const queuedRetries = async (attachmentId: number) =>
  (
    await sql<{ data: { attachmentId: number; attempt: number }; start_after: Date }>`
      SELECT data, start_after FROM pgboss.job
      WHERE name = ${FETCH_MEDIA_QUEUE} AND (data->>'attachmentId')::bigint = ${attachmentId} AND (data->>'attempt')::int > 1`.execute(
      ctx.deps.db,
    )
  ).rows;

function client(options: { allowPrivate?: boolean; resolve?: ResolveHost; timeoutMs?: number } = {}) {
  const c = new MediaClient({
    allowPrivate: options.allowPrivate ?? true,
    resolve: options.resolve ?? (async () => [{ address: '127.0.0.1', family: 4 }]),
    timeoutMs: options.timeoutMs ?? 10_000,
    maxBytes: MAX_BYTES,
  });
  afterAll(() => c.close());
  return c;
}

const png = (over: Partial<MediaFile> = {}): MediaFile => ({ bytes: PNG, contentType: 'image/png', ...over });

describe('per channel, end to end: a signed delivery, then the job stores the bytes the provider served', () => {
  it('whatsapp image: the media id is described, then downloaded, both with Bearer; typed from the bytes; announced', async () => {
    const listener = new pg.Client({ connectionString: ctx.database.url });
    await listener.connect();
    const events: { type: string; data: Record<string, unknown> }[] = [];
    listener.on('notification', (n) => events.push(JSON.parse(n.payload!)));
    await listener.query(`LISTEN ${REALTIME_CHANNEL}`);
    const file = fake.media.whatsapp(png(), { token: WA_TOKEN });
    const externalId = await postWhatsApp('image-message.json', file.mediaId!);
    const m = await message(externalId);
    expect(m.text).toBe('This one');
    const [a] = await settled(externalId);
    // Agents learn the file is there: the message is announced again once it is stored.
    await waitFor(async () => events.some((e) => e.type === 'message.updated' && e.data.id === m.id), 'message.updated');
    await listener.end();
    expect(a).toMatchObject({ status: 'stored', kind: 'image', content_type: 'image/png', size: PNG.length, error: null });
    expect(await storedBytes(a!.storage_key)).toEqual(PNG);
    expect(fake.media.requests.map((r) => [r.path, r.headers.authorization, r.status])).toEqual([
      [`/graph/v23.0/${file.mediaId}`, `Bearer ${WA_TOKEN}`, 200],
      [`/whatsapp-cdn/${file.mediaId}`, `Bearer ${WA_TOKEN}`, 200],
    ]);
  });

  it('whatsapp document: a PNG declared as application/pdf is stored as image/png, a file with its filename', async () => {
    const file = fake.media.whatsapp(png({ contentType: 'application/pdf' }), { token: WA_TOKEN });
    const [a] = await settled(await postWhatsApp('document-message.json', file.mediaId!));
    expect(a).toMatchObject({ status: 'stored', kind: 'file', filename: 'invoice-march.pdf', content_type: 'image/png' });
  });

  it("whatsapp document: the sender's filename is kept as an upload's is, the last segment, no control characters, 255 at most", async () => {
    for (const [sent, kept] of [
      ['..\\..\\reports/2026/März\u0007 report.pdf', 'März report.pdf'],
      [`${'a'.repeat(300)}.pdf`, 'a'.repeat(255)],
      ['../', null],
    ] as const) {
      const file = fake.media.whatsapp(png({ contentType: 'application/pdf' }), { token: WA_TOKEN });
      const [a] = await settled(await postWhatsApp('document-message.json', file.mediaId!, { filename: sent }));
      expect(a).toMatchObject({ status: 'stored', kind: 'file', filename: kept });
    }
  });

  it('whatsapp voice note, video and sticker: bytes that show no type keep the declared one, without its parameters', async () => {
    const voice = randomBytes(3000);
    for (const [name, bytes, kind, type] of [
      ['audio-message.json', voice, 'audio', 'audio/ogg'],
      ['video-message.json', PDF, 'video', 'application/pdf'],
      ['sticker-message.json', PNG, 'sticker', 'image/png'],
    ] as const) {
      const file = fake.media.whatsapp({ bytes, contentType: 'application/octet-stream' }, { token: WA_TOKEN });
      const [a] = await settled(await postWhatsApp(name, file.mediaId!));
      expect(a, name).toMatchObject({ status: 'stored', kind, content_type: type, size: bytes.length });
      expect(await storedBytes(a!.storage_key)).toEqual(bytes);
    }
  });

  it('messenger: the CDN URL is fetched without credentials', async () => {
    const file = fake.media.meta(png());
    const [a] = await settled(await postMessenger(file.url));
    expect(a).toMatchObject({ status: 'stored', kind: 'image', content_type: 'image/png' });
    expect(fake.media.requests[0]!.headers.authorization).toBeUndefined();
  });

  it('waha: payload.media.url with X-Api-Key; the caption is the text', async () => {
    const file = fake.media.waha({ bytes: PDF, contentType: 'application/pdf' }, { session: 'default', apiKey: WAHA_KEY });
    const body = JSON.parse(fixture('whatsapp_session.waha', 'message-image.json'));
    body.payload.id = `false_11111111111@c.us_${id()}`;
    body.payload.media = { url: file.url, mimetype: 'application/pdf', filename: 'invoice.pdf', error: null };
    const text = JSON.stringify(body);
    const hmac = createHmac('sha512', WAHA_HMAC).update(text).digest('hex');
    await post('whatsapp_session.waha', text, { 'x-webhook-hmac': hmac, 'x-webhook-hmac-algorithm': 'sha512' });
    expect((await message(body.payload.id)).text).toBe('Look at this');
    const [a] = await settled(body.payload.id);
    expect(a).toMatchObject({ status: 'stored', kind: 'file', filename: 'invoice.pdf', content_type: 'application/pdf' });
    expect(await storedBytes(a!.storage_key)).toEqual(PDF);
    expect(fake.media.requests[0]!.headers['x-api-key']).toBe(WAHA_KEY);
  });

  it('twilio: MediaUrl0 and MediaUrl1 with basic auth accountSid:authToken', async () => {
    const image = fake.media.twilio(png({ contentType: 'image/jpeg' }), { accountSid: TWILIO_SID, authToken: TWILIO_TOKEN });
    const doc = fake.media.twilio({ bytes: PDF, contentType: 'application/pdf' }, { accountSid: TWILIO_SID, authToken: TWILIO_TOKEN });
    const sid = `MM${id()}`;
    const params = new URLSearchParams(fixture('sms.twilio', 'inbound-mms.form'));
    for (const name of ['MessageSid', 'SmsSid', 'SmsMessageSid']) params.set(name, sid);
    params.set('MediaUrl0', image.url);
    params.set('MediaUrl1', doc.url);
    const form = params.toString();
    const signature = twilio.getExpectedTwilioSignature(TWILIO_TOKEN, `${PUBLIC_URL}/webhooks/sms.twilio`, Object.fromEntries(params));
    await post('sms.twilio', form, { 'x-twilio-signature': signature }, 'application/x-www-form-urlencoded');
    const rows = await settled(sid);
    expect(rows.map((a) => [a.status, a.kind, a.content_type])).toEqual([
      ['stored', 'image', 'image/png'],
      ['stored', 'file', 'application/pdf'],
    ]);
    expect(await storedBytes(rows[1]!.storage_key)).toEqual(PDF);
  });

  it('postmark: Attachments[].Content, read again from the stored delivery', async () => {
    const body = JSON.parse(fixture('email.postmark', 'inbound.json'));
    body.MessageID = `pm-${id()}`;
    body.Attachments.push({ Name: 'photo.bin', Content: PNG.toString('base64'), ContentType: 'application/octet-stream' });
    const auth = `Basic ${Buffer.from(`postmark:${POSTMARK_SECRET}`).toString('base64')}`;
    await post('email.postmark', JSON.stringify(body), { authorization: auth });
    const rows = await settled(body.MessageID);
    expect(rows.map((a) => [a.status, a.filename, a.content_type])).toEqual([
      ['stored', 'test.txt', 'text/plain'],
      ['stored', 'photo.bin', 'image/png'],
    ]);
    expect((await storedBytes(rows[0]!.storage_key)).toString()).toBe('This is attachment contents, base-64 encoded.');
    expect(await storedBytes(rows[1]!.storage_key)).toEqual(PNG);
  });

  it('neutral e-mail: attachments[].content of the mail this message is, when a body holds several', async () => {
    const mail = (messageId: string, bytes: Buffer) => ({
      type: 'inbound',
      messageId,
      from: { email: 'dana@example.org' },
      to: 'support@acme.test',
      subject: 'Files',
      text: 'See attached.',
      attachments: [{ filename: 'a.pdf', contentType: 'application/pdf', content: bytes.toString('base64') }],
    });
    const first = `<${id()}@example.org>`;
    const second = `<${id()}@example.org>`;
    await post('email', JSON.stringify({ events: [mail(first, PDF), mail(second, PNG)] }), { 'x-vendor-auth': EMAIL_SECRET });
    expect(await storedBytes((await settled(first))[0]!.storage_key)).toEqual(PDF);
    const [b] = await settled(second);
    expect(b).toMatchObject({ content_type: 'image/png', filename: 'a.pdf' });
    expect(await storedBytes(b!.storage_key)).toEqual(PNG);
  });
});

describe('files of one message fetched side by side', () => {
  it('the last message.updated shows every file settled, however the downloads interleave', async () => {
    // Four files: one batch of the fetch-media queue, downloaded and settled at once.
    const ids = Array.from({ length: 3 }, () => `<${id()}@example.org>`);
    const mail = (messageId: string) => ({
      type: 'inbound',
      messageId,
      from: { email: 'eve@example.org' },
      to: 'support@acme.test',
      subject: 'Four files',
      text: 'See attached.',
      attachments: [0, 1, 2, 3].map((i) => ({
        filename: `part-${i}.txt`,
        contentType: 'text/plain',
        content: Buffer.from(`part ${i} `.repeat(50 + i)).toString('base64'),
      })),
    });
    await post('email', JSON.stringify({ events: ids.map(mail) }), { 'x-vendor-auth': EMAIL_SECRET });
    for (const externalId of ids) {
      const { id: messageId } = await message(externalId);
      await settled(externalId);
      // The event log keeps every message.updated as endpoints received it, oldest first.
      const last = await waitFor(async () => {
        const res = await ctx.app.inject({ method: 'GET', url: '/v1/events?types=message.updated&limit=100', headers: tenant.headers });
        expect(res.statusCode, res.body).toBe(200);
        const mine = (res.json().data as { data: { id: number; attachments: { status: string }[] } }[]).filter(
          (e) => e.data.id === messageId,
        );
        return mine.length === 4 && mine.at(-1)!.data;
      }, `the four message.updated of ${externalId}`);
      expect(last.attachments.map((a) => a.status)).toEqual(['stored', 'stored', 'stored', 'stored']);
    }
  });
});

describe('files the channel names by id, and files inside a form body', () => {
  it("telegram: getFile with the bot's token, then the file", async () => {
    const file = fake.media.telegram({ bytes: PDF, contentType: 'application/pdf' }, { token: BOT_TOKEN });
    const attachmentId = await pendingAttachment({ from: 'telegram_file', fileId: file.fileId! }, bot);
    await fetchMedia(ctx.deps, client(), { attachmentId, attempt: 1 });
    const a = await attachment(attachmentId);
    expect(a).toMatchObject({ status: 'stored', content_type: 'application/pdf', size: PDF.length });
    expect(await storedBytes(a.storage_key)).toEqual(PDF);
    expect(fake.media.requests.map((r) => r.path)).toEqual([`/telegram/bot${BOT_TOKEN}/getFile`, new URL(file.url).pathname]);
  });

  it('mailgun: text and binary parts (a PDF, a JPEG, a PNG) are stored byte for byte, typed from their bytes', async () => {
    const csv = 'name,amount\nhinge,12.50\n';
    const { messageId, body } = await postMailgun([
      { bytes: Buffer.from(csv), type: 'text/csv', name: 'order.csv' },
      { bytes: BINARY_PDF, type: 'application/octet-stream', name: 'invoice.pdf' },
      { bytes: JPEG, type: 'image/jpeg', name: 'site.jpg' },
      { bytes: PNG, type: 'application/octet-stream', name: 'photo.bin' },
    ]);
    expect(body.toString('utf8')).toContain('\uFFFD'); // the premise: the body's text cannot hold these files
    const rows = await settled(messageId);
    expect(rows.map((a) => [a.status, a.filename, a.content_type, a.error])).toEqual([
      ['stored', 'order.csv', 'text/csv', null],
      ['stored', 'invoice.pdf', 'application/pdf', null],
      ['stored', 'site.jpg', 'image/jpeg', null],
      ['stored', 'photo.bin', 'image/png', null],
    ]);
    expect((await storedBytes(rows[0]!.storage_key)).toString()).toBe(csv);
    expect(await storedBytes(rows[1]!.storage_key)).toEqual(BINARY_PDF);
    expect(await storedBytes(rows[2]!.storage_key)).toEqual(JPEG);
    expect(await storedBytes(rows[3]!.storage_key)).toEqual(PNG);
    expect(rows.map((a) => a.size)).toEqual([csv.length, BINARY_PDF.length, JPEG.length, PNG.length]);
  });

  it('mailgun, a delivery stored before its bytes were kept: a text part is read from the text, a binary part fails and says why', async () => {
    const csv = 'sku,qty\nbolt,3\n';
    const { messageId } = await postMailgun([
      { bytes: Buffer.from(csv), type: 'text/csv', name: 'order.csv' },
      { bytes: BINARY_PDF, type: 'application/pdf', name: 'invoice.pdf' },
    ]);
    const [first] = await settled(messageId);
    const source = first!.source as StoredSource;
    // As a row written before raw_bytes existed: only the text, which lost the PDF's bytes.
    await ctx.deps.db.updateTable('webhook_inbox').set({ raw_bytes: null }).where('id', '=', source.deliveryId!).execute();
    const fromText = await pendingAttachment({ from: 'delivery', index: 0, deliveryId: source.deliveryId }, mailgun);
    const lost = await pendingAttachment({ from: 'delivery', index: 1, deliveryId: source.deliveryId }, mailgun);
    await fetchMedia(ctx.deps, client(), { attachmentId: fromText, attempt: 1 });
    await fetchMedia(ctx.deps, client(), { attachmentId: lost, attempt: 1 });
    const text = await attachment(fromText);
    expect(text.status).toBe('stored');
    expect((await storedBytes(text.storage_key)).toString()).toBe(csv);
    const binary = await attachment(lost);
    expect(binary.status).toBe('failed');
    expect(binary.error).toMatch(/byte for byte/);
  });
});

describe('limits and faults', () => {
  it('too large, streamed: failed at once ("too large"), no retry, and the download stopped at the limit', async () => {
    const size = 64 * MAX_BYTES;
    const file = fake.media.meta({ bytes: { size }, contentType: 'video/mp4', contentLength: false });
    const [a] = await settled(await postMessenger(file.url));
    expect(a).toMatchObject({ status: 'failed', error: `too large: more than ${MAX_BYTES} bytes`, attempt_count: 1, storage_key: null });
    // What the socket took before the reader stopped: the limit plus the buffers between, far from the whole file.
    await waitFor(async () => fake.media.sent(file.url) > 0, 'bytes sent');
    expect(fake.media.sent(file.url)).toBeLessThan(size / 4);
    expect(await queuedRetries(a!.id)).toEqual([]);
    const chunks = await ctx.deps.db
      .selectFrom('attachment_chunks')
      .select('seq')
      .where('storage_key', '=', `attachments/${a!.id}`)
      .execute();
    expect(chunks).toEqual([]);
  });

  it('too large by content-length or by WhatsApp file_size: failed before a byte is read', async () => {
    const big = fake.media.meta({ bytes: { size: 8 * MAX_BYTES }, contentType: 'video/mp4' });
    const [a] = await settled(await postMessenger(big.url));
    expect(a).toMatchObject({ status: 'failed', error: `too large: ${8 * MAX_BYTES} bytes` });
    const wa = fake.media.whatsapp({ bytes: { size: 2 * MAX_BYTES }, contentType: 'video/mp4' }, { token: WA_TOKEN });
    const [b] = await settled(await postWhatsApp('video-message.json', wa.mediaId!));
    expect(b).toMatchObject({ status: 'failed', error: `too large: ${2 * MAX_BYTES} bytes` });
    expect(fake.media.requests.filter((r) => r.path.startsWith('/whatsapp-cdn/'))).toEqual([]);
  });

  it('404: retried after 60 s, 5 min and 15 min, then failed with the reason; the message and its text stay', async () => {
    const file = fake.media.meta(png({ behaviour: 'not-found' }));
    const before = Date.now();
    const externalId = await postMessenger(file.url);
    const m = await message(externalId);
    const first = await waitFor(async () => {
      const [row] = await attachmentsOf(m.id);
      return row?.attempt_count === 1 && row;
    }, 'the first attempt');
    const [retry] = await queuedRetries(first.id);
    const [a] = await attachmentsOf(m.id);
    expect(retry!.data).toEqual({ attachmentId: a!.id, attempt: 2 });
    const due = new Date(retry!.start_after).getTime();
    expect(due).toBeGreaterThanOrEqual(before + 60_000 - 1000);
    expect(due).toBeLessThanOrEqual(Date.now() + 60_000 + 1000);
    expect(a).toMatchObject({ status: 'pending', attempt_count: 1 });
    expect(MEDIA_RETRY_DELAYS_SECONDS).toEqual([60, 300, 900]);

    // The later attempts, run here rather than waited for.
    const c = client();
    for (const attempt of [2, 3]) {
      await fetchMedia(ctx.deps, c, { attachmentId: a!.id, attempt });
      expect(await attachment(a!.id)).toMatchObject({ status: 'pending', attempt_count: attempt });
    }
    await fetchMedia(ctx.deps, c, { attachmentId: a!.id, attempt: 4 });
    const failed = await attachment(a!.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/^gave up after 4 attempts: 127\.0\.0\.1:\d+ answered HTTP 404$/);
    expect(await message(externalId)).toMatchObject({ id: m.id, text: '' });
  });

  it('keeps no bytes of a file whose row went while it was downloaded (an erasure, a deleted conversation)', async () => {
    let attachmentId = 0;
    // The row goes, as an erasure takes it, while the provider is answering.
    const server = createServer((_req, res) => {
      void ctx.deps.db
        .deleteFrom('attachments')
        .where('id', '=', attachmentId)
        .execute()
        .then(() => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo;
    attachmentId = await pendingAttachment({ from: 'url', url: `http://127.0.0.1:${port}/photo.png`, auth: 'none' });
    await fetchMedia(ctx.deps, client(), { attachmentId, attempt: 1 });
    expect(await ctx.deps.db.selectFrom('attachments').select('id').where('id', '=', attachmentId).execute()).toEqual([]);
    expect(await ctx.deps.storage.get(attachmentStorageKey(attachmentId))).toBeUndefined();
  });

  it("fails at once, clearly and without retries, when the connection's sealed credentials do not open", async () => {
    const sealed = await makeConnection(ctx.deps, ws, {
      integrationKey: 'whatsapp',
      externalAccountId: `sealed-${id()}`,
      credentials: { accessToken: WA_TOKEN },
    });
    // The sealed value is one that does not open: another key's, or altered.
    await ctx.deps.db
      .updateTable('connections')
      .set({ credentials_sealed: Buffer.from(`01${'00'.repeat(40)}`, 'hex') })
      .where('id', '=', sealed.id)
      .execute();
    const file = fake.media.meta(png());
    const attachmentId = await pendingAttachment({ from: 'url', url: file.url, auth: 'none' }, sealed);
    await fetchMedia(ctx.deps, client(), { attachmentId, attempt: 1 });
    expect(await attachment(attachmentId)).toMatchObject({ status: 'failed', error: CREDENTIALS_DO_NOT_OPEN });
    expect(await queuedRetries(attachmentId)).toEqual([]);
  });

  it('500 and a provider that hangs are retried', async () => {
    const c = client({ timeoutMs: 200 });
    for (const behaviour of ['server-error', 'hang'] as const) {
      const file = fake.media.meta(png({ behaviour }));
      const attachmentId = await pendingAttachment({ from: 'url', url: file.url, auth: 'none' });
      await fetchMedia(ctx.deps, c, { attachmentId, attempt: 1 });
      expect(await attachment(attachmentId), behaviour).toMatchObject({ status: 'pending', attempt_count: 1 });
      expect((await queuedRetries(attachmentId)).map((j) => j.data)).toEqual([{ attachmentId, attempt: 2 }]);
    }
  });

  it('a loopback or private address is refused without a request, and never retried', async () => {
    const file = fake.media.meta(png());
    const guarded = client({ allowPrivate: false, resolve: async () => [{ address: '10.1.2.3', family: 4 }] });
    const literal = await pendingAttachment({ from: 'url', url: file.url, auth: 'none' });
    await fetchMedia(ctx.deps, guarded, { attachmentId: literal, attempt: 1 });
    expect(await attachment(literal)).toMatchObject({ status: 'failed', error: 'refused: 127.0.0.1 is a loopback address' });
    const named = await pendingAttachment({ from: 'url', url: file.url.replace('127.0.0.1', 'media.internal.test'), auth: 'none' });
    await fetchMedia(ctx.deps, guarded, { attachmentId: named, attempt: 1 });
    expect(await attachment(named)).toMatchObject({
      status: 'failed',
      error: 'refused: media.internal.test resolves to a private address',
    });
    expect(fake.media.requests).toEqual([]);
  });

  it('a redirect is followed through the guard (each hop resolved and checked), without the credentials, at most 3 times', async () => {
    const resolved: string[] = [];
    const c = client({
      resolve: async (host) => {
        resolved.push(host);
        return [{ address: '127.0.0.1', family: 4 }];
      },
    });
    const target = fake.media.meta(png());
    const onCdn = target.url.replace('127.0.0.1', 'cdn.test');
    const first = fake.media.waha(png({ behaviour: { redirect: onCdn } }), { session: 'default', apiKey: WAHA_KEY });
    const attachmentId = await pendingAttachment({ from: 'url', url: first.url, auth: 'api_key' }, waha);
    await fetchMedia(ctx.deps, c, { attachmentId, attempt: 1 });
    expect(await attachment(attachmentId)).toMatchObject({ status: 'stored', content_type: 'image/png' });
    expect(resolved).toEqual(['cdn.test']);
    expect(fake.media.requests.map((r) => r.headers['x-api-key'])).toEqual([WAHA_KEY, undefined]);

    // Four hops: refused, not retried.
    let url = fake.media.meta(png()).url;
    for (let i = 0; i < 4; i++) url = fake.media.meta(png({ behaviour: { redirect: url } })).url;
    const chained = await pendingAttachment({ from: 'url', url, auth: 'none' });
    await fetchMedia(ctx.deps, c, { attachmentId: chained, attempt: 1 });
    expect(await attachment(chained)).toMatchObject({ status: 'failed', error: 'more than 3 redirects' });
  });

  it('the cloud metadata address is refused like any link-local one', async () => {
    const c = client({ allowPrivate: false, resolve: async () => [{ address: '10.0.0.7', family: 4 }] });
    const attachmentId = await pendingAttachment({ from: 'url', url: 'http://169.254.169.254/latest/meta-data/', auth: 'none' });
    await fetchMedia(ctx.deps, c, { attachmentId, attempt: 1 });
    expect(await attachment(attachmentId)).toMatchObject({ status: 'failed', error: 'refused: 169.254.169.254 is a link-local address' });
  });

  it("a provider's credentials go only to its own API host", async () => {
    const elsewhere = fake.media.meta(png()).url.replace('127.0.0.1', 'localhost');
    // WAHA's apiBaseUrl is on 127.0.0.1; the URL names the same server as localhost, another origin.
    const attachmentId = await pendingAttachment({ from: 'url', url: elsewhere, auth: 'api_key' }, waha);
    await fetchMedia(ctx.deps, client(), { attachmentId, attempt: 1 });
    expect((await attachment(attachmentId)).error).toMatch(/not on whatsapp_session\.waha's API host/);
    expect(fake.media.requests).toEqual([]);
  });

  it('ingestion does not wait for downloads: a message is stored while its media hangs', async () => {
    const file = fake.media.meta(png({ behaviour: 'hang' }));
    const externalId = await postMessenger(file.url);
    const m = await message(externalId);
    await waitFor(async () => fake.media.requests.length > 0, 'the download to start');
    const [a] = await attachmentsOf(m.id);
    expect(a).toMatchObject({ status: 'pending' });
    // Another message gets in while that download is still in flight.
    const next = fake.media.meta(png());
    expect((await settled(await postMessenger(next.url)))[0]).toMatchObject({ status: 'stored' });
    expect((await attachment(a!.id)).status).toBe('pending');
    fake.media.reset(); // lets the hanging download go, so the worker stops promptly
  });
});
