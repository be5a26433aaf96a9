import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import * as conversations from '../../migrations/0046_email_conversations.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { sign, waitFor } from '../helpers/webhooks.js';

const MAIL_SECRET = 'neutral-mail-secret-0123';
const ctx = await useTestContext({
  workers: true,
  env: { INBOX_INTEGRATIONS: JSON.stringify({ email: { webhookSecret: MAIL_SECRET }, sms: { webhookSecret: 'sms-secret-0123456789' } }) },
});
const tenant = await makeTenant(ctx.deps);
const ws = tenant.workspace.id;
const db = ctx.deps.db;

interface Mail {
  id: string;
  from: string;
  to?: string;
  subject?: string;
  text?: string;
  html?: string;
  cc?: { email: string; name?: string }[];
  inReplyTo?: string;
  references?: string[];
}

const deliver = async (m: Mail) => {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/email',
    headers: { 'content-type': 'application/json', 'x-vendor-auth': MAIL_SECRET },
    payload: {
      type: 'inbound',
      messageId: m.id,
      from: { email: m.from },
      to: m.to ?? 'help@threads.test',
      subject: m.subject ?? 'Hello',
      text: m.text ?? `Mail ${m.id}`,
      ...(m.html ? { html: m.html } : {}),
      ...(m.cc ? { cc: m.cc } : {}),
      ...(m.inReplyTo ? { inReplyTo: m.inReplyTo } : {}),
      ...(m.references ? { references: m.references } : {}),
    },
  });
  expect(res.statusCode).toBe(200);
};
const stored = (externalId: string) =>
  waitFor(() => db.selectFrom('messages').selectAll().where('external_id', '=', externalId).executeTakeFirst(), `message ${externalId}`);

describe('threads per e-mail conversation', () => {
  it('opens a thread per conversation; references of the same contact join, of another never', async () => {
    await makeConnection(ctx.deps, ws, { integrationKey: 'email', externalAccountId: 'help@threads.test' });
    await deliver({ id: '<a1@ada.test>', from: 'ada@ada.test', subject: 'Invoice' });
    await deliver({ id: '<a2@ada.test>', from: 'ada@ada.test', subject: 'Delivery' });
    const [a1, a2] = [await stored('<a1@ada.test>'), await stored('<a2@ada.test>')];
    // Two mails that answer nothing: two conversations of one contact.
    expect(a2.thread_id).not.toBe(a1.thread_id);
    const threads = await db.selectFrom('threads').select(['contact_id']).where('id', 'in', [a1.thread_id, a2.thread_id]).execute();
    expect(new Set(threads.map((t) => t.contact_id)).size).toBe(1);

    // In-Reply-To of the first, then a References chain naming only the second.
    await deliver({ id: '<a3@ada.test>', from: 'ada@ada.test', subject: 'Re: Invoice', inReplyTo: '<a1@ada.test>' });
    await deliver({ id: '<a4@ada.test>', from: 'ada@ada.test', subject: 'Re: Delivery', references: ['<gone@x.test>', '<a2@ada.test>'] });
    expect((await stored('<a3@ada.test>')).thread_id).toBe(a1.thread_id);
    expect((await stored('<a4@ada.test>')).thread_id).toBe(a2.thread_id);

    // Bo names Ada's mail: a Message-ID is no credential, so Bo gets a thread of his own.
    await deliver({ id: '<b1@bo.test>', from: 'bo@bo.test', subject: 'Re: Invoice', inReplyTo: '<a1@ada.test>' });
    const b1 = await stored('<b1@bo.test>');
    expect([a1.thread_id, a2.thread_id]).not.toContain(b1.thread_id);
  });

  it('keeps one thread per connection and contact on other channels', async () => {
    await makeConnection(ctx.deps, ws, { integrationKey: 'sms', externalAccountId: '+14155550100' });
    const sms = async (id: string) => {
      const body = new URLSearchParams({
        MessageSid: id,
        MessageStatus: 'received',
        From: '+14155550199',
        To: '+14155550100',
        Body: `sms ${id}`,
      }).toString();
      const res = await ctx.app.inject({
        method: 'POST',
        url: '/webhooks/sms',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-signature': sign('sms-secret-0123456789', body) },
        payload: body,
      });
      expect(res.statusCode).toBe(200);
    };
    await sms('sms-1');
    await sms('sms-2');
    expect((await stored('sms-2')).thread_id).toBe((await stored('sms-1')).thread_id);
    expect(
      (
        await db
          .selectFrom('threads')
          .select('conversation_key')
          .where('id', '=', (await stored('sms-1')).thread_id)
          .executeTakeFirstOrThrow()
      ).conversation_key,
    ).toBe('');
  });

  it('shows the headers, the sanitized HTML and the quoted text on the message', async () => {
    await makeConnection(ctx.deps, ws, { integrationKey: 'email', externalAccountId: 'help@content.test' });
    await deliver({
      id: '<html@cy.test>',
      from: 'cy@cy.test',
      to: 'help@content.test',
      subject: 'Broken order',
      cc: [{ email: 'Boss@cy.test', name: 'Boss' }],
      text: 'It arrived broken.\n\nOn Mon, Acme wrote:\n> Your order shipped.\n> Acme',
      html: [
        '<p style="color: red; background-image: url(https://track.test/bg)">It arrived <b>broken</b>.</p>',
        '<script>alert(1)</script><img src="https://track.test/pixel.gif" alt="p"><img src="cid:part1">',
        '<a href="https://shop.test/order" onclick="steal()">order</a><a href="javascript:alert(1)">x</a>',
        '<iframe src="https://evil.test"></iframe><form action="https://evil.test"><input name="q"></form>',
      ].join(''),
    });
    const m = await stored('<html@cy.test>');
    const res = await ctx.app.inject({ method: 'GET', url: `/v1/threads/${m.thread_id}/messages`, headers: tenant.headers });
    expect(res.statusCode).toBe(200);
    const message = res.json().data.find((x: { id: number }) => x.id === m.id);
    expect(message.text).toBe('It arrived broken.');
    expect(message.quotedText).toBe('On Mon, Acme wrote:\n> Your order shipped.\n> Acme');
    expect(message.email).toEqual({
      messageId: '<html@cy.test>',
      inReplyTo: null,
      from: { email: 'cy@cy.test' },
      to: [{ email: 'help@content.test' }],
      cc: [{ email: 'boss@cy.test', name: 'Boss' }],
      subject: 'Broken order',
    });
    const html: string = message.html;
    expect(html).toContain('<p style="color:red">It arrived <b>broken</b>.</p>');
    expect(html).not.toMatch(/script|alert|iframe|<form|<input|onclick|javascript:|url\(/);
    // A remote image waits for a click; its address is not where a browser would load it.
    expect(html).toContain('<img alt="p" data-remote-src="https://track.test/pixel.gif" />');
    expect(html).not.toMatch(/\ssrc="https:/);
    expect(html).toContain('<a href="https://shop.test/order" target="_blank" rel="noopener noreferrer">order</a>');
  });

  it("serves the HTML for the console's frame by a signed link, under its own CSP", async () => {
    const m = await stored('<html@cy.test>');
    const minted = await ctx.app.inject({ method: 'POST', url: `/v1/messages/${m.id}/html-link`, headers: tenant.headers });
    expect(minted.statusCode, minted.body).toBe(200);
    const url = new URL(minted.json().data.url);
    const page = await ctx.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
    expect(page.statusCode).toBe(200);
    const csp = page.headers['content-security-policy'] as string;
    expect(csp).toMatch(/^sandbox allow-popups allow-popups-to-escape-sandbox;/);
    expect(csp).toContain("default-src 'none'");
    // Inline data: images, and the mail's own parts (cid: images) by their signed links.
    expect(csp).toContain(`img-src data: ${ctx.deps.config.publicUrl}/v1/attachments/;`);
    expect(page.body).toContain('data-remote-src="https://track.test/pixel.gif"');
    // Images only when asked for: the policy and the page both change.
    const withImages = await ctx.app.inject({ method: 'GET', url: `${url.pathname}${url.search}&images=1` });
    expect(withImages.headers['content-security-policy']).toContain(
      `img-src data: ${ctx.deps.config.publicUrl}/v1/attachments/ https: http:;`,
    );
    expect(withImages.body).toContain(' src="https://track.test/pixel.gif"');
    // A signature for another message, or none at all, opens nothing.
    const other = await stored('<a1@ada.test>');
    expect((await ctx.app.inject({ method: 'GET', url: `/v1/messages/${other.id}/html${url.search}` })).statusCode).toBe(401);
    expect((await ctx.app.inject({ method: 'GET', url: `/v1/messages/${m.id}/html` })).statusCode).toBe(422);
    // Another workspace's key finds no such message; a message without HTML has no link.
    const stranger = await makeTenant(ctx.deps);
    expect((await ctx.app.inject({ method: 'POST', url: `/v1/messages/${m.id}/html-link`, headers: stranger.headers })).statusCode).toBe(
      404,
    );
    expect((await ctx.app.inject({ method: 'POST', url: `/v1/messages/${other.id}/html-link`, headers: tenant.headers })).statusCode).toBe(
      404,
    );
  });

  it('the messages of another channel carry no e-mail fields', async () => {
    const res = await ctx.app.inject({
      method: 'GET',
      url: `/v1/threads/${(await stored('sms-1')).thread_id}/messages`,
      headers: tenant.headers,
    });
    const [message] = res.json().data;
    expect(message).not.toHaveProperty('email');
    expect(message).not.toHaveProperty('html');
  });
});

describe('migration 0046_email_conversations', () => {
  it("gives each existing e-mail thread the key of its first message, and other channels' threads none", async () => {
    const mail = await makeConnection(ctx.deps, ws, { integrationKey: 'email.postmark', externalAccountId: 'old@migrate.test' });
    const chat = await makeConnection(ctx.deps, ws, { integrationKey: 'sms', externalAccountId: '+15550009999' });
    const thread = async (connectionId: number, ids: string[]) => {
      const contact = await db.insertInto('contacts').values({ workspace_id: ws }).returning('id').executeTakeFirstOrThrow();
      const t = await db
        .insertInto('threads')
        .values({ workspace_id: ws, connection_id: connectionId, contact_id: contact.id, last_message_preview: null })
        .returning('id')
        .executeTakeFirstOrThrow();
      for (const [i, id] of ids.entries())
        await db
          .insertInto('messages')
          .values({
            workspace_id: ws,
            thread_id: t.id,
            connection_id: connectionId,
            direction: 'inbound',
            external_id: id,
            text: 'x',
            status: 'received',
            created_at: new Date(Date.UTC(2026, 0, 1 + i)),
          })
          .execute();
      return t.id;
    };
    const mailThread = await thread(mail.id, ['<first@old.test>', '<second@old.test>']);
    const emptyMailThread = await thread(mail.id, []);
    const chatThread = await thread(chat.id, ['sms-old-1']);

    const unknownDb = db as unknown as Kysely<unknown>;
    await conversations.down(unknownDb);
    await conversations.up(unknownDb);

    const keys = await db
      .selectFrom('threads')
      .select(['id', 'conversation_key'])
      .where('id', 'in', [mailThread, emptyMailThread, chatThread])
      .orderBy('id')
      .execute();
    expect(keys).toEqual([
      { id: mailThread, conversation_key: '<first@old.test>' },
      { id: emptyMailThread, conversation_key: `thread:${emptyMailThread}` },
      { id: chatThread, conversation_key: '' },
    ]);
  });
});
