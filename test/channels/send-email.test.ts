import { type AddressInfo, createServer, type Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeSmtp, startSmtpServer } from '../../harness/smtp.js';
import type { SendCredentials, SendOutcome, SendTarget } from '../../src/channels/channel.js';
import { firstLineSubject } from '../../src/channels/email.js';
import { adapters } from '../../src/channels/index.js';
import { parseSmtpUrl, SMTP_UNREACHABLE } from '../../src/net/smtp.js';
import { closedPort, silentServer } from '../helpers/sockets.js';

// The test's SMTP servers listen on loopback: these sends allow private addresses.
const OPTIONS = { timeoutMs: 5_000, smtp: { allowPrivate: true } };

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
  async function sendMail(
    t: SendTarget = target,
    credentials: SendCredentials = { smtpUrl: smtp.url },
    options = OPTIONS,
  ): Promise<SendOutcome> {
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

  it('never doubles Re:, and sends no threading headers when nothing is known (the subject is then the first line)', async () => {
    await sendMail({ ...target, replyTo: { subject: 'RE: Invoice question' } });
    expect(smtp.mails[0]?.mail.subject).toBe('RE: Invoice question');
    expect(smtp.mails[0]?.mail.inReplyTo).toBeUndefined();
    await sendMail({ ...target, replyTo: undefined });
    expect(smtp.mails[1]?.mail.subject).toBe(target.text);
    expect(smtp.mails[1]?.mail.references).toBeUndefined();
  });

  it('a mail that answers none takes its first line as subject, cut at a word within 78 characters', () => {
    expect(firstLineSubject('\n  Your table is ready.\nSee you at 8.', 0)).toBe('Your table is ready.');
    const long = 'Your order 4471 left our warehouse this morning and should reach you by Friday afternoon';
    const subject = firstLineSubject(long, 0);
    expect(subject).toBe('Your order 4471 left our warehouse this morning and should reach you by…');
    expect(subject.length).toBeLessThanOrEqual(78);
    // One long word with an emoji across the cut: the emoji stays whole.
    expect(firstLineSubject(`${'a'.repeat(76)}😀${'b'.repeat(20)}`, 0)).toBe(`${'a'.repeat(76)}😀…`);
    expect(firstLineSubject('', 1)).toBe('A file for you');
    expect(firstLineSubject('   ', 2)).toBe('Files for you');
  });

  it('never reads the recipient as a list: a comma, semicolon or line break in it → failed, nothing sent', async () => {
    for (const to of ['dana@example.org, eve@evil.test', 'dana@example.org\r\nBcc: eve@evil.test', 'x <dana@example.org>; eve@evil.test']) {
      expect(await sendMail({ ...target, to }), to).toEqual({ outcome: 'failed', error: 'email: the recipient is not one e-mail address' });
    }
    expect(smtp.mails).toHaveLength(0);
  });

  it('550 → failed with the server text; 451 → retry', async () => {
    smtp.refuse('gone@example.org', 550);
    expect(await sendMail({ ...target, to: 'gone@example.org' })).toEqual({
      outcome: 'failed',
      error: expect.stringContaining('550 5.1.1 Mailbox unavailable'),
    });
    smtp.refuse('later@example.org', 451);
    expect(await sendMail({ ...target, to: 'later@example.org' })).toEqual({
      outcome: 'retry',
      error: expect.stringContaining('451 4.7.1 Greylisted'),
    });
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
      const outcome = await sendMail(target, { smtpUrl: `smtp://127.0.0.1:${silent.port}` }, { ...OPTIONS, timeoutMs: 300 });
      expect(outcome.outcome).toBe('retry');
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      await silent.close();
    }
  });

  it('no smtpUrl → failed naming it; a URL that is not smtp(s) → failed', async () => {
    expect(await sendMail(target, {})).toEqual({ outcome: 'failed', error: expect.stringContaining('no credentials (smtpUrl missing)') });
    expect(await sendMail(target, { smtpUrl: `http://u:${PASS}@127.0.0.1:25` })).toEqual({
      outcome: 'failed',
      error: 'email: smtpUrl must be an smtp:// or smtps:// URL',
    });
  });
});

describe('email send: where an smtpUrl may reach', () => {
  const target: SendTarget = { accountId: 'support@acme.test', to: 'dana@example.org', text: 'hello', messageId: 1 };
  const BANNER = 'SSH-2.0-OpenSSH_9.6 build-box-internal';

  /** A TCP service that is not SMTP: it greets with its own banner. */
  async function bannerServer() {
    const sockets = new Set<Socket>();
    let connections = 0;
    const server = createServer((s) => {
      connections++;
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.write(`${BANNER}\r\n`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    return {
      port: (server.address() as AddressInfo).port,
      connections: () => connections,
      close: () =>
        new Promise<void>((resolve) => {
          for (const s of sockets) s.destroy();
          server.close(() => resolve());
        }),
    };
  }

  it('reads host, port, security and auth only: query options and the path are ignored', () => {
    expect(
      parseSmtpUrl(
        'smtp://u%40x:p%2Fw@mail.example.org:2525/ignored?debug=true&logger=true&proxy=http://10.0.0.1&tls.rejectUnauthorized=false',
      ),
    ).toEqual({
      secure: false,
      host: 'mail.example.org',
      port: 2525,
      auth: { user: 'u@x', pass: 'p/w' },
    });
    expect(parseSmtpUrl('smtps://mail.example.org')).toEqual({ secure: true, host: 'mail.example.org', port: 465 });
    expect(parseSmtpUrl('smtp://[::1]:25')).toEqual({ secure: false, host: '::1', port: 25 });
    expect(parseSmtpUrl('http://mail.example.org')).toBeUndefined();
    expect(parseSmtpUrl('not a url')).toBeUndefined();
  });

  it('a loopback or private host is refused without connecting, unless private SMTP is allowed', async () => {
    const banner = await bannerServer();
    try {
      for (const host of ['127.0.0.1', '[::1]', '[::ffff:127.0.0.1]', '10.1.2.3', '169.254.169.254']) {
        const outcome = await adapters.email.send!(target, { smtpUrl: `smtp://${host}:${banner.port}` }, { timeoutMs: 2_000 });
        expect(outcome, host).toEqual({
          outcome: 'failed',
          error: expect.stringMatching(/^email: refused: .* address; SMTP servers must be on public addresses$/),
        });
      }
      expect(banner.connections()).toBe(0);
      // Allowed, the banner service is reached, and its words are still not shown.
      const outcome = await adapters.email.send!(
        target,
        { smtpUrl: `smtp://127.0.0.1:${banner.port}` },
        { timeoutMs: 2_000, smtp: { allowPrivate: true } },
      );
      expect(banner.connections()).toBe(1);
      expect(outcome).toEqual({ outcome: 'retry', error: `email: ${SMTP_UNREACHABLE}` });
    } finally {
      await banner.close();
    }
  });

  it('a name is resolved once, checked, and never named with its address; the connection goes to the checked address', async () => {
    const smtp = await startSmtpServer();
    const port = new URL(smtp.url).port;
    try {
      const internal = async () => [{ address: '10.20.30.40', family: 4 }];
      const refused = await adapters.email.send!(
        target,
        { smtpUrl: `smtp://mail.internal.test:${port}` },
        { timeoutMs: 2_000, smtp: { allowPrivate: false, resolve: internal } },
      );
      expect(refused).toEqual({
        outcome: 'failed',
        error: 'email: refused: mail.internal.test resolves to a private address; SMTP servers must be on public addresses',
      });
      // A name only this resolver knows: the mail arrives, so the socket went to the address
      // it answered (the name is never looked up a second time).
      let lookups = 0;
      const once = async () => {
        lookups++;
        return [{ address: '127.0.0.1', family: 4 }];
      };
      const sent = await adapters.email.send!(
        target,
        { smtpUrl: `smtp://mail.only-here.test:${port}` },
        { timeoutMs: 5_000, smtp: { allowPrivate: true, resolve: once } },
      );
      expect(sent.outcome).toBe('sent');
      expect(lookups).toBe(1);
      expect(smtp.mails).toHaveLength(1);
    } finally {
      await smtp.close();
    }
  });
});
