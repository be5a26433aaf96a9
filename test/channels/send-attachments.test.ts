import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { type MultipartBody, startFakeProviders } from '../../harness/fake-providers.js';
import { startSmtpServer } from '../../harness/smtp.js';
import type { Deps } from '../../src/deps.js';
import { useTestContext } from '../helpers/app.js';
import { seedReplyThread, someBytes, startLinkServer, storeUpload } from '../helpers/attachments.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { makeWidget, openSocket, startVisitor } from '../helpers/livechat.js';
import { waitFor } from '../helpers/webhooks.js';

// Each channel's send of a reply with a file, end to end: the route, the send-message worker,
// the adapter, and the fake provider checking what it received (docs/attachments.md, "Outbound").
let deps: Deps | undefined;
const links = await startLinkServer(() => deps!);
const fake = await startFakeProviders();
const smtp = await startSmtpServer();
afterAll(() => Promise.all([fake.close(), smtp.close(), links.close()]));
const TOKEN = 'EAAG-send-attachments-token-0123456789';
const SID = 'AC0123456789abcdef0123456789abcdef';
const ctx = await useTestContext({
  workers: true,
  env: {
    INBOX_PUBLIC_URL: links.url,
    INBOX_ALLOW_PRIVATE_SMTP: 'true',
    INBOX_INTEGRATIONS: JSON.stringify({
      whatsapp: { apiBaseUrl: fake.baseUrls.whatsapp },
      'social_one.native': { apiBaseUrl: fake.baseUrls.social },
      'social_two.native': { apiBaseUrl: fake.baseUrls.social },
      whatsapp_session: { apiBaseUrl: fake.baseUrls.whatsapp_session, webhookSecret: 'waha-webhook-secret-0123456789' },
      'whatsapp_session.waha': { apiBaseUrl: fake.baseUrls.whatsapp_session },
      sms: { apiBaseUrl: fake.baseUrls.sms },
      'sms.twilio': { apiBaseUrl: fake.baseUrls.sms, authToken: TOKEN, accountSid: SID },
      telegram: { apiBaseUrl: fake.baseUrls.telegram },
    }),
  },
});
deps = ctx.deps;
const wsBase = (await ctx.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');
const tenant = await makeTenant(ctx.deps);
const workspaceId = tenant.workspace.id;

beforeEach(() => {
  fake.reset();
  smtp.reset();
});

let accounts = 0;
/** A connection of `integrationKey` and a thread of a contact with `handle` on it. */
async function threadOn(integrationKey: string, handle: string, credentials: Record<string, string> = { accessToken: TOKEN }) {
  const connection = await makeConnection(ctx.deps, workspaceId, {
    integrationKey,
    externalAccountId: integrationKey.startsWith('sms') ? `+1500555${String(accounts++).padStart(4, '0')}` : `acct-${accounts++}`,
    credentials,
  });
  const thread = await seedReplyThread(ctx.deps, { id: connection.id, workspaceId, integrationKey }, handle);
  return { connection, thread };
}

const upload = (bytes: Buffer, contentType: string, filename: string, kind: 'image' | 'audio' | 'video' | 'sticker' | 'file') =>
  storeUpload(ctx.deps, workspaceId, { bytes, contentType, filename, kind });

async function replySent(threadId: number, body: Record<string, unknown>) {
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/v1/threads/${threadId}/messages`,
    headers: { ...tenant.headers, 'content-type': 'application/json' },
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(202);
  const id = res.json().data.id as number;
  const row = await waitFor(async () => {
    const m = await ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    return m.status !== 'queued' ? m : undefined;
  }, `message ${id} to leave queued`);
  expect(row.status, row.error ?? '').toBe('sent');
  return row;
}

const answerOf = (i: number) => fake.requests[i]!.response!.body as Record<string, unknown>;

describe('replies with a file, channel by channel', () => {
  it('WhatsApp Cloud uploads the file to /media, then sends it by media id with the text as caption', async () => {
    const { thread } = await threadOn('whatsapp', '4915100000101');
    const bytes = someBytes(300_000);
    const id = await upload(bytes, 'image/png', 'broken-part.png', 'image');
    const sent = await replySent(thread.id, { text: 'Is this the part?', attachmentIds: [id] });
    expect(fake.requests.map((r) => r.path)).toEqual([`/graph/v23.0/acct-0/media`, `/graph/v23.0/acct-0/messages`]);
    const form = fake.requests[0]!.parsed as MultipartBody;
    expect(fake.requests[0]!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(form.fields).toEqual({ messaging_product: 'whatsapp', type: 'image/png' });
    expect(form.files).toHaveLength(1);
    expect(form.files[0]).toMatchObject({ field: 'file', filename: 'broken-part.png', contentType: 'image/png' });
    expect(form.files[0]!.bytes.equals(bytes)).toBe(true);
    const mediaId = answerOf(0).id as string;
    expect(fake.uploads.get(mediaId)!.bytes.equals(bytes)).toBe(true);
    expect(fake.requests[1]!.parsed).toEqual({
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '4915100000101',
      type: 'image',
      image: { id: mediaId, caption: 'Is this the part?' },
    });
    expect(sent.external_id).toBe((answerOf(1).messages as { id: string }[])[0]!.id);
  });

  it('WhatsApp Cloud sends a file as a document with its filename; audio goes after its text, which it cannot carry', async () => {
    const { thread } = await threadOn('whatsapp', '4915100000102');
    const pdf = Buffer.from('%PDF-1.7\n invoice 42 \n%%EOF');
    await replySent(thread.id, { text: 'Your invoice', attachmentIds: [await upload(pdf, 'application/pdf', 'invoice-42.pdf', 'file')] });
    expect(fake.requests[1]!.parsed).toMatchObject({
      type: 'document',
      document: { id: answerOf(0).id, caption: 'Your invoice', filename: 'invoice-42.pdf' },
    });
    fake.reset();
    const voice = someBytes(2048);
    const sent = await replySent(thread.id, { text: 'Listen:', attachmentIds: [await upload(voice, 'audio/ogg', 'note.ogg', 'audio')] });
    expect(fake.requests.map((r) => r.path.split('/').pop())).toEqual(['media', 'messages', 'messages']);
    expect(fake.requests[1]!.parsed).toMatchObject({ type: 'text', text: { body: 'Listen:' } });
    expect(fake.requests[2]!.parsed).toMatchObject({ type: 'audio', audio: { id: answerOf(0).id } });
    expect((fake.requests[2]!.parsed as { audio: object }).audio).not.toHaveProperty('caption');
    // The reply's id is the file's message, the last one sent.
    expect(sent.external_id).toBe((answerOf(2).messages as { id: string }[])[0]!.id);
  });

  it('WhatsApp Cloud sends a WebP sticker as a sticker after its text, and any other sticker as a captioned image', async () => {
    const { thread } = await threadOn('whatsapp', '4915100000103');
    await replySent(thread.id, { text: 'Thumbs up', attachmentIds: [await upload(someBytes(), 'image/webp', 'ok.webp', 'sticker')] });
    expect(fake.requests.map((r) => (r.parsed as { type?: string }).type)).toEqual([undefined, 'text', 'sticker']);
    expect((fake.requests[2]!.parsed as { sticker: object }).sticker).toEqual({ id: answerOf(0).id });
    fake.reset();
    await replySent(thread.id, { text: 'Thumbs up', attachmentIds: [await upload(someBytes(), 'image/png', 'ok.png', 'sticker')] });
    expect(fake.requests).toHaveLength(2);
    expect(fake.requests[1]!.parsed).toMatchObject({ type: 'image', image: { id: answerOf(0).id, caption: 'Thumbs up' } });
  });

  it('WhatsApp Cloud sends a JPEG over its 5 MB image limit as a document', async () => {
    const { thread } = await threadOn('whatsapp', '4915100000301');
    const big = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), someBytes(5 * 1024 * 1024)]);
    await replySent(thread.id, { text: 'Full size', attachmentIds: [await upload(big, 'image/jpeg', 'scan.jpg', 'image')] });
    expect(fake.requests[1]!.parsed).toMatchObject({ type: 'document', document: { caption: 'Full size', filename: 'scan.jpg' } });
  });

  it.each([
    ['image/gif', 'wave.gif', 'image'],
    ['image/svg+xml', 'logo.svg', 'image'],
    ['audio/wav', 'memo.wav', 'audio'],
    ['video/quicktime', 'clip.mov', 'video'],
  ] as const)('WhatsApp Cloud sends %s, a type it does not play, as a document with its filename', async (contentType, filename, kind) => {
    const { thread } = await threadOn('whatsapp', `49151000002${accounts}`);
    await replySent(thread.id, { text: 'Here it is', attachmentIds: [await upload(someBytes(), contentType, filename, kind)] });
    expect(fake.requests.map((r) => r.path.split('/').pop())).toEqual(['media', 'messages']);
    expect(fake.requests[1]!.parsed).toMatchObject({
      type: 'document',
      document: { id: answerOf(0).id, caption: 'Here it is', filename },
    });
  });

  it.each(['social_one.native', 'social_two.native'])(
    '%s sends the text, then the file by its signed link ending in its name, which Meta fetches',
    async (key) => {
      const { thread } = await threadOn(key, `67741388159${accounts}`);
      const bytes = someBytes(50_000);
      const id = await upload(bytes, 'video/mp4', 'clip.mp4', 'video');
      const sent = await replySent(thread.id, { text: 'Here is how', attachmentIds: [id] });
      expect(fake.requests).toHaveLength(2);
      expect(fake.requests[0]!.parsed).toMatchObject({ message: { text: 'Here is how' } });
      const attachment = (fake.requests[1]!.parsed as { message: { attachment: { type: string; payload: { url: string } } } }).message
        .attachment;
      expect(attachment).toMatchObject({ type: 'video', payload: { is_reusable: false } });
      expect(attachment.payload.url).toMatch(
        // Meta names the file after the link's last segment: the file's name, not `content`.
        new RegExp(`^${links.url}/v1/attachments/${id}/content/clip\\.mp4\\?expires=\\d+&signature=[0-9a-f]{64}$`),
      );
      expect(fake.requests[1]!.fetched).toMatchObject({ status: 200, contentType: 'video/mp4' });
      expect(fake.requests[1]!.fetched!.bytes.equals(bytes)).toBe(true);
      expect(sent.external_id).toBe(answerOf(1).message_id);
    },
  );

  it('Messenger sends a file alone in one call', async () => {
    const { thread } = await threadOn('social_one.native', '6774138815940001');
    await replySent(thread.id, { attachmentIds: [await upload(someBytes(), 'image/png', 'a.png', 'image')] });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.parsed).toMatchObject({ message: { attachment: { type: 'image' } } });
  });

  it.each(['whatsapp_session', 'whatsapp_session.waha'])('%s sends WAHA sendFile with the file object and the caption', async (key) => {
    const { thread } = await threadOn(key, `4915100000${accounts}`);
    const bytes = someBytes(10_000);
    const id = await upload(bytes, 'application/pdf', 'terms.pdf', 'file');
    const sent = await replySent(thread.id, { text: 'Our terms', attachmentIds: [id] });
    expect(fake.requests).toHaveLength(1);
    const request = fake.requests[0]!;
    expect(request.path).toBe('/waha/api/sendFile');
    expect(request.headers['x-api-key']).toBe(TOKEN);
    const body = request.parsed as { session: string; chatId: string; caption: string; file: Record<string, string> };
    expect(body).toMatchObject({ chatId: `4915100000${accounts - 1}@c.us`, caption: 'Our terms' });
    expect(body.file).toEqual({
      mimetype: 'application/pdf',
      filename: 'terms.pdf',
      url: expect.stringContaining(`/v1/attachments/${id}/content/terms.pdf?`),
    });
    expect(request.fetched!.bytes.equals(bytes)).toBe(true);
    expect(sent.external_id).toBe((answerOf(0).id as { _serialized: string })._serialized);
  });

  it.each(['sms', 'sms.twilio'])('%s sends Body and one MediaUrl, which Twilio fetches', async (key) => {
    const { thread } = await threadOn(key, '+4915100000199', { accessToken: TOKEN, accountSid: SID });
    const bytes = someBytes(20_000);
    const id = await upload(bytes, 'image/jpeg', 'receipt.jpg', 'image');
    const sent = await replySent(thread.id, { text: 'Receipt attached', attachmentIds: [id] });
    expect(fake.requests).toHaveLength(1);
    const form = fake.requests[0]!.parsed as Record<string, string>;
    expect(form).toMatchObject({ To: '+4915100000199', Body: 'Receipt attached' });
    expect(form.MediaUrl).toContain(`/v1/attachments/${id}/content/receipt.jpg?expires=`);
    expect(fake.requests[0]!.fetched!.bytes.equals(bytes)).toBe(true);
    expect(sent.external_id).toBe(answerOf(0).sid);
  });

  it.each([
    ['application/zip', 'logs.zip'],
    ['application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'quote.docx'],
  ])('Telegram uploads a document (%s) with its filename and the caption', async (contentType, filename) => {
    const chat = `7770001${String(accounts).padStart(2, '0')}`;
    const { thread } = await threadOn('telegram', chat);
    const bytes = someBytes(5_000);
    const id = await upload(bytes, contentType, filename, 'file');
    const sent = await replySent(thread.id, { text: 'The logs', attachmentIds: [id] });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.path).toMatch(/\/sendDocument$/);
    // By URL, Telegram takes only GIF, PDF and ZIP documents and names them after the link.
    const form = fake.requests[0]!.parsed as MultipartBody;
    expect(form.fields).toEqual({ chat_id: chat, caption: 'The logs' });
    expect(form.files).toHaveLength(1);
    expect(form.files[0]).toMatchObject({ field: 'document', filename, contentType });
    expect(form.files[0]!.bytes.equals(bytes)).toBe(true);
    expect(sent.external_id).toBe(`${chat}:${(answerOf(0).result as { message_id: number }).message_id}`);
  });

  it.each([
    ['a photo over 5 MB', 'image/jpeg', 'scan.jpg', 'image', 6, 'sendPhoto', 'photo'],
    ['a photo over the 10 MB sendPhoto takes', 'image/png', 'poster.png', 'image', 11, 'sendDocument', 'document'],
    ['a video over 20 MB', 'video/mp4', 'walkthrough.mp4', 'video', 21, 'sendVideo', 'video'],
  ] as const)('Telegram uploads %s, which it would not fetch by URL', async (_what, contentType, filename, kind, mb, method, field) => {
    const chat = `7770002${String(accounts).padStart(2, '0')}`;
    const { thread } = await threadOn('telegram', chat);
    const bytes = someBytes(mb * 1024 * 1024 + 1);
    await replySent(thread.id, { text: 'Full size', attachmentIds: [await upload(bytes, contentType, filename, kind)] });
    expect(fake.requests.map((r) => r.path.split('/').pop())).toEqual([method]);
    const form = fake.requests[0]!.parsed as MultipartBody;
    expect(form.fields).toEqual({ chat_id: chat, caption: 'Full size' });
    expect(form.files).toHaveLength(1);
    expect(form.files[0]).toMatchObject({ field, filename, contentType });
    expect(form.files[0]!.bytes.equals(bytes)).toBe(true);
  });

  it('Telegram sends a WebP sticker by sendSticker after its text by sendMessage (a sticker takes no caption)', async () => {
    const { thread } = await threadOn('telegram', '777000112');
    const bytes = someBytes(1_000);
    const sent = await replySent(thread.id, { text: 'Done!', attachmentIds: [await upload(bytes, 'image/webp', 'done.webp', 'sticker')] });
    expect(fake.requests.map((r) => r.path.split('/').pop())).toEqual(['sendMessage', 'sendSticker']);
    expect(fake.requests[0]!.parsed).toMatchObject({ chat_id: '777000112', text: 'Done!' });
    expect(fake.requests[1]!.parsed).not.toHaveProperty('caption');
    expect((fake.requests[1]!.parsed as { sticker: string }).sticker).toMatch(/\/v1\/attachments\/\d+\/content\/done\.webp\?expires=/);
    expect(fake.requests[1]!.fetched!.bytes.equals(bytes)).toBe(true);
    expect(sent.external_id).toBe(`777000112:${(answerOf(1).result as { message_id: number }).message_id}`);
  });

  it('e-mail carries every file as a MIME attachment with its name and type', async () => {
    const { thread } = await threadOn('email', 'ada@example.test', { smtpUrl: smtp.url });
    const pdf = someBytes(70_000);
    const png = someBytes(3_000);
    const ids = [await upload(pdf, 'application/pdf', 'quote.pdf', 'file'), await upload(png, 'image/png', 'logo.png', 'image')];
    await replySent(thread.id, { text: 'The quote and our logo.', attachmentIds: ids });
    expect(smtp.mails).toHaveLength(1);
    const mail = smtp.mails[0]!.mail;
    expect(mail.text?.trim()).toBe('The quote and our logo.');
    expect(mail.attachments.map((a) => [a.filename, a.contentType])).toEqual([
      ['quote.pdf', 'application/pdf'],
      ['logo.png', 'image/png'],
    ]);
    expect(mail.attachments[0]!.content.equals(pdf)).toBe(true);
    expect(mail.attachments[1]!.content.equals(png)).toBe(true);
  });

  it("live chat hands the files to the visitor's socket with signed links", async () => {
    const widget = await makeWidget(ctx.deps, workspaceId);
    const visitor = await startVisitor(ctx.app, widget.key);
    const socket = await openSocket(`${wsBase}/v1/livechat/${widget.key}/socket?visitorToken=${encodeURIComponent(visitor.token)}`);
    const bytes = someBytes(8_000);
    const id = await upload(bytes, 'image/png', 'map.png', 'image');
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${visitor.threadId}/messages`,
      headers: { ...tenant.headers, 'content-type': 'application/json' },
      payload: { text: 'We are here', attachmentIds: [id] },
    });
    expect(res.statusCode, res.body).toBe(202);
    const frame = await socket.frame((f) => f.type === 'message.created' && f.data.id === res.json().data.id, 'the reply on the socket');
    const attachments = frame.data.attachments as { id: number; kind: string; contentType: string; filename: string; url: string }[];
    expect(attachments).toHaveLength(1);
    expect(attachments[0]).toMatchObject({ id, kind: 'image', contentType: 'image/png', filename: 'map.png', size: bytes.length });
    const fetched = await fetch(attachments[0]!.url);
    expect(fetched.status).toBe(200);
    expect(Buffer.from(await fetched.arrayBuffer()).equals(bytes)).toBe(true);
    socket.ws.close();
  });

  it('a provider that cannot fetch the signed link refuses the send, and the reply fails with its words', async () => {
    const { thread } = await threadOn('social_one.native', '6774138815940002');
    const id = await upload(someBytes(), 'image/png', 'gone.png', 'image');
    // The bytes are gone from under the link: the fake fetches, gets 404, and refuses as Meta does.
    await ctx.deps.db.updateTable('attachments').set({ storage_key: 'test/nowhere' }).where('id', '=', id).execute();
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${thread.id}/messages`,
      headers: { ...tenant.headers, 'content-type': 'application/json' },
      payload: { attachmentIds: [id] },
    });
    const failed = await waitFor(async () => {
      const m = await ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', res.json().data.id).executeTakeFirstOrThrow();
      return m.status !== 'queued' ? m : undefined;
    }, 'the reply to settle');
    expect(failed.status).toBe('failed');
    expect(failed.error).toContain('could not fetch the media at its URL (HTTP 404)');
  });
});
