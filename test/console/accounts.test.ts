import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { announceSetupLink } from '../../src/workspaces/first-run.js';
import { useTestContext } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';
import { useConsoleWithMail } from '../helpers/console.js';
import { makeUser } from '../helpers/factories.js';

/*
 * The pages a link opens (docs/accounts.md) and the password change, in a real Chromium
 * against the real service and a real SMTP server: the links are read from the mails.
 */
const OUT = process.env.CONSOLE_SCREENSHOT_DIR ?? path.join(tmpdir(), 'console-screenshots');
mkdirSync(OUT, { recursive: true });
const { c, smtp, mailsTo } = await useConsoleWithMail();
// The links point at INBOX_PUBLIC_URL; this console listens on a port of its own.
const local = (link: string) => `${c.base}${new URL(link).pathname}${new URL(link).hash}`;
const linkIn = async (to: string, page: 'reset' | 'invite') => {
  const [mail] = await mailsTo(to);
  return local(new RegExp(`https?://\\S+/app/${page}#token=[\\w-]+`).exec(mail?.mail.text ?? '')![0]);
};

async function seriousViolations(page: Page) {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
}

describe('account pages', () => {
  it('resets a forgotten password from the sign-in page through the mailed link', { timeout: 60_000 }, async () => {
    const { user } = await makeUser(c.ctx.deps, c.tenant.workspace.id, { email: 'forgetful@acme.test', name: 'Fran Forgetful' });
    const { context, page } = await c.newPage();
    await page.goto(`${c.base}/app/`);
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await page.getByLabel('E-mail').fill('forgetful@acme.test');
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByRole('status').getByText('a link to reset its password is on its way').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(OUT, 'account-reset-sent.png') });

    await page.goto(await linkIn('forgetful@acme.test', 'reset'));
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    expect(page.url()).not.toContain('token=');
    await page.getByLabel('New password', { exact: true }).fill('short');
    await page.getByLabel('Type it again').fill('short');
    await page.getByRole('button', { name: 'Set my password' }).click();
    // The browser's own check stops a short one before it is sent.
    expect(
      await page
        .getByLabel('New password', { exact: true })
        .evaluate((el) => (el as unknown as { validity: { tooShort: boolean } }).validity.tooShort),
    ).toBe(true);
    await page.getByLabel('New password', { exact: true }).fill('forgetful@acme.test');
    await page.getByLabel('Type it again').fill('forgetful@acme.test');
    await page.getByRole('button', { name: 'Set my password' }).click();
    await page.getByRole('alert').getByText('Must not be your e-mail address.').waitFor();
    await page.screenshot({ path: path.join(OUT, 'account-reset-refused.png') });
    await page.getByLabel('New password', { exact: true }).fill('remembered at last');
    await page.getByLabel('Type it again').fill('remembered at last');
    await page.getByRole('button', { name: 'Set my password' }).click();
    await page.getByRole('tab', { name: 'All' }).waitFor();
    await expect.poll(async () => page.locator('.topbar .me').textContent()).toBe(user.name);
    expect(c.errorsOf(page).filter((e) => !e.includes('422'))).toEqual([]);
    await context.close();
  });

  it('an invited teammate chooses a password and lands in the inbox', { timeout: 60_000 }, async () => {
    const admin = await c.newPage();
    await c.signIn(admin.page);
    await admin.page.getByRole('link', { name: 'Settings' }).click();
    await admin.page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Users' }).click();
    await admin.page.getByLabel('Name').fill('Ines Invited');
    await admin.page.getByLabel('E-mail').fill('ines@acme.test');
    await admin.page.getByRole('button', { name: 'Add user' }).click();
    await admin.page.getByText('An invite is on its way to ines@acme.test').waitFor();
    await admin.context.close();

    const { context, page } = await c.newPage();
    // The mail as a mail reader shows it.
    await page.setContent(smtp.mails.find((m) => m.to.includes('ines@acme.test'))!.mail.html || '');
    await page.getByRole('link', { name: 'Accept the invite' }).waitFor();
    await page.screenshot({ path: path.join(OUT, 'mail-invite.png') });
    await page.goto(await linkIn('ines@acme.test', 'invite'));
    await page.getByRole('heading', { name: 'Join your team' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.getByLabel('New password', { exact: true }).fill('ines picked this');
    await page.getByLabel('Type it again').fill('ines picked this');
    await page.screenshot({ path: path.join(OUT, 'account-invite.png') });
    await page.getByRole('button', { name: 'Accept the invite' }).click();
    await page.getByRole('tab', { name: 'All' }).waitFor();
    await expect.poll(async () => page.locator('.topbar .me').textContent()).toBe('Ines Invited');
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('changes the password from the profile, signing out the other devices', { timeout: 60_000 }, async () => {
    const who = { email: 'changer@acme.test', password: 'the old password' };
    await makeUser(c.ctx.deps, c.tenant.workspace.id, { ...who, name: 'Chris Changer' });
    const other = await c.newPage();
    await c.signIn(other.page, who);
    const { context, page } = await c.newPage();
    await c.signIn(page, who);
    await page.getByRole('link', { name: 'Chris Changer' }).click();
    await page.getByRole('heading', { name: 'Change your password' }).waitFor();
    await page.getByLabel('Current password').fill('not the password');
    await page.getByLabel('New password', { exact: true }).fill('the new password');
    await page.getByLabel('New password, again').fill('the new password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('alert').getByText('Your current password is not right.').waitFor();
    await page.getByLabel('Current password').fill(who.password);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('status').getByText('One other device was signed out.').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(OUT, 'account-password.png') });
    // The other device is back at sign-in once it next talks to the service.
    await other.page.reload();
    await other.page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(c.errorsOf(page).filter((e) => !e.includes('403'))).toEqual([]);
    await context.close();
    await other.context.close();
  });
});

describe('first run', () => {
  it('creates the first workspace and its admin from the setup link, then closes', { timeout: 60_000 }, async () => {
    const empty = await useTestContext({ env: { INBOX_PUBLIC_URL: 'https://inbox.example.test' } });
    const base = await empty.app.listen({ port: 0, host: '127.0.0.1' });
    const link = (await announceSetupLink(empty.deps))!;
    const { browser } = await launchBrowser();
    afterAll(() => browser.close());
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-GB', timezoneId: 'UTC' });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${base}${new URL(link).pathname}${new URL(link).hash}`);
    await page.getByRole('heading', { name: 'Set up Inbox' }).waitFor();
    await page.getByLabel('Workspace name').fill('Northwind Help');
    await page.getByLabel('Your name').fill('Nora Founder');
    await page.getByLabel('Your e-mail').fill('nora@northwind.test');
    await page.getByLabel('New password', { exact: true }).fill('northwind first pw');
    await page.getByLabel('Type it again').fill('northwind first pw');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(OUT, 'account-setup.png') });
    await page.getByRole('button', { name: 'Create the workspace' }).click();
    await page.getByRole('tab', { name: 'All' }).waitFor();
    await expect.poll(async () => page.locator('.topbar .me').textContent()).toBe('Nora Founder');

    await page.goto(`${base}/app/setup`);
    await page.getByRole('heading', { name: 'Inbox is set up' }).waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });
});
