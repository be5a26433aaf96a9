import { type AddressInfo, createServer, connect as netConnect, type Socket } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { startImapServer } from '../../harness/imap.js';
import { startSmtpServer } from '../../harness/smtp.js';
import { MailboxReaders } from '../../src/mailboxes/mailbox-readers.js';
import { SEND_TIMEOUT_MS } from '../../src/replies/send-message.queue.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { connectImapMailbox } from '../helpers/mailboxes.js';
import { waitFor } from '../helpers/webhooks.js';

const ctx = await useTestContext({ workers: true, env: { INBOX_ALLOW_PRIVATE_SMTP: 'true' } });
const db = ctx.deps.db;
const tenant = await makeTenant(ctx.deps);
const smtp = await startSmtpServer({ auth: { user: 'support@mailbox.test', pass: 'app-password-0123' } });
const imap = await startImapServer({
  initial: [
    [
      'From: Di <di@di.test>',
      'To: support@mailbox.test',
      'Subject: Refund',
      'Message-ID: <r1@di.test>',
      'MIME-Version: 1.0',
      'Content-Type: text/plain',
      '',
      'Please.',
      '',
    ].join('\r\n'),
  ],
});

/**
 * A TCP relay in front of the IMAP server that stops passing anything on, either way, once a
 * client sends APPEND: the server as a stalled one looks (an answer that never comes).
 */
const sockets = new Set<Socket>();
let appends = 0;
const relay = createServer((client) => {
  const upstream = netConnect(Number(new URL(imap.url).port), '127.0.0.1');
  let stalled = false;
  for (const s of [client, upstream]) {
    sockets.add(s);
    s.on('error', () => {});
    s.on('close', () => sockets.delete(s));
  }
  client.on('data', (d: Buffer) => {
    if (/ APPEND /i.test(d.toString('latin1'))) {
      stalled = true;
      appends++;
    }
    if (!stalled) upstream.write(d);
  });
  upstream.on('data', (d: Buffer) => !stalled && client.write(d));
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
});
await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
const relayUrl = `imap://127.0.0.1:${(relay.address() as AddressInfo).port}`;
let readers: MailboxReaders | undefined;
afterAll(async () => {
  await readers?.stop();
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => relay.close(resolve));
  await imap.close();
  await smtp.close();
});

describe("a mailbox's Sent folder", () => {
  it('that never answers the APPEND holds the reply queued no longer than the send timeout', { timeout: 60_000 }, async () => {
    const { id } = await connectImapMailbox(
      ctx.app,
      tenant.headers,
      { ...imap, url: relayUrl },
      { smtpUrl: smtp.url.replace(/\/\/[^@]*@/, '//') },
    );
    readers = new MailboxReaders(ctx.deps, { scanMs: 100, pollMs: 3_600_000 });
    readers.start();
    const question = await waitFor(
      () => db.selectFrom('messages').select('thread_id').where('connection_id', '=', id).executeTakeFirst(),
      'the mail',
    );
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${question.thread_id}/messages`,
      headers: tenant.headers,
      payload: { text: 'Refunded.' },
    });
    expect(res.statusCode, res.body).toBe(202);
    const started = Date.now();
    const sent = await waitFor(
      () => db.selectFrom('messages').selectAll().where('id', '=', res.json().data.id).where('status', '=', 'sent').executeTakeFirst(),
      'the reply recorded sent',
      3 * SEND_TIMEOUT_MS,
    );
    expect(Date.now() - started).toBeLessThan(2 * SEND_TIMEOUT_MS);
    expect(appends).toBe(1);
    // The mail went out once; its copy was given up.
    expect(smtp.mails.filter((m) => m.mail.messageId === sent.external_id)).toHaveLength(1);
    expect(imap.messages('Sent')).toHaveLength(0);
  });
});
