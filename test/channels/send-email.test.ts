import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SendCredentials, SendOutcome, SendTarget } from '../../src/channels/channel.js';
import { adapters } from '../../src/channels/index.js';
import { startSmtpServer, type FakeSmtp } from '../../harness/smtp.js';
import { closedPort, silentServer } from '../helpers/sockets.js';

const OPTIONS = { timeoutMs: 5_000 };

describe('email send (SMTP)', () => {
  const PASS = 'p@ss/word-9f8e7d6c';
  let smtp: FakeSmtp;
  beforeAll(async () => {
    smtp = await startSmtpServer({ auth: { user: 'support@acme.test', pass: PASS } });
  });
  afterAll(() => smtp.close());
  beforeEach(() => smtp.reset());

  const target: SendTarget = {
    accountId: 'support@acme.test',
    to: 'dana@example.org',
    text: 'The invoice is attached to your account page.',
    messageId: 1,
    replyTo: { subject: 'Invoice question', messageId: '<abc@mail.example.org>' },
  };
  async function sendMail(t: SendTarget = target, credentials: SendCredentials = { smtpUrl: smtp.url }, options = OPTIONS): Promise<SendOutcome> {
    const outcome = await adapters.email.send!(t, credentials, options);
    if (outcome.outcome !== 'sent') {
      expect(outcome.error).not.toContain(PASS);
      expect(outcome.error).not.toContain(encodeURIComponent(PASS));
    }
    return outcome;
  }

  it('sends in the thread: From, To, Re: subject, In-Reply-To and References; the id is the Message-ID sent', async () => {
    const outcome = await sendMail();
    expect(smtp.mails).toHaveLength(1);
    const { from, to, mail } = smtp.mails[0]!;
    expect(from).toBe('support@acme.test');
    expect(to).toEqual(['dana@example.org']);
    expect(mail.from?.text).toBe('support@acme.test');
    expect(mail.subject).toBe('Re: Invoice question');
    expect(mail.inReplyTo).toBe('<abc@mail.example.org>');
    expect(mail.references).toBe('<abc@mail.example.org>');
    expect(mail.text?.trim()).toBe(target.text);
    expect(mail.messageId).toMatch(/^<.+@acme\.test>$/);
    expect(outcome).toEqual({ outcome: 'sent', externalId: mail.messageId });
  });

  it('never doubles Re:, and sends no threading headers when nothing is known', async () => {
    await sendMail({ ...target, replyTo: { subject: 'RE: Invoice question' } });
    expect(smtp.mails[0]?.mail.subject).toBe('RE: Invoice question');
    expect(smtp.mails[0]?.mail.inReplyTo).toBeUndefined();
    await sendMail({ ...target, replyTo: undefined });
    expect(smtp.mails[1]?.mail.subject).toBeUndefined();
    expect(smtp.mails[1]?.mail.references).toBeUndefined();
  });

  it('550 → failed with the server text; 451 → retry', async () => {
    smtp.refuse('gone@example.org', 550);
    expect(await sendMail({ ...target, to: 'gone@example.org' })).toEqual({ outcome: 'failed', error: expect.stringContaining('550 5.1.1 Mailbox unavailable') });
    smtp.refuse('later@example.org', 451);
    expect(await sendMail({ ...target, to: 'later@example.org' })).toEqual({ outcome: 'retry', error: expect.stringContaining('451 4.7.1 Greylisted') });
    expect(smtp.mails).toHaveLength(0);
  });

  it('a wrong password → failed (535), and the password is not in the text', async () => {
    const outcome = await sendMail(target, { smtpUrl: smtp.url.replace(encodeURIComponent(PASS), 'wrong') });
    expect(outcome).toEqual({ outcome: 'failed', error: expect.stringContaining('535') });
  });

  it('a refused connection → retry', async () => {
    const outcome = await sendMail(target, { smtpUrl: `smtp://127.0.0.1:${await closedPort()}` });
    expect(outcome.outcome).toBe('retry');
  });

  it('a server that never greets → retry once the timeout has passed', async () => {
    const silent = await silentServer();
    try {
      const started = Date.now();
      const outcome = await sendMail(target, { smtpUrl: `smtp://127.0.0.1:${silent.port}` }, { timeoutMs: 300 });
      expect(outcome.outcome).toBe('retry');
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      await silent.close();
    }
  });

  it('no smtpUrl → failed naming it; a URL that is not smtp(s) → failed', async () => {
    expect(await sendMail(target, {})).toEqual({ outcome: 'failed', error: expect.stringContaining('no credentials (smtpUrl missing)') });
    expect(await sendMail(target, { smtpUrl: `http://u:${PASS}@127.0.0.1:25` })).toEqual({ outcome: 'failed', error: 'email: smtpUrl must be an smtp:// or smtps:// URL' });
  });
});
