import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startImapServer } from '../../harness/imap.js';
import { MailboxReaders } from '../../src/mailboxes/mailbox-readers.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { connectImapMailbox } from '../helpers/mailboxes.js';
import { fixture, postDelivery, waitFor } from '../helpers/webhooks.js';

// An HTML mail whose images are parts of the mail itself (multipart/related, `<img
// src="cid:…">`): the agent sees them in the console's frame, linked to this message's own
// attachments, from every kind of mailbox.

const POSTMARK_SECRET = 'postmark-basic-auth-secret-01';
const EMAIL_SECRET = 'email-webhook-secret-0123456789';
const MAILGUN_KEY = 'mailgun-signing-key-0123456789';
const PUBLIC_URL = 'https://inbox.example.com';
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

const ctx = await useTestContext({
  workers: true,
  env: {
    INBOX_PUBLIC_URL: PUBLIC_URL,
    INBOX_ALLOW_PRIVATE_SMTP: 'true',
    INBOX_INTEGRATIONS: JSON.stringify({
      'email.postmark': { webhookSecret: POSTMARK_SECRET },
      email: { webhookSecret: EMAIL_SECRET },
      'email.mailgun': { webhookSecret: MAILGUN_KEY },
    }),
  },
});
const db = ctx.deps.db;
const tenant = await makeTenant(ctx.deps);
const ws = tenant.workspace.id;
await makeConnection(ctx.deps, ws, { integrationKey: 'email.postmark', externalAccountId: 'yourhash+samplehash@inbound.postmarkapp.com' });
await makeConnection(ctx.deps, ws, { integrationKey: 'email', externalAccountId: 'support@acme.test' });
await makeConnection(ctx.deps, ws, { integrationKey: 'email.mailgun', externalAccountId: 'support@acme.test' });

const id = () => randomBytes(6).toString('hex');
const HTML = '<p>Our logo:</p><img src="cid:logo@acme.test" alt="logo">';

const post = (key: string, body: string | Buffer, headers: Record<string, string>, contentType?: string) =>
  postDelivery(ctx, key, body, headers, contentType);

const message = (externalId: string) =>
  waitFor(() => db.selectFrom('messages').select(['id', 'html']).where('external_id', '=', externalId).executeTakeFirst(), externalId);

/** The frame page of a message, as the console loads it: a signed link first, then the page. */
async function framePage(messageId: number) {
  const minted = await ctx.app.inject({ method: 'POST', url: `/v1/messages/${messageId}/html-link`, headers: tenant.headers });
  expect(minted.statusCode, minted.body).toBe(200);
  const url = new URL(minted.json().data.url);
  const page = await ctx.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
  expect(page.statusCode).toBe(200);
  return page;
}

/** The inline image of `externalId` loads in its frame: a signed link to this message's part, allowed by the CSP. */
async function expectInlineImage(externalId: string) {
  const m = await message(externalId);
  expect(m.html).toContain('data-cid="logo@acme.test"');
  const part = await waitFor(
    () =>
      db
        .selectFrom('attachments')
        .select(['id', 'status'])
        .where('message_id', '=', m.id)
        .where('status', '=', 'stored')
        .executeTakeFirst(),
    `the part of ${externalId}`,
  );
  const page = await framePage(m.id);
  const src = /<img[^>]*\ssrc="([^"]+)"/.exec(page.body)?.[1];
  expect(src).toMatch(new RegExp(`^${PUBLIC_URL}/v1/attachments/${part.id}/content\\?expires=\\d+&amp;signature=[0-9a-f]{64}$`));
  expect(page.body).not.toContain('data-cid');
  expect(page.headers['content-security-policy']).toContain(`img-src data: ${PUBLIC_URL}/v1/attachments/;`);
  // The link works without a credential, as the frame loads it.
  const link = new URL(src!.replaceAll('&amp;', '&'));
  const bytes = await ctx.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` });
  expect(bytes.statusCode).toBe(200);
  expect(bytes.rawPayload).toEqual(PNG);
}

describe('inline cid: images in e-mail', () => {
  it('neutral email: attachments[].contentId links the part', async () => {
    const messageId = `<${id()}@example.org>`;
    await post(
      'email',
      JSON.stringify({
        type: 'inbound',
        messageId,
        from: { email: 'dana@example.org' },
        to: 'support@acme.test',
        subject: 'Logo',
        text: 'Our logo.',
        html: HTML,
        attachments: [{ filename: 'logo.png', contentType: 'image/png', contentId: '<logo@acme.test>', content: PNG.toString('base64') }],
      }),
      { 'x-vendor-auth': EMAIL_SECRET },
    );
    await expectInlineImage(messageId);
  });

  it('postmark: Attachments[].ContentID links the part', async () => {
    const body = JSON.parse(fixture('email.postmark', 'inbound.json'));
    body.MessageID = `pm-${id()}`;
    body.Headers = (body.Headers as { Name: string }[]).filter((h) => h.Name.toLowerCase() !== 'message-id');
    body.HtmlBody = HTML;
    body.Attachments = [{ Name: 'logo.png', Content: PNG.toString('base64'), ContentType: 'image/png', ContentID: 'logo@acme.test' }];
    await post('email.postmark', JSON.stringify(body), {
      authorization: `Basic ${Buffer.from(`postmark:${POSTMARK_SECRET}`).toString('base64')}`,
    });
    await expectInlineImage(body.MessageID);
  });

  it('mailgun: content-id-map links the part, signed as Mailgun signs', async () => {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const token = randomBytes(25).toString('hex');
    const signature = createHmac('sha256', MAILGUN_KEY).update(`${timestamp}${token}`).digest('hex');
    const params = new URLSearchParams(fixture('email.mailgun', 'inbound.form'));
    const messageId = `<${id()}@example.com>`;
    const fields = {
      timestamp,
      token,
      signature,
      'Message-Id': messageId,
      'body-html': HTML,
      'content-id-map': '{"<logo@acme.test>": "attachment-1"}',
    };
    for (const [k, v] of Object.entries(fields)) params.set(k, v);
    params.delete('In-Reply-To');
    params.delete('References');
    const form = new FormData();
    for (const [k, v] of params) form.append(k, v);
    form.append('attachment-1', new Blob([PNG], { type: 'image/png' }), 'logo.png');
    const res = new Response(form);
    await post('email.mailgun', Buffer.from(await res.arrayBuffer()), {}, res.headers.get('content-type')!);
    await expectInlineImage(messageId);
  });

  it('imap: a multipart/related mail read from a real IMAP server links its Content-ID part', async () => {
    const server = await startImapServer();
    const readers = new MailboxReaders(ctx.deps, { scanMs: 100, pollMs: 3_600_000 });
    try {
      await connectImapMailbox(ctx.app, tenant.headers, server, { name: 'Inline mailbox' });
      readers.start();
      const messageId = `<${id()}@example.net>`;
      await server.append(
        [
          `Message-ID: ${messageId}`,
          'From: ed@example.net',
          `To: ${server.user}`,
          'Subject: Logo',
          'MIME-Version: 1.0',
          'Content-Type: multipart/related; boundary="r"',
          '',
          '--r',
          'Content-Type: text/html; charset=utf-8',
          '',
          HTML,
          '--r',
          'Content-Type: image/png',
          'Content-Transfer-Encoding: base64',
          'Content-ID: <logo@acme.test>',
          'Content-Disposition: inline; filename="logo.png"',
          '',
          PNG.toString('base64'),
          '--r--',
          '',
        ].join('\r\n'),
      );
      await expectInlineImage(messageId);
    } finally {
      await readers.stop();
      await server.close();
    }
  }, 60_000);

  it("never links a forged data-cid, another message's part, or a cid with quotes or javascript:", async () => {
    // The other message carries a part with the very Content-ID the hostile mail names.
    const otherId = `<${id()}@example.org>`;
    const mail = (messageId: string, html: string, contentId?: string) => ({
      type: 'inbound',
      messageId,
      from: { email: 'mo@example.org' },
      to: 'support@acme.test',
      subject: 'Hostile',
      text: 'See the picture.',
      html,
      attachments: [{ filename: 'x.png', contentType: 'image/png', ...(contentId ? { contentId } : {}), content: PNG.toString('base64') }],
    });
    await post('email', JSON.stringify(mail(otherId, HTML, '<secret@acme.test>')), { 'x-vendor-auth': EMAIL_SECRET });
    await message(otherId);
    const hostileId = `<${id()}@example.org>`;
    const html = [
      '<img src="cid:secret@acme.test" alt="a">',
      '<img data-cid="secret@acme.test" alt="b">',
      '<img src="https://t.test/p.gif" data-cid="secret@acme.test" alt="c">',
      '<img src="cid:a%22onerror=%22alert(1)" alt="d">',
      '<img src="cid:javascript:alert(1)" alt="e">',
      '<p> data-cid="secret@acme.test" </p>',
    ].join('');
    await post('email', JSON.stringify(mail(hostileId, html, '"><script>@x')), { 'x-vendor-auth': EMAIL_SECRET });
    const m = await message(hostileId);
    // Only the cid: image keeps a marker; the forged ones and the unclean ids are dropped.
    expect(m.html).toContain('<img alt="a" data-cid="secret@acme.test" />');
    expect(m.html).toContain('<img alt="b" />');
    expect(m.html).toContain('<img alt="c" data-remote-src="https://t.test/p.gif" />');
    expect(m.html).toContain('<img alt="d" />');
    expect(m.html).toContain('<img alt="e" />');
    const source = await db.selectFrom('attachments').select('source').where('message_id', '=', m.id).executeTakeFirstOrThrow();
    expect(source.source).not.toHaveProperty('cid');
    const page = await framePage(m.id);
    // The other message's part is never linked: no image of this page loads anything.
    expect(page.body).not.toMatch(/<img[^>]*\ssrc=/);
    expect(page.body).not.toContain('/v1/attachments/');
    expect(page.body).toContain('<p> data-cid="secret@acme.test" </p>');
  });
});
