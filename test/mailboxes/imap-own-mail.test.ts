import { sql } from 'kysely';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type FakeImap, startImapServer } from '../../harness/imap.js';
import { type FakeSmtp, startSmtpServer } from '../../harness/smtp.js';
import { MailboxReaders } from '../../src/mailboxes/mailbox-readers.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { connectImapMailbox, rawMail } from '../helpers/mailboxes.js';
import { waitFor } from '../helpers/webhooks.js';

/** An RFC 822 mail as a mail server would hold it: In-Reply-To alone, as some clients answer. */
const mail = (m: { id: string; from: string; subject: string; text: string; inReplyTo?: string; headers?: string[] }) => rawMail(m);

/** A delivery report as Postfix writes one, returning `returned` (its headers, or the whole mail). */
function bounce(m: { id: string; to: string; recipient: string; returned: string; whole?: boolean }): string {
  return [
    'From: Mail Delivery System <MAILER-DAEMON@mx.mailbox.test>',
    `To: ${m.to}`,
    'Subject: Undelivered Mail Returned to Sender',
    `Message-ID: ${m.id}`,
    'Auto-Submitted: auto-replied',
    'MIME-Version: 1.0',
    'Content-Type: multipart/report; report-type=delivery-status; boundary="B1"',
    '',
    '--B1',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    `I'm sorry to have to inform you that your message could not be delivered to ${m.recipient}.`,
    '',
    '--B1',
    'Content-Type: message/delivery-status',
    '',
    'Reporting-MTA: dns; mx.mailbox.test',
    '',
    `Final-Recipient: rfc822; ${m.recipient}`,
    'Action: failed',
    'Status: 5.1.1',
    `Diagnostic-Code: smtp; 550 5.1.1 <${m.recipient}>: Recipient address`,
    '    rejected: User unknown',
    '',
    '--B1',
    `Content-Type: ${m.whole ? 'message/rfc822' : 'text/rfc822-headers'}`,
    '',
    m.returned.trimEnd(),
    '',
    '--B1--',
    '',
  ].join('\r\n');
}

const ctx = await useTestContext({ workers: true, env: { INBOX_ALLOW_PRIVATE_SMTP: 'true' } });
const db = ctx.deps.db;
const tenant = await makeTenant(ctx.deps);
const smtp: FakeSmtp = await startSmtpServer({ auth: { user: 'support@mailbox.test', pass: 'app-password-0123' } });
const servers: FakeImap[] = [];
const readers: MailboxReaders[] = [];
afterEach(async () => {
  for (const r of readers.splice(0)) await r.stop();
});
afterAll(async () => {
  for (const s of servers) await s.close();
  await smtp.close();
});

/** A mailbox holding `initial`, connected and read (IDLE; the poll an hour away). */
async function readMailbox(initial: string[], account: string) {
  const server = await startImapServer({ initial });
  servers.push(server);
  const { id } = await connectImapMailbox(ctx.app, tenant.headers, server, { account, smtpUrl: smtp.url.replace(/\/\/[^@]*@/, '//') });
  const readers_ = new MailboxReaders(ctx.deps, { scanMs: 100, pollMs: 3_600_000 });
  readers.push(readers_);
  readers_.start();
  return { server, id };
}

const messagesOf = (connectionId: number) =>
  db
    .selectFrom('messages')
    .select(['id', 'external_id', 'thread_id', 'text', 'email', 'direction', 'kind', 'status', 'error'])
    .where('connection_id', '=', connectionId)
    .orderBy('id')
    .execute();
const threadsOf = (connectionId: number) =>
  db.selectFrom('threads').select(['id', 'status', 'contact_id']).where('connection_id', '=', connectionId).orderBy('id').execute();

/** Waits until every mail of the folder is stored and processed: what it did is then all there is. */
async function processed(connectionId: number, count: number): Promise<void> {
  await waitFor(async () => {
    const { rows } = await sql<{ done: number; n: number }>`
      SELECT count(*) FILTER (WHERE w.status = 'processed')::int AS done, count(*)::int AS n
      FROM imap_messages i JOIN webhook_inbox w ON w.id = i.delivery_id WHERE i.connection_id = ${connectionId}`.execute(db);
    return rows[0]!.n === count && rows[0]!.done === count;
  }, `${count} mails processed`);
}

async function answer(threadId: number, text: string, cc?: string[]) {
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/v1/threads/${threadId}/messages`,
    headers: tenant.headers,
    payload: { text, ...(cc ? { cc } : {}) },
  });
  expect(res.statusCode, res.body).toBe(202);
  return waitFor(
    () => db.selectFrom('messages').selectAll().where('id', '=', res.json().data.id).where('status', '=', 'sent').executeTakeFirst(),
    'the reply sent',
  );
}

describe('mail about our own mail, read back from the mailbox', () => {
  it("never makes an agent's reply that comes back a contact's message, thread or contact", async () => {
    const { server, id } = await readMailbox(
      [mail({ id: '<q1@cu.test>', from: 'Cu <cu@cu.test>', subject: 'Broken', text: 'Help.' })],
      'support@mailbox.test',
    );
    await processed(id, 1);
    const [question] = await messagesOf(id);
    const reply = await answer(question!.thread_id, 'We fixed it.');
    // The mailbox was Bcc'd on the reply (or its server files sent mail in the INBOX too).
    const copy = await waitFor(async () => server.messages('Sent')[0]?.raw, 'the copy in Sent');
    await server.append(copy);
    await server.append(
      mail({ id: '<q2@cu.test>', from: 'Cu <cu@cu.test>', subject: 'Re: Broken', text: 'Thanks!', inReplyTo: reply.external_id! }),
    );
    await processed(id, 3);
    const messages = await messagesOf(id);
    expect(messages.map((m) => [m.direction, m.kind, m.text])).toEqual([
      ['inbound', 'message', 'Help.'],
      ['outbound', 'message', 'We fixed it.'],
      ['inbound', 'message', 'Thanks!'],
    ]);
    expect(new Set(messages.map((m) => m.thread_id))).toEqual(new Set([question!.thread_id]));
    expect(await threadsOf(id)).toHaveLength(1);
    const own = await db
      .selectFrom('contact_handles')
      .select('contact_id')
      .where('external_id', '=', 'support@mailbox.test')
      .executeTakeFirst();
    expect(own).toBeUndefined();
  });

  it('drops the copy of a reply read back before its send is recorded', async () => {
    const { server, id } = await readMailbox(
      [mail({ id: '<g1@grey.test>', from: 'gr@grey.test', subject: 'Slow', text: 'Are you there?' })],
      'early@mailbox.test',
    );
    await processed(id, 1);
    const [question] = await messagesOf(id);
    // Greylisted: the reply stays queued, its Message-ID decided and no send recorded yet.
    smtp.refuse('gr@grey.test', 451);
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${question!.thread_id}/messages`,
      headers: tenant.headers,
      payload: { text: 'Yes, here.' },
    });
    expect(res.statusCode, res.body).toBe(202);
    const queued = res.json().data;
    await waitFor(async () => {
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pgboss.job
        WHERE (data->>'messageId')::bigint = ${queued.id} AND (data->>'attempt')::int = 2`.execute(db);
      return rows[0]!.n === 1;
    }, 'the second attempt scheduled');
    // The copy the mailbox was Bcc'd on arrives first.
    await server.append(
      mail({
        id: queued.email.messageId,
        from: 'early@mailbox.test',
        subject: 'Re: Slow',
        text: 'Yes, here.',
        inReplyTo: '<g1@grey.test>',
        headers: ['References: <g1@grey.test>'],
      }),
    );
    await processed(id, 2);
    const messages = await messagesOf(id);
    expect(messages.map((m) => [m.direction, m.text])).toEqual([
      ['inbound', 'Are you there?'],
      ['outbound', 'Yes, here.'],
    ]);
    expect(await threadsOf(id)).toHaveLength(1);
  });

  it('fails the reply a bounce returns, with its reason, and opens no thread; a bounce of other mail is a message', async () => {
    const { server, id } = await readMailbox(
      [mail({ id: '<o1@gone.test>', from: 'gone@gone.test', subject: 'Order', text: 'Where is it?' })],
      'bounces@mailbox.test',
    );
    await processed(id, 1);
    const [question] = await messagesOf(id);
    const reply = await answer(question!.thread_id, 'On its way.');
    const returned = (await waitFor(async () => server.messages('Sent')[0]?.raw, 'the copy in Sent')).split('\r\n\r\n')[0]!;
    await server.append(bounce({ id: '<b1@mx.mailbox.test>', to: 'bounces@mailbox.test', recipient: 'gone@gone.test', returned }));
    const stranger = mail({ id: '<s1@mailbox.test>', from: 'bounces@mailbox.test', subject: 'Sent elsewhere', text: 'Not ours.' });
    await server.append(
      bounce({ id: '<b2@mx.mailbox.test>', to: 'bounces@mailbox.test', recipient: 'x@gone.test', returned: stranger, whole: true }),
    );
    await processed(id, 3);
    const failed = await db.selectFrom('messages').select(['status', 'error']).where('id', '=', reply.id).executeTakeFirstOrThrow();
    expect(failed).toEqual({
      status: 'failed',
      error: 'bounced: gone@gone.test: 550 5.1.1 <gone@gone.test>: Recipient address rejected: User unknown',
    });
    const messages = await messagesOf(id);
    expect(messages.some((m) => m.external_id === '<b1@mx.mailbox.test>')).toBe(false);
    // A report about mail the service never sent is shown, as a machine's mail.
    const other = messages.find((m) => m.external_id === '<b2@mx.mailbox.test>');
    expect(other?.email).toMatchObject({ automatic: true, from: { email: 'mailer-daemon@mx.mailbox.test' } });
    expect(await threadsOf(id)).toHaveLength(2);

    // A Cc that bounced: the reply reached its contact and stays sent; the report is shown.
    const withCc = await answer(question!.thread_id, 'Copying our courier.', ['courier@gone.test']);
    const copies = await waitFor(async () => server.messages('Sent').length === 2 && server.messages('Sent'), 'the second copy');
    const returnedCc = copies[1]!.raw.split('\r\n\r\n')[0]!;
    await server.append(
      bounce({ id: '<b3@mx.mailbox.test>', to: 'bounces@mailbox.test', recipient: 'courier@gone.test', returned: returnedCc }),
    );
    await processed(id, 4);
    expect(await db.selectFrom('messages').select('status').where('id', '=', withCc.id).executeTakeFirstOrThrow()).toEqual({
      status: 'sent',
    });
    expect((await messagesOf(id)).some((m) => m.external_id === '<b3@mx.mailbox.test>')).toBe(true);
  });

  it("leaves a resolved or pending conversation as it is on an auto-reply; the contact's own answer reopens it", async () => {
    const { server, id } = await readMailbox(
      [
        mail({ id: '<a1@away.test>', from: 'Away <away@away.test>', subject: 'Invoice', text: 'Wrong amount.' }),
        mail({ id: '<p1@away.test>', from: 'Pat <pat@away.test>', subject: 'Login', text: 'Cannot log in.' }),
      ],
      'away@mailbox.test',
    );
    await processed(id, 2);
    const mails = await messagesOf(id);
    const [first, second] = ['<a1@away.test>', '<p1@away.test>'].map((mid) => mails.find((m) => m.external_id === mid));
    const replies = [await answer(first!.thread_id, 'Corrected.'), await answer(second!.thread_id, 'Try again?')];
    const status = async (threadId: number, value: string) => {
      const res = await ctx.app.inject({
        method: 'PATCH',
        url: `/v1/threads/${threadId}`,
        headers: tenant.headers,
        payload: { status: value },
      });
      expect(res.statusCode, res.body).toBe(200);
    };
    // The two mails came in one batch: their threads' ids need not follow the mails' order.
    const statuses = async () => {
      const threads = await threadsOf(id);
      return [first!, second!].map((m) => threads.find((t) => t.id === m.thread_id)?.status);
    };
    await status(first!.thread_id, 'resolved');
    await status(second!.thread_id, 'pending');
    const outOfOffice = (from: string, inReplyTo: string, n: number) =>
      mail({
        id: `<ooo${n}@away.test>`,
        from,
        subject: 'Automatic reply: Re: Invoice',
        text: 'I am out of the office until Monday.',
        inReplyTo,
        headers: ['Auto-Submitted: auto-replied', 'X-Auto-Response-Suppress: All'],
      });
    await server.append(outOfOffice('Away <away@away.test>', replies[0]!.external_id!, 1));
    await server.append(outOfOffice('Pat <pat@away.test>', replies[1]!.external_id!, 2));
    await processed(id, 4);
    const after = await messagesOf(id);
    expect(after.filter((m) => m.kind === 'message' && m.text.startsWith('I am out')).map((m) => m.thread_id)).toEqual([
      first!.thread_id,
      second!.thread_id,
    ]);
    expect(after.some((m) => m.kind === 'activity' && m.text.includes('reopened'))).toBe(false);
    expect(await statuses()).toEqual(['resolved', 'pending']);

    await server.append(
      mail({
        id: '<a2@away.test>',
        from: 'Away <away@away.test>',
        subject: 'Re: Invoice',
        text: 'Still wrong.',
        inReplyTo: replies[0]!.external_id!,
      }),
    );
    await processed(id, 5);
    expect(await statuses()).toEqual(['open', 'pending']);
  });

  it("answers the contact's last mail, not an auto-reply that came after it: its subject, its id, its Cc", async () => {
    const { server, id } = await readMailbox(
      [
        mail({
          id: '<c1@team.test>',
          from: 'Cy <cy@team.test>',
          subject: 'Contract',
          text: 'Please send the contract.',
          headers: ['Cc: Boss <boss@team.test>'],
        }),
      ],
      'contracts@mailbox.test',
    );
    await processed(id, 1);
    const [question] = await messagesOf(id);
    const first = await answer(question!.thread_id, 'Attached tomorrow.');
    await server.append(
      mail({
        id: '<c2@team.test>',
        from: 'Cy <cy@team.test>',
        subject: 'Automatic reply: Re: Contract',
        text: 'I am on leave.',
        inReplyTo: first.external_id!,
        headers: ['Auto-Submitted: auto-replied'],
      }),
    );
    await processed(id, 2);
    const second = await answer(question!.thread_id, 'Here it is.');
    expect(second.email).toMatchObject({ inReplyTo: '<c1@team.test>', subject: 'Re: Contract', cc: [{ email: 'boss@team.test' }] });
    const received = await waitFor(async () => smtp.mails.find((m) => m.mail.messageId === second.external_id), 'the second reply');
    expect(received.mail.subject).toBe('Re: Contract');
    expect(received.mail.inReplyTo).toBe('<c1@team.test>');
    expect(received.to.sort()).toEqual(['boss@team.test', 'cy@team.test']);
  });
});
