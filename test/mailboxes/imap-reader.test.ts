import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { type FakeImap, startImapServer } from '../../harness/imap.js';
import { type FakeSmtp, startSmtpServer } from '../../harness/smtp.js';
import { MailboxReaders } from '../../src/mailboxes/mailbox-readers.js';
import { SECRET_KEY_HEX, useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { connectImapMailbox, rawMail } from '../helpers/mailboxes.js';
import { waitFor } from '../helpers/webhooks.js';

/** An RFC 822 mail as a mail server would hold it; a reply names its parent in References too. */
const mail = (m: { id?: string; from?: string; subject?: string; text: string; inReplyTo?: string; to?: string }) =>
  rawMail({ ...m, ...(m.inReplyTo ? { references: m.inReplyTo } : {}) });

const ctx = await useTestContext({ workers: true, env: { INBOX_ALLOW_PRIVATE_SMTP: 'true' } });
const db = ctx.deps.db;
const tenant = await makeTenant(ctx.deps);
const smtpAuth = { user: 'support@mailbox.test', pass: 'app-password-0123' };
const smtp: FakeSmtp = await startSmtpServer({ auth: smtpAuth });
const servers: FakeImap[] = [];
const readers: MailboxReaders[] = [];
const children: ChildProcess[] = [];
// A test's readers stop with it: each holds database clients for every mailbox it reads, and
// those left running by earlier tests would take the pool the next test's requests need.
afterEach(async () => {
  for (const r of readers.splice(0)) await r.stop();
});

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  for (const r of readers) await r.stop();
  for (const s of servers) await s.close();
  await smtp.close();
});

async function imapServer(initial: string[] = []): Promise<FakeImap> {
  const server = await startImapServer({ initial });
  servers.push(server);
  return server;
}

function startReaders(options: ConstructorParameters<typeof MailboxReaders>[1] = {}): MailboxReaders {
  const r = new MailboxReaders(ctx.deps, { scanMs: 100, ...options });
  readers.push(r);
  r.start();
  return r;
}

/** An `email.imap` connection on `server` sending through the test's SMTP server. */
async function connectMailbox(server: FakeImap, account: string): Promise<number> {
  const data = await connectImapMailbox(ctx.app, tenant.headers, server, { account, smtpUrl: smtp.url.replace(/\/\/[^@]*@/, '//') });
  expect(data).toMatchObject({ integrationKey: 'email.imap', imapFolder: 'INBOX', webhookUrl: null, hasCredentials: true });
  return data.id;
}

const messagesOf = (connectionId: number) =>
  db
    .selectFrom('messages')
    .innerJoin('threads', 'threads.id', 'messages.thread_id')
    .select(['messages.id', 'messages.external_id', 'messages.thread_id', 'messages.text', 'messages.email', 'messages.direction'])
    .where('threads.connection_id', '=', connectionId)
    .orderBy('messages.id')
    .execute();

const inboxRows = async (connectionId: number) =>
  (
    await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_inbox w JOIN imap_messages i ON i.delivery_id = w.id
      WHERE i.connection_id = ${connectionId}`.execute(db)
  ).rows[0]!.n;

describe('email.imap mailboxes', () => {
  it('refuse a connection whose credentials or folder do not fit, with 422 and no row', async () => {
    const post = (payload: Record<string, unknown>) =>
      ctx.app.inject({ method: 'POST', url: '/v1/connections', headers: tenant.headers, payload: { name: 'Bad', ...payload } });
    const login = { smtpUrl: 'smtps://smtp.example.com:465', username: 'a@example.com', password: 'pw' };
    const cases = [
      { integrationKey: 'email.imap', externalAccountId: 'a@example.com', credentials: { ...login, imapUrl: 'https://imap.example.com' } },
      { integrationKey: 'email.imap', externalAccountId: 'a@example.com', credentials: login },
      { integrationKey: 'email.imap', externalAccountId: 'not an address' },
      { integrationKey: 'email', externalAccountId: 'b@example.com', imapFolder: 'INBOX' },
    ];
    for (const body of cases) {
      const res = await post(body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
    const rows = await db.selectFrom('connections').select('id').where('name', '=', 'Bad').execute();
    expect(rows).toEqual([]);
  });

  it('turn new mail into threads as it arrives (IDLE), a reply joining its conversation, nothing marked read', async () => {
    const server = await imapServer([mail({ id: '<old@ada.test>', from: 'Ada <ada@ada.test>', subject: 'Already there', text: 'First.' })]);
    const id = await connectMailbox(server, 'Support@Mailbox.test');
    // The poll is an hour away: only IDLE can bring the later mails in time.
    startReaders({ pollMs: 3_600_000 });
    await waitFor(async () => (await messagesOf(id)).length === 1, 'the mail already in the folder');
    await server.append(mail({ id: '<q1@ada.test>', from: 'Ada <ada@ada.test>', subject: 'Parcel', text: 'Where is it?' }));
    await server.append(
      mail({ id: '<q2@ada.test>', from: 'Ada <ada@ada.test>', subject: 'Re: Parcel', text: 'Any news?', inReplyTo: '<q1@ada.test>' }),
    );
    const all = await waitFor(async () => {
      const rows = await messagesOf(id);
      return rows.length === 3 && rows;
    }, 'the new mails');
    const [old, q1, q2] = all;
    expect(q1!.external_id).toBe('<q1@ada.test>');
    expect(q1!.text).toBe('Where is it?');
    expect(q1!.email).toMatchObject({
      subject: 'Parcel',
      from: { email: 'ada@ada.test', name: 'Ada' },
      to: [{ email: 'support@mailbox.test' }],
    });
    expect(q2!.thread_id).toBe(q1!.thread_id);
    expect(old!.thread_id).not.toBe(q1!.thread_id);
    expect(server.messages().every((m) => !m.flags.includes('\\Seen'))).toBe(true);
    const state = await db.selectFrom('imap_mailbox_state').selectAll().where('connection_id', '=', id).executeTakeFirstOrThrow();
    expect(Number(state.last_uid)).toBe(3);
  });

  it('reads a renumbered folder (new UIDVALIDITY) again without a duplicate, then goes on', async () => {
    const server = await imapServer([
      mail({ id: '<u1@bo.test>', from: 'bo@bo.test', text: 'One' }),
      mail({ id: '<u2@bo.test>', from: 'bo@bo.test', text: 'Two' }),
    ]);
    const id = await connectMailbox(server, 'renumbered@mailbox.test');
    startReaders({ pollMs: 3_600_000 });
    await waitFor(async () => (await messagesOf(id)).length === 2, 'the first two mails');
    server.renumber('INBOX', 77);
    server.dropConnections();
    await waitFor(
      async () =>
        Number(
          (await db.selectFrom('imap_mailbox_state').select('uid_validity').where('connection_id', '=', id).executeTakeFirst())
            ?.uid_validity,
        ) === 77,
      'the new UIDVALIDITY',
    );
    await server.append(mail({ id: '<u3@bo.test>', from: 'bo@bo.test', text: 'Three' }));
    await waitFor(async () => (await messagesOf(id)).length === 3, 'the mail after the renumbering');
    expect(await inboxRows(id)).toBe(3);
  });

  it('a holder killed mid-batch loses nothing and doubles nothing: another process takes over', async () => {
    const initial = Array.from({ length: 12 }, (_, i) => mail({ id: `<k${i}@cy.test>`, from: `cy${i}@cy.test`, text: `Mail ${i}` }));
    const server = await imapServer(initial);
    // Only the process about to crash reads it at first.
    for (const r of readers.splice(0)) await r.stop();
    const id = await connectMailbox(server, 'crash@mailbox.test');
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/mailboxes/imap-holder.ts'], {
      env: { ...process.env, INBOX_TEST_DATABASE_URL: ctx.database.url, INBOX_SECRET_KEY: SECRET_KEY_HEX, BATCH_SIZE: '5' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (d: Buffer) => d.toString().includes('mid-batch') && resolve());
      child.once('exit', (code) => reject(new Error(`the holder exited (${code}) before its second batch`)));
    });
    // The first batch is committed; the second is written and not committed when the holder dies.
    expect(await inboxRows(id)).toBe(5);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    const successor = startReaders({ batchSize: 5 });
    await waitFor(async () => successor.held().includes(id), 'the takeover');
    const all = await waitFor(async () => {
      const rows = await messagesOf(id);
      return rows.length >= 12 && rows;
    }, 'every mail');
    expect(new Set(all.map((m) => m.external_id)).size).toBe(12);
    expect(await inboxRows(id)).toBe(12);
  });

  it('sends replies over SMTP with the mailbox login and keeps a copy in Sent', async () => {
    const server = await imapServer([mail({ id: '<r1@di.test>', from: 'di@di.test', subject: 'Refund', text: 'Please.' })]);
    const id = await connectMailbox(server, 'sender@mailbox.test');
    startReaders({ pollMs: 3_600_000 });
    const [inbound] = await waitFor(async () => {
      const rows = await messagesOf(id);
      return rows.length === 1 && rows;
    }, 'the mail');
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${inbound!.thread_id}/messages`,
      headers: tenant.headers,
      payload: { text: 'Done.', bcc: ['audit@di.test'] },
    });
    expect(res.statusCode, res.body).toBe(202);
    const sent = await waitFor(
      () => db.selectFrom('messages').selectAll().where('id', '=', res.json().data.id).where('status', '=', 'sent').executeTakeFirst(),
      'the reply sent',
    );
    const received = smtp.mails.find((m) => m.mail.messageId === sent.external_id);
    expect(received?.to.sort()).toEqual(['audit@di.test', 'di@di.test']);
    expect(received?.mail.inReplyTo).toBe('<r1@di.test>');
    const copy = await waitFor(async () => server.messages('Sent')[0], 'the copy in Sent');
    expect(copy.raw).toContain(`Message-ID: ${sent.external_id}`);
    expect(copy.raw).not.toContain('audit@di.test');
    expect(copy.flags).toContain('\\Seen');
  });

  it('fails a reply whose contact the SMTP server refused while its Bcc took it, and keeps the copy sent', async () => {
    const server = await imapServer([mail({ id: '<gone1@gone.test>', from: 'gone@gone.test', subject: 'Bye', text: 'Close it.' })]);
    const id = await connectMailbox(server, 'closing@mailbox.test');
    startReaders({ pollMs: 3_600_000 });
    const [inbound] = await waitFor(async () => {
      const rows = await messagesOf(id);
      return rows.length === 1 && rows;
    }, 'the mail');
    smtp.refuse('gone@gone.test', 550);
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${inbound!.thread_id}/messages`,
      headers: tenant.headers,
      payload: { text: 'Closed.', bcc: ['audit@gone.test'] },
    });
    expect(res.statusCode, res.body).toBe(202);
    const row = await waitFor(
      () => db.selectFrom('messages').selectAll().where('id', '=', res.json().data.id).where('status', '!=', 'queued').executeTakeFirst(),
      'the reply settled',
    );
    expect(row).toMatchObject({
      status: 'failed',
      error: 'email: the SMTP server refused the recipient gone@gone.test: 550 5.1.1 Mailbox unavailable; the mail went only to its Cc/Bcc',
    });
    expect(smtp.mails.find((m) => m.mail.subject === 'Re: Bye')?.to).toEqual(['audit@gone.test']);
    // It went to the Bcc: the Sent folder keeps what was sent.
    const copy = await waitFor(async () => server.messages('Sent')[0], 'the copy in Sent');
    expect(copy.raw).toContain('Subject: Re: Bye');
  });

  it("never names its own key of a mail without a Message-ID in a reply: the thread's real ids, or none", async () => {
    const server = await imapServer([
      mail({ from: 'fa@fa.test', subject: 'No id here', text: 'Lone mail.' }),
      mail({ id: '<f1@fa.test>', from: 'gu@fa.test', subject: 'Order', text: 'First.' }),
    ]);
    const id = await connectMailbox(server, 'keys@mailbox.test');
    const reader = startReaders({ pollMs: 3_600_000 });
    await waitFor(async () => (await messagesOf(id)).length === 2, 'the two mails');
    await server.append(mail({ from: 'gu@fa.test', subject: 'Re: Order', text: 'Second, no id.', inReplyTo: '<f1@fa.test>' }));
    const rows = await waitFor(async () => {
      const r = await messagesOf(id);
      return r.length === 3 && r;
    }, 'the mail without an id');
    const [loneMail, firstMail, second] = ['Lone mail.', 'First.', 'Second, no id.'].map((text) => rows.find((r) => r.text === text)!);
    expect(loneMail!.external_id).toMatch(/^sha256:/);
    expect(second!.external_id).toMatch(/^sha256:/);
    expect(second!.thread_id).toBe(firstMail!.thread_id);
    const answer = async (threadId: number) => {
      const res = await ctx.app.inject({
        method: 'POST',
        url: `/v1/threads/${threadId}/messages`,
        headers: tenant.headers,
        payload: { text: 'Answered.' },
      });
      expect(res.statusCode, res.body).toBe(202);
      const sent = await waitFor(
        () => db.selectFrom('messages').selectAll().where('id', '=', res.json().data.id).where('status', '=', 'sent').executeTakeFirst(),
        'the reply sent',
      );
      return { queued: res.json().data.email, received: smtp.mails.find((m) => m.mail.messageId === sent.external_id)! };
    };
    const lone = await answer(loneMail!.thread_id);
    expect(lone.queued.inReplyTo).toBeNull();
    expect(lone.received.mail.inReplyTo).toBeUndefined();
    expect(lone.received.mail.references).toBeUndefined();
    const threaded = await answer(firstMail!.thread_id);
    expect(threaded.queued.inReplyTo).toBe('<f1@fa.test>');
    expect(threaded.received.mail.inReplyTo).toBe('<f1@fa.test>');
    expect(threaded.received.mail.references).toBe('<f1@fa.test>');
    expect(threaded.received.mail.headerLines.map((h) => h.line).join('\n')).not.toContain('sha256:');

    // A mail without an id that answers a mail of ours the thread does not hold: answered as
    // that mail, so the reply threads in the customer's client.
    await server.append(mail({ from: 'ha@ha.test', subject: 'Still broken', text: 'No id, a reply.', inReplyTo: '<ours-1@mailbox.test>' }));
    const reply = await waitFor(async () => (await messagesOf(id)).find((r) => r.text === 'No id, a reply.'), 'the reply without an id');
    expect(reply.external_id).toMatch(/^sha256:/);
    const named = await answer(reply.thread_id);
    expect(named.queued.inReplyTo).toBe('<ours-1@mailbox.test>');
    expect(named.received.mail.inReplyTo).toBe('<ours-1@mailbox.test>');
    expect(named.received.mail.references).toBe('<ours-1@mailbox.test>');
    // Its mailbox holds a connection of the pool while it reads: the later tests need it.
    await reader.stop();
  });

  it('stores a mail it cannot read and fails it with the reason; the next mail still arrives', async () => {
    const server = await imapServer([mail({ id: '<nofrom@x.test>', text: 'Who sent me?' })]);
    const id = await connectMailbox(server, 'broken@mailbox.test');
    startReaders({ pollMs: 3_600_000 });
    const row = await waitFor(
      () =>
        db
          .selectFrom('webhook_inbox')
          .innerJoin('imap_messages', 'imap_messages.delivery_id', 'webhook_inbox.id')
          .select(['webhook_inbox.status', 'webhook_inbox.last_error', 'webhook_inbox.raw_body'])
          .where('imap_messages.connection_id', '=', id)
          .where('webhook_inbox.status', '=', 'failed')
          .executeTakeFirst(),
      'the failed row',
    );
    expect(row.last_error).toContain('the mail has no From address');
    expect(row.raw_body).toContain('Who sent me?');
    await server.append(mail({ id: '<after@x.test>', from: 'ed@x.test', text: 'Me.' }));
    await waitFor(async () => (await messagesOf(id)).length === 1, 'the next mail');
  });
  it('reads a mail whose Message-ID or subject cannot be stored as written beside the others, each once', async () => {
    // A Message-ID too long to index, one with a NUL, and a subject decoding to a lone surrogate.
    const long = `<${randomBytes(2400).toString('base64url')}@x.test>`;
    const server = await imapServer([
      mail({ id: long, from: 'ann@x.test', text: 'Long id.' }),
      mail({ id: '<nul\u0000@x.test>', from: 'bob@x.test', text: 'NUL id.' }),
      mail({ id: '<odd@x.test>', from: 'cy@x.test', subject: '=?UTF-16BE?B?2AA=?=', text: 'Odd subject.' }),
      mail({ id: '<fine@x.test>', from: 'di@x.test', text: 'Fine.' }),
    ]);
    const id = await connectMailbox(server, 'poisoned@mailbox.test');
    startReaders({ pollMs: 3_600_000 });
    const texts = await waitFor(async () => {
      const rows = await messagesOf(id);
      return rows.length === 4 ? rows.map((r) => r.text).sort() : undefined;
    }, 'the four mails');
    expect(texts).toEqual(['Fine.', 'Long id.', 'NUL id.', 'Odd subject.']);
    const keys = await db.selectFrom('imap_messages').select('message_key').where('connection_id', '=', id).execute();
    expect(keys.map((k) => k.message_key)).toContain('<nul\ufffd@x.test>');
    expect(keys.every((k) => k.message_key.length < 1000)).toBe(true);
  });

  it('says on the connection and in its check why a mailbox cannot be read: a refused login, a folder it has not', async () => {
    const server = await imapServer([mail({ id: '<nofolder@x.test>', from: 'ed@x.test', text: 'Hi' })]);
    const wrongPassword = await connectMailbox(server, 'wrongpw@mailbox.test');
    const noFolder = await connectMailbox(server, 'nofolder@mailbox.test');
    const patch = async (id: number, payload: object) => {
      const res = await ctx.app.inject({ method: 'PATCH', url: `/v1/connections/${id}`, headers: tenant.headers, payload });
      expect(res.statusCode, res.body).toBe(200);
    };
    await patch(wrongPassword, {
      credentials: { imapUrl: server.url, smtpUrl: smtp.url.replace(/\/\/[^@]*@/, '//'), username: server.user, password: 'not-it' },
    });
    await patch(noFolder, { imapFolder: 'Archive/2025' });
    startReaders({ pollMs: 3_600_000 });
    const lastError = (id: number) =>
      waitFor(
        async () => (await db.selectFrom('connections').select('last_error').where('id', '=', id).executeTakeFirstOrThrow()).last_error,
        `connection ${id} says why`,
      );
    expect(await lastError(wrongPassword)).toBe('email.imap: the IMAP server 127.0.0.1 refused the login');
    const folderError = 'the IMAP server has no folder "Archive/2025" this login can open: set imapFolder to one it has';
    expect(await lastError(noFolder)).toBe(`email.imap: ${folderError}`);
    // The check says the same before anyone waits for the reader.
    const check = async (id: number) => {
      const res = await ctx.app.inject({ method: 'POST', url: `/v1/connections/${id}/check`, headers: tenant.headers, payload: {} });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data;
    };
    expect(await check(wrongPassword)).toEqual({ ok: false, message: 'email.imap: the IMAP server 127.0.0.1 refused the login' });
    expect(await check(noFolder)).toEqual({ ok: false, message: `email.imap: ${folderError}` });
    expect(await messagesOf(wrongPassword)).toHaveLength(0);
    expect(await messagesOf(noFolder)).toHaveLength(0);
  });

  it('says on the connection to set credentials that do not open again, and reads nothing', async () => {
    const server = await imapServer([mail({ id: '<sealed@x.test>', from: 'ed@x.test', text: 'Hi' })]);
    const id = await connectMailbox(server, 'sealed@mailbox.test');
    // The sealed value is one that does not open: another key's, or altered.
    await db
      .updateTable('connections')
      .set({ credentials_sealed: Buffer.from(`01${'00'.repeat(40)}`, 'hex') })
      .where('id', '=', id)
      .execute();
    startReaders({ pollMs: 3_600_000 });
    // Waited for in the table, then read once through the API, as an admin would see it.
    await waitFor(
      async () => (await db.selectFrom('connections').select('last_error').where('id', '=', id).executeTakeFirstOrThrow()).last_error,
      'the connection says why',
    );
    const res = await ctx.app.inject({ method: 'GET', url: '/v1/connections', headers: tenant.headers });
    expect(res.statusCode, res.body).toBe(200);
    const lastError = (res.json().data as { id: number; lastError: string | null }[]).find((c) => c.id === id)?.lastError;
    expect(lastError).toContain('set them again with PATCH /v1/connections/:id');
    expect(await messagesOf(id)).toHaveLength(0);
  });
});
