import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useConsole } from '../helpers/console.js';
import { makeConnection } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';

/*
 * An e-mail conversation in a real Chromium (docs/email.md): the sanitized HTML in a sandboxed
 * frame of its own page, the headers, and the quoted history behind "Show quoted text".
 */
const MAIL_SECRET = 'console-mail-secret-0123';
const c = await useConsole({ env: { INBOX_INTEGRATIONS: JSON.stringify({ email: { webhookSecret: MAIL_SECRET } }) } });
await makeConnection(c.ctx.deps, c.tenant.workspace.id, { integrationKey: 'email', externalAccountId: 'help@console.test' });

/**
 * axe-core cannot run inside the mail's frame (a sandbox without scripts, on purpose): the
 * console around it is checked, the frame left out.
 */
async function serious(page: Page) {
  const result = await new AxeBuilder({ page }).exclude('iframe.email-html').options({ iframes: false }).analyze();
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
}

/** An inbound mail from Cy through the provider webhook, and its message once stored. */
async function mailFromCy(mail: { messageId: string; subject: string; text: string; html: string; attachments?: object[] }) {
  const res = await fetch(`${c.base}/webhooks/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-vendor-auth': MAIL_SECRET },
    body: JSON.stringify({ type: 'inbound', from: { email: 'cy@cy.test', name: 'Cy Customer' }, to: 'help@console.test', ...mail }),
  });
  expect(res.status, await res.text()).toBe(200);
  return waitFor(
    () => c.ctx.deps.db.selectFrom('messages').select(['id', 'thread_id']).where('external_id', '=', mail.messageId).executeTakeFirst(),
    mail.messageId,
  );
}

describe('an e-mail in the console', () => {
  it('shows the HTML in a sandboxed frame and the quoted text on request, with no serious axe finding', {
    timeout: 60_000,
  }, async () => {
    const m = await mailFromCy({
      messageId: '<broken@cy.test>',
      subject: 'Broken order',
      text: 'It arrived broken.\n\nOn Mon, Acme wrote:\n> Your order shipped.\n> Acme',
      html: '<p>It arrived <b>broken</b>.</p><script>alert(1)</script>',
    });
    const { context, page } = await c.newPage();
    // The service signs the frame's link for INBOX_PUBLIC_URL: here, the port the test listens on.
    await page.route('**/v1/messages/*/html-link', async (route) => {
      const answer = await route.fetch();
      const body = (await answer.text()).replaceAll('http://127.0.0.1:3000', c.base);
      await route.fulfill({ response: answer, body });
    });
    await c.signIn(page);
    await page.locator(`[data-thread-id="${m.thread_id}"]`).click();

    const frame = page.getByTitle('E-mail: Broken order');
    expect(await frame.getAttribute('sandbox')).toBe('allow-popups allow-popups-to-escape-sandbox');
    await page.frameLocator('iframe.email-html').getByText('It arrived broken.').waitFor();
    const email = page.locator('.email');
    await email.getByText('Cy Customer <cy@cy.test>').waitFor();
    expect(await email.getByText('Your order shipped.').count()).toBe(0);
    const show = page.getByRole('button', { name: 'Show quoted text' });
    expect(await show.getAttribute('aria-expanded')).toBe('false');
    await show.press('Enter');
    await email.getByText(/> Your order shipped\./).waitFor();
    expect(await page.getByRole('button', { name: 'Hide quoted text' }).getAttribute('aria-expanded')).toBe('true');
    expect(await serious(page)).toEqual([]);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it("folds a mail client's quoted history inside the frame, and unfolds it there on request", { timeout: 60_000 }, async () => {
    const m = await mailFromCy({
      messageId: '<again@cy.test>',
      subject: 'Re: Broken order',
      text: 'Still broken.\n\nOn Mon, Acme wrote:\n> Try it again.',
      // As Gmail writes a reply: the history in a div of class gmail_quote.
      html:
        '<div dir="ltr">Still broken.</div><br><div class="gmail_quote"><div class="gmail_attr">On Mon, Acme wrote:</div>' +
        '<blockquote class="gmail_quote">Try it again.</blockquote></div>',
    });
    const { context, page } = await c.newPage();
    await page.route('**/v1/messages/*/html-link', async (route) => {
      const answer = await route.fetch();
      await route.fulfill({ response: answer, body: (await answer.text()).replaceAll('http://127.0.0.1:3000', c.base) });
    });
    await c.signIn(page);
    await page.locator(`[data-thread-id="${m.thread_id}"]`).click();
    const frame = page.frameLocator('iframe.email-html');
    await frame.getByText('Still broken.').waitFor();
    expect(await frame.getByText('Try it again.').isVisible()).toBe(false);
    const show = page.getByRole('button', { name: 'Show quoted text' });
    await show.focus();
    await show.press('Enter');
    await frame.getByText('Try it again.').waitFor({ state: 'visible' });
    await frame.getByText('On Mon, Acme wrote:').waitFor({ state: 'visible' });
    // Said once, in the frame: the plain part's quotation is not shown beside it.
    expect(await page.locator('.email-quoted').count()).toBe(0);
    await page.screenshot({ path: '/tmp/email-quoted.png' });
    await page.getByRole('button', { name: 'Hide quoted text' }).press('Enter');
    await frame.getByText('Try it again.').waitFor({ state: 'hidden' });

    // A forward Gmail marks as it marks a reply, but the plain part has no quotation: it shows whole.
    const f = await mailFromCy({
      messageId: '<fwd@cy.test>',
      subject: 'Fwd: Order cancelled',
      text: 'See below.\n\n---------- Forwarded message ---------\nFrom: Shop <shop@shop.test>\n\nOrder 123 was cancelled.',
      html:
        '<div dir="ltr">See below.<br><div class="gmail_quote"><div class="gmail_attr">---------- Forwarded message ---------<br>' +
        'From: Shop</div><br>Order 123 was cancelled.</div></div>',
    });
    await page.locator(`[data-thread-id="${f.thread_id}"]`).click();
    await page
      .frameLocator('iframe[title="E-mail: Fwd: Order cancelled"]')
      .getByText('Order 123 was cancelled.')
      .waitFor({ state: 'visible' });
    expect(await page.getByRole('button', { name: 'Show quoted text' }).count()).toBe(0);
    expect(await serious(page)).toEqual([]);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it("shows a cid: image from the mail's own part, by its signed link, under the frame's policy", { timeout: 60_000 }, async () => {
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
    const m = await mailFromCy({
      messageId: '<logo@cy.test>',
      subject: 'Our logo',
      text: 'Our logo.',
      html: '<p>Our logo:</p><img src="cid:logo@cy.test" alt="Acme logo">',
      attachments: [{ filename: 'logo.png', contentType: 'image/png', contentId: '<logo@cy.test>', content: png.toString('base64') }],
    });
    await waitFor(
      () =>
        c.ctx.deps.db
          .selectFrom('attachments')
          .select('id')
          .where('message_id', '=', m.id)
          .where('status', '=', 'stored')
          .executeTakeFirst(),
      'the part stored',
    );
    const { context, page } = await c.newPage();
    // Links are signed for INBOX_PUBLIC_URL (127.0.0.1:3000): the frame's policy is checked
    // against that address, and the requests are answered by the port the test listens on.
    const publicUrl = 'http://127.0.0.1:3000';
    await page.route('**/v1/messages/*/html-link', async (route) => {
      const answer = await route.fetch();
      await route.fulfill({ response: answer, body: (await answer.text()).replaceAll(publicUrl, c.base) });
    });
    await page.route(`${publicUrl}/v1/attachments/**`, async (route) =>
      route.fulfill({ response: await route.fetch({ url: route.request().url().replace(publicUrl, c.base) }) }),
    );
    const image = page.waitForResponse((r) => r.url().startsWith(`${publicUrl}/v1/attachments/`));
    await c.signIn(page);
    await page.locator(`[data-thread-id="${m.thread_id}"]`).click();
    await page.frameLocator('iframe.email-html').getByText('Our logo:').waitFor();
    const answer = await image;
    expect(answer.status()).toBe(200);
    expect(answer.headers()['content-type']).toBe('image/png');
    expect(await page.frameLocator('iframe.email-html').getByRole('img', { name: 'Acme logo' }).count()).toBe(1);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });
});
