import { afterAll, describe, expect, it } from 'vitest';
import { startImapServer } from '../../harness/imap.js';
import { startSmtpServer } from '../../harness/smtp.js';
import { MailboxReaders } from '../../src/mailboxes/mailbox-readers.js';
import { useConsole } from '../helpers/console.js';
import { seriousViolations, tabTo, typeInto } from '../helpers/keyboard.js';
import { waitFor } from '../helpers/webhooks.js';

/*
 * "Add a channel" for a mailbox (docs/email.md, "Mailboxes"), in a real Chromium against the real
 * service, a real IMAP server and a real SMTP server on loopback: an admin connects it from the
 * keyboard alone, "Check connection" logs in to both, and a mail in the mailbox becomes a message.
 */
const c = await useConsole({ env: { INBOX_ALLOW_PRIVATE_SMTP: 'true' } });
const imap = await startImapServer();
const smtp = await startSmtpServer({ auth: { user: imap.user, pass: imap.pass } });
const readers = new MailboxReaders(c.ctx.deps, { scanMs: 100 });
afterAll(async () => {
  await readers.stop();
  await imap.close();
  await smtp.close();
});

describe('Add a channel: an e-mail mailbox', () => {
  it('connects a mailbox over IMAP and SMTP, checks both logins, and reads its mail', { timeout: 120_000 }, async () => {
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.goto(`${c.base}/app/settings/connections`);
    await page.getByRole('heading', { name: 'Add a channel' }).waitFor();

    const form = page.getByRole('form', { name: 'Add a channel' });
    await tabTo(page, form.getByRole('combobox'));
    await page.keyboard.type('E-mail m');
    await form.getByLabel('Mailbox address', { exact: true }).waitFor();
    for (const [label, value] of [
      ['Mailbox address', imap.user],
      ['Name', 'Support mailbox'],
      ['IMAP URL', imap.url],
      ['SMTP URL', smtp.url.replace(/\/\/[^@]*@/, '//')],
      ['User name', imap.user],
      ['Password', imap.pass],
      ['Folder', 'INBOX'],
    ] as const)
      await typeInto(page, form.getByLabel(label, { exact: true }), value);
    await tabTo(page, page.getByRole('button', { name: 'Connect', exact: true }));
    await page.keyboard.press('Enter');
    const setup = page.getByRole('region', { name: 'Now tell the provider' });
    await setup.getByText('Nothing to paste').waitFor();
    expect(await setup.getByLabel('Webhook URL').count()).toBe(0);
    expect(await page.content()).not.toContain(imap.pass);

    await tabTo(page, setup.getByRole('button', { name: 'Check connection' }));
    await page.keyboard.press('Enter');
    await setup
      .getByRole('status')
      .getByText(/^Working: the IMAP server accepted the login, and the SMTP server/)
      .waitFor();
    expect(await seriousViolations(page)).toEqual([]);

    readers.start();
    await imap.append(
      ['From: Ada <ada@ada.test>', `To: ${imap.user}`, 'Subject: Hi', 'Message-ID: <console@ada.test>', '', 'Hello, mailbox', ''].join(
        '\r\n',
      ),
    );
    const message = await waitFor(
      () =>
        c.ctx.deps.db.selectFrom('messages').select(['connection_id']).where('external_id', '=', '<console@ada.test>').executeTakeFirst(),
      'the mail stored as a message',
    );
    const connection = await c.ctx.deps.db
      .selectFrom('connections')
      .select(['integration_key', 'external_account_id', 'imap_folder'])
      .where('id', '=', message.connection_id)
      .executeTakeFirstOrThrow();
    expect(connection).toEqual({ integration_key: 'email.imap', external_account_id: imap.user, imap_folder: 'INBOX' });
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });
});
