import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { describe, expect, it } from 'vitest';
import { useConsoleWithMail } from '../helpers/console.js';

/*
 * Settings → Users and the invites (docs/console-settings.md): an invite whose link expired
 * shows as such, "Invite again" mails a new link from the row, and the service's limit of new
 * invites per person is said in words. A real SMTP server receives the mails.
 */
const OUT = process.env.CONSOLE_SCREENSHOT_DIR ?? path.join(tmpdir(), 'console-screenshots');
mkdirSync(OUT, { recursive: true });
const mail = await useConsoleWithMail();
const { c } = mail;
const mailsTo = async (to: string) => (await mail.mailsTo(to)).length;

describe('Users: invites', () => {
  it('shows an expired invite and sends it again from its row, until the hourly limit', { timeout: 90_000 }, async () => {
    const invited = await c.ctx.app.inject({
      method: 'POST',
      url: '/v1/users',
      headers: c.tenant.headers,
      payload: { name: 'Ivy Invited', email: 'ivy@acme.test', roles: ['agent'] },
    });
    expect(invited.statusCode, invited.body).toBe(201);
    const ivy = invited.json().data as { id: number; inviteExpiresAt: string };
    expect(Date.parse(ivy.inviteExpiresAt) - Date.now()).toBeGreaterThan(6 * 24 * 3600 * 1000);
    // Seven days on: her link no longer works.
    await c.ctx.deps.db
      .updateTable('account_tokens')
      .set({ expires_at: new Date(Date.now() - 60_000) })
      .where('user_id', '=', ivy.id)
      .where('kind', '=', 'invite')
      .execute();
    expect(await mailsTo('ivy@acme.test')).toBe(1);

    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.goto(`${c.base}/app/settings/users`);
    const row = page.getByRole('row', { name: /Ivy Invited/ });
    await row.getByText('Invite expired').waitFor();
    const again = row.getByRole('button', { name: 'Invite again' });
    expect(
      await new AxeBuilder({ page })
        .analyze()
        .then((r) => r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)),
    ).toEqual([]);
    await page.screenshot({ path: path.join(OUT, 'settings-users-invite-expired.png') });

    await again.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('A new invite is on its way to ivy@acme.test').waitFor();
    await row.getByText('Invited', { exact: true }).waitFor();
    expect(await mailsTo('ivy@acme.test')).toBe(2);

    // Five new invites an hour per person: the sixth is refused, in words.
    for (let sent = 2; sent <= 5; sent++) {
      await again.focus();
      await page.keyboard.press('Enter');
      await expect.poll(() => mailsTo('ivy@acme.test')).toBe(sent + 1);
    }
    await again.focus();
    await page.keyboard.press('Enter');
    await page
      .getByRole('alert')
      .getByText(/^ivy@acme\.test has been invited 5 times in the last hour\. Try again in \d+ minutes?\.$/)
      .waitFor();
    expect(await mailsTo('ivy@acme.test')).toBe(6);
    // Her e-mail typed into "Invite a teammate" is the same invite again: the same words, and
    // what was typed stays for later.
    await page.getByLabel('Name').focus();
    await page.keyboard.type('Ivy Invited');
    await page.keyboard.press('Tab');
    await page.keyboard.type('ivy@acme.test');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toMatch(/^ivy@acme\.test has been invited 5 times in the last hour\. Try again in \d+ minutes?\.$/);
    expect(await page.getByLabel('E-mail').inputValue()).toBe('ivy@acme.test');
    expect(await page.getByLabel('Name').inputValue()).toBe('Ivy Invited');
    await page.screenshot({ path: path.join(OUT, 'settings-users-invite-limit.png') });
    expect(c.errorsOf(page).filter((e) => !e.includes('429'))).toEqual([]);
    await context.close();
  });
});
