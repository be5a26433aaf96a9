import { afterAll, describe, expect, it } from 'vitest';
import { type FakeSmtp, startSmtpServer } from '../../harness/smtp.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';

const MAIL_SECRET = 'neutral-mail-secret-0456';
const smtp: FakeSmtp = await startSmtpServer();
afterAll(() => smtp.close());
const ctx = await useTestContext({
  workers: true,
  env: {
    INBOX_ALLOW_PRIVATE_SMTP: 'true',
    INBOX_INTEGRATIONS: JSON.stringify({ email: { webhookSecret: MAIL_SECRET }, sms: { webhookSecret: 'sms-secret-0123456789' } }),
  },
});
const tenant = await makeTenant(ctx.deps);
const ws = tenant.workspace.id;
const db = ctx.deps.db;
await makeConnection(ctx.deps, ws, { integrationKey: 'email', externalAccountId: 'help@replies.test', credentials: { smtpUrl: smtp.url } });

const inbound = async (payload: Record<string, unknown>) => {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/webhooks/email',
    headers: { 'content-type': 'application/json', 'x-vendor-auth': MAIL_SECRET },
    payload: { type: 'inbound', to: 'help@replies.test', text: 'Hello', ...payload },
  });
  expect(res.statusCode).toBe(200);
  return waitFor(
    () =>
      db
        .selectFrom('messages')
        .selectAll()
        .where('external_id', '=', payload.messageId as string)
        .executeTakeFirst(),
    `message ${payload.messageId}`,
  );
};
const reply = (threadId: number, payload: Record<string, unknown>) =>
  ctx.app.inject({ method: 'POST', url: `/v1/threads/${threadId}/messages`, headers: tenant.headers, payload });
const sent = (id: number) =>
  waitFor(
    () => db.selectFrom('messages').selectAll().where('id', '=', id).where('status', '=', 'sent').executeTakeFirst(),
    `message ${id} sent`,
  );

describe('replies on e-mail threads', () => {
  it('answer the last mail: threading headers, Re: subject, our Message-ID, its Cc kept, plain and HTML', async () => {
    const first = await inbound({
      messageId: '<q1@ada.test>',
      from: { email: 'ada@ada.test', name: 'Ada' },
      subject: 'Where is my parcel?',
      cc: [{ email: 'bo@ada.test' }, { email: 'help@replies.test' }],
      references: ['<older@ada.test>'],
    });
    const res = await reply(first.thread_id, { text: 'It left today.\n\nTracking follows.' });
    expect(res.statusCode, res.body).toBe(202);
    const queued = res.json().data;
    // Decided when queued, so a retry sends the very same mail.
    expect(queued.email).toMatchObject({
      inReplyTo: '<q1@ada.test>',
      from: { email: 'help@replies.test' },
      to: [{ email: 'ada@ada.test' }],
      cc: [{ email: 'bo@ada.test' }],
      subject: 'Re: Where is my parcel?',
    });
    expect(queued.email.messageId).toMatch(/^<[0-9a-f-]{36}@replies\.test>$/);
    const row = await sent(queued.id);
    expect(row.external_id).toBe(queued.email.messageId);

    const mail = smtp.mails.at(-1)!;
    expect(mail.mail.messageId).toBe(queued.email.messageId);
    expect(mail.mail.inReplyTo).toBe('<q1@ada.test>');
    expect(mail.mail.references).toEqual(['<older@ada.test>', '<q1@ada.test>']);
    expect(mail.mail.subject).toBe('Re: Where is my parcel?');
    expect(mail.to.sort()).toEqual(['ada@ada.test', 'bo@ada.test']);
    expect(mail.mail.text?.trim()).toBe('It left today.\n\nTracking follows.');
    expect(mail.mail.html).toContain('<p>It left today.</p><p>Tracking follows.</p>');

    // Ada's answer to our reply joins the thread.
    const answer = await inbound({
      messageId: '<q2@ada.test>',
      from: { email: 'ada@ada.test' },
      subject: 'Re: x',
      inReplyTo: row.external_id,
    });
    expect(answer.thread_id).toBe(first.thread_id);
  });

  it("answers a subject that another language's client marked as a reply with one Re:, never a growing chain", async () => {
    const subjects = [
      ['AW: Lieferung', 'Re: Lieferung'],
      ['SV: Re: Faktura', 'Re: Faktura'],
      ['Antw: AW: RE: Bestelling', 'Re: Bestelling'],
      ['RE[2]: Quote', 'Re: Quote'],
      ['Fwd: Invoice', 'Re: Fwd: Invoice'],
      ['Rechnung: Awaiting payment', 'Re: Rechnung: Awaiting payment'],
    ];
    for (const [i, [subject, expected]] of subjects.entries()) {
      const mail = await inbound({ messageId: `<s${i}@subj.test>`, from: { email: `s${i}@subj.test` }, subject });
      const res = await reply(mail.thread_id, { text: 'Noted.' });
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json().data.email.subject, subject).toBe(expected);
    }
  });

  it('keeps only the inbound Cc entries that are one mailbox: a list or line break adds no hidden recipient', async () => {
    const first = await inbound({
      messageId: '<h1@hid.test>',
      from: { email: 'hal@hid.test' },
      subject: 'Hidden',
      cc: [{ email: 'ivy@hid.test' }, { email: 'joe@hid.test\r\nBcc: eve@evil.test' }, 'kim@hid.test, eve@evil.test'],
    });
    const res = await reply(first.thread_id, { text: 'Noted.' });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json().data.email.cc).toEqual([{ email: 'ivy@hid.test' }]);
    await sent(res.json().data.id);
    expect(smtp.mails.at(-1)!.to.sort()).toEqual(['hal@hid.test', 'ivy@hid.test']);
  });

  it('takes cc, bcc and subject; Bcc reaches its address and never shows in the headers', async () => {
    const first = await inbound({
      messageId: '<c1@cy.test>',
      from: { email: 'cy@cy.test' },
      subject: 'Refund',
      cc: [{ email: 'dee@cy.test' }],
    });
    const res = await reply(first.thread_id, { text: 'Done.', cc: [], bcc: ['Audit@Acme.test'], subject: 'Your refund' });
    expect(res.statusCode, res.body).toBe(202);
    await sent(res.json().data.id);
    const mail = smtp.mails.at(-1)!;
    expect(mail.mail.subject).toBe('Your refund');
    expect(mail.mail.cc).toBeUndefined();
    expect(mail.mail.bcc).toBeUndefined();
    expect(mail.mail.headers.has('bcc')).toBe(false);
    expect(mail.to.sort()).toEqual(['audit@acme.test', 'cy@cy.test']);
    expect(res.json().data.email).toMatchObject({ cc: [], bcc: [{ email: 'audit@acme.test' }], subject: 'Your refund' });
  });

  it('fails a reply whose contact the SMTP server refuses, though its Cc took the mail', async () => {
    const first = await inbound({
      messageId: '<g1@gone.test>',
      from: { email: 'gone@gone.test' },
      subject: 'Closing my account',
      cc: [{ email: 'still@gone.test' }],
    });
    smtp.refuse('gone@gone.test', 550);
    const res = await reply(first.thread_id, { text: 'Done.' });
    expect(res.statusCode, res.body).toBe(202);
    const row = await waitFor(
      () => db.selectFrom('messages').selectAll().where('id', '=', res.json().data.id).where('status', '!=', 'queued').executeTakeFirst(),
      'the reply settled',
    );
    // The server took the Cc and refused the contact: the mail went to the Cc alone.
    expect(smtp.mails.at(-1)!.to).toEqual(['still@gone.test']);
    expect(row.status).toBe('failed');
    expect(row.error).toBe(
      'email: the SMTP server refused the recipient gone@gone.test: 550 5.1.1 Mailbox unavailable; the mail went only to its Cc/Bcc',
    );
  });

  it('refuses cc/bcc/subject off e-mail threads, on notes, and addresses that are none', async () => {
    const first = await inbound({ messageId: '<r1@ed.test>', from: { email: 'ed@ed.test' }, subject: 'Hi' });
    const bad = await reply(first.thread_id, { text: 'x', cc: ['not an address'] });
    expect(bad.statusCode).toBe(422);
    expect(bad.json().error.code).toBe('validation_failed');
    const note = await reply(first.thread_id, { text: 'x', private: true, bcc: ['a@b.test'] });
    expect(note.statusCode).toBe(422);
    const sms = await makeConnection(ctx.deps, ws, { integrationKey: 'sms', externalAccountId: '+14155550100' });
    const thread = await db
      .insertInto('threads')
      .values({
        workspace_id: ws,
        connection_id: sms.id,
        contact_id: (await db.insertInto('contacts').values({ workspace_id: ws }).returning('id').executeTakeFirstOrThrow()).id,
        last_message_preview: null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const off = await reply(thread.id, { text: 'x', subject: 'Hello' });
    expect(off.statusCode).toBe(422);
    expect(off.json().error.message).toMatch(/e-mail thread/);
    expect(
      await db
        .selectFrom('messages')
        .select('id')
        .where('thread_id', 'in', [first.thread_id, thread.id])
        .where('direction', '=', 'outbound')
        .execute(),
    ).toEqual([]);
  });

  it('marks an away message Auto-Submitted, and sends none to mail from the mailbox itself', async () => {
    const away = await makeTenant(ctx.deps);
    // Closed today whatever the date the test runs on: yesterday, today and tomorrow are holidays.
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const hours = { timezone: 'UTC', weekly: { mon: [['09:00', '17:00']] }, holidays: [day(-1), day(0), day(1)] };
    const patch = (url: string, payload: object) => ctx.app.inject({ method: 'PATCH', url, headers: away.headers, payload });
    expect((await patch('/v1/workspace', { businessHours: hours })).statusCode).toBe(200);
    const connection = await makeConnection(ctx.deps, away.workspace.id, {
      integrationKey: 'email',
      externalAccountId: 'away@away.test',
      credentials: { smtpUrl: smtp.url },
    });
    expect((await patch(`/v1/connections/${connection.id}`, { awayMessage: 'Back on Monday.' })).statusCode).toBe(200);
    const mailTo = (messageId: string, from: string) =>
      inbound({ to: 'away@away.test', messageId, from: { email: from }, subject: 'Weekend' });

    const own = await mailTo('<loop1@away.test>', 'Away@Away.test');
    const ada = await mailTo('<w1@ada.test>', 'ada@ada.test');
    // The answer to the contact's mail says it was written by a machine (RFC 3834), so her
    // out-of-office reply does not answer it back.
    const mail = await waitFor(
      async () => smtp.mails.find((m) => m.to.includes('ada@ada.test') && m.mail.subject === 'Re: Weekend'),
      'away',
    );
    expect(mail.mail.text?.trim()).toBe('Back on Monday.');
    expect(mail.mail.headers.get('auto-submitted')).toBe('auto-replied');
    expect(mail.mail.inReplyTo).toBe('<w1@ada.test>');
    // The mailbox's own mail come back is no one to answer.
    const outbound = await db
      .selectFrom('messages')
      .select(['thread_id', 'automation'])
      .where('thread_id', 'in', [own.thread_id, ada.thread_id])
      .where('direction', '=', 'outbound')
      .where('kind', '=', 'message')
      .execute();
    expect(outbound).toEqual([{ thread_id: ada.thread_id, automation: true }]);
    expect(smtp.mails.filter((m) => m.to.includes('away@away.test'))).toEqual([]);
  });
});
