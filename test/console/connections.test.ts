import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { whatsappTextBody } from '../../harness/whatsapp-delivery.js';
import { connectionCredentials } from '../../src/connections/connection-credentials.js';
import { PHONE, useConsole } from '../helpers/console.js';
import { seriousViolations, tabTo, typeInto } from '../helpers/keyboard.js';
import { sign, waitFor } from '../helpers/webhooks.js';

/*
 * "Add a channel" in a real Chromium against the real service and the loopback fake providers
 * (docs/connections.md): a workspace admin connects WhatsApp and live chat from the keyboard
 * alone, is shown what to paste where, and checks the connection.
 */
const OUT = process.env.CONSOLE_SCREENSHOT_DIR ?? path.join(tmpdir(), 'console-screenshots');
mkdirSync(OUT, { recursive: true });
const c = await useConsole();

describe('Add a channel', () => {
  it('connects WhatsApp Cloud and live chat from the keyboard, with what to paste and a check', { timeout: 120_000 }, async () => {
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.goto(`${c.base}/app/settings/connections`);
    await page.getByRole('heading', { name: 'Add a channel' }).waitFor();

    // WhatsApp Cloud (the channel preselected): its fields, then Connect.
    const phoneId = `1065${Date.now()}`;
    const appSecret = 'meta-app-secret-typed-in-console';
    await typeInto(page, page.getByLabel('Account id'), phoneId);
    await typeInto(page, page.getByLabel('Name', { exact: true }), 'Sales WhatsApp');
    await typeInto(page, page.getByLabel('Access token'), 'EAAG-console-added-token');
    await typeInto(page, page.getByLabel('Meta app secret'), appSecret);
    await tabTo(page, page.getByRole('button', { name: 'Connect', exact: true }));
    await page.keyboard.press('Enter');

    const setup = page.getByRole('region', { name: 'Now tell the provider' });
    await setup.waitFor();
    const url = await setup.getByLabel('Webhook URL', { exact: true }).inputValue();
    const verifyToken = await setup.getByLabel('Verify token', { exact: true }).inputValue();
    expect(url).toMatch(/\/webhooks\/whatsapp\/ck_[A-Za-z0-9_-]{24}$/);
    expect(verifyToken).toMatch(/^vt_/);
    await setup.getByText('Callback URL').waitFor();
    expect(await page.content()).not.toContain(appSecret);

    // What was shown works: Meta's challenge with the token, then a delivery signed with the secret.
    const hook = `${c.base}${new URL(url).pathname}`;
    const challenge = await fetch(`${hook}?hub.mode=subscribe&hub.verify_token=${verifyToken}&hub.challenge=4242`);
    expect(await challenge.text()).toBe('4242');
    const body = whatsappTextBody({
      phoneNumberId: phoneId,
      from: '4917600000077',
      name: 'Mia',
      id: `wamid.${Date.now()}`,
      text: 'Hi sales',
    });
    const delivered = await fetch(hook, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${sign(appSecret, body)}` },
      body,
    });
    expect(delivered.status).toBe(200);

    await tabTo(page, setup.getByRole('button', { name: 'Check connection' }));
    await page.keyboard.press('Enter');
    await setup.getByRole('status').getByText('Working: Graph answered for +1 555 078 3881').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(OUT, 'connections-add-whatsapp.png'), fullPage: true });
    const list = page.getByRole('list', { name: 'Connections' });
    await page.reload();
    await list.getByText('Sales WhatsApp').waitFor();
    await waitFor(
      async () =>
        (
          await c.ctx.deps.db
            .selectFrom('connections')
            .select('last_delivery_at')
            .where('external_account_id', '=', phoneId)
            .executeTakeFirst()
        )?.last_delivery_at,
      'the delivery recorded on the connection',
    );

    // Live chat: choose it by typing on the Channel select, name it, Connect; the snippet shows.
    await tabTo(page, page.getByRole('form', { name: 'Add a channel' }).getByRole('combobox'));
    await page.keyboard.type('Live');
    expect(await page.getByRole('form', { name: 'Add a channel' }).getByRole('combobox').inputValue()).toBe('livechat');
    await typeInto(page, page.getByLabel('Name', { exact: true }), 'Website chat');
    await tabTo(page, page.getByRole('button', { name: 'Connect', exact: true }));
    await page.keyboard.press('Enter');
    await setup.waitFor();
    const snippet = await setup.getByLabel('Embed snippet', { exact: true }).inputValue();
    expect(snippet).toMatch(/^<script src="[^"]+\/livechat\/widget\.js" data-widget-key="wk_[A-Za-z0-9_-]+" async><\/script>$/);
    await tabTo(page, setup.getByRole('button', { name: 'Check connection' }));
    await page.keyboard.press('Enter');
    await setup
      .getByRole('status')
      .getByText(/^Working: live chat needs no provider/)
      .waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(OUT, 'connections-add-livechat.png'), fullPage: true });
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('replaces the Meta app secret from Edit, so deliveries signed with the new one arrive again', { timeout: 120_000 }, async () => {
    // Connected with an app secret that Meta then reset: every delivery on its URL is refused.
    const phoneId = `1066${Date.now()}`;
    const made = await c.ctx.app.inject({
      method: 'POST',
      url: '/v1/connections',
      headers: { ...c.tenant.headers, 'content-type': 'application/json' },
      payload: { integrationKey: 'whatsapp', externalAccountId: phoneId, name: 'Reset WhatsApp', webhookSecrets: { webhookSecret: 'old' } },
    });
    expect(made.statusCode, made.body).toBe(201);
    const hook = `${c.base}${new URL(made.json().data.webhookUrl).pathname}`;
    const newSecret = 'meta-app-secret-after-a-reset';
    const deliver = (text: string) => {
      const body = whatsappTextBody({ phoneNumberId: phoneId, from: '4917600000078', name: 'Ben', id: `wamid.${Date.now()}`, text });
      return fetch(hook, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${sign(newSecret, body)}` },
        body,
      });
    };
    expect((await deliver('refused')).status).toBe(401);

    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.goto(`${c.base}/app/settings/connections`);
    await tabTo(page, page.getByRole('button', { name: 'Edit Reset WhatsApp' }));
    await page.keyboard.press('Enter');
    const form = page.getByRole('form', { name: 'Edit Reset WhatsApp' });
    await form.getByText('Webhook secret: set (never shown)').waitFor();
    await typeInto(page, form.getByLabel('Replace Meta app secret'), newSecret);
    await tabTo(page, form.getByRole('button', { name: 'Save' }));
    await page.keyboard.press('Enter');
    await form.waitFor({ state: 'detached' });
    expect(await page.content()).not.toContain(newSecret);
    expect((await deliver('arrives again')).status).toBe(200);
    expect(await seriousViolations(page)).toEqual([]);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });
});

describe('Edit of a connection whose credentials have several fields', () => {
  it('keeps them when none is typed, and asks for the whole set when one is', { timeout: 120_000 }, async () => {
    const stored = {
      imapUrl: 'imaps://imap.example.com:993',
      smtpUrl: 'smtps://smtp.example.com:465',
      username: 'help@example.com',
      password: 'the-stored-password',
    };
    const made = await c.ctx.app.inject({
      method: 'POST',
      url: '/v1/connections',
      headers: { ...c.tenant.headers, 'content-type': 'application/json' },
      payload: {
        integrationKey: 'email.imap',
        externalAccountId: `help-${Date.now()}@example.com`,
        name: 'Help mailbox',
        credentials: stored,
      },
    });
    expect(made.statusCode, made.body).toBe(201);
    const id = made.json().data.id as number;
    const credentials = () => connectionCredentials(c.ctx.deps, id);

    const { context, page } = await c.newPage();
    const patches: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'PATCH') patches.push(r.postData() ?? '');
    });
    await c.signIn(page);
    await page.goto(`${c.base}/app/settings/connections`);
    const edit = async () => {
      await tabTo(page, page.getByRole('button', { name: 'Edit Help mailbox' }));
      await page.keyboard.press('Enter');
      return page.getByRole('form', { name: 'Edit Help mailbox' });
    };

    // Only the name changed: the credentials are not sent and stay as they were.
    let form = await edit();
    await form.getByText('They are replaced as a whole').waitFor();
    await tabTo(page, form.getByLabel('Name', { exact: true }));
    await page.keyboard.press('End');
    await page.keyboard.type(' desk');
    await tabTo(page, form.getByRole('button', { name: 'Save' }));
    await page.keyboard.press('Enter');
    await form.waitFor({ state: 'detached' });
    expect(patches.map((p) => JSON.parse(p))).toEqual([{ name: 'Help mailbox desk' }]);
    expect(await credentials()).toEqual(stored);

    // Only the password typed: Save names the three others, focuses the first, and sends nothing.
    await page.getByRole('button', { name: 'Edit Help mailbox desk' }).waitFor();
    await tabTo(page, page.getByRole('button', { name: 'Edit Help mailbox desk' }));
    await page.keyboard.press('Enter');
    form = page.getByRole('form', { name: 'Edit Help mailbox desk' });
    await typeInto(page, form.getByLabel('Replace password'), 'a-new-password');
    await tabTo(page, form.getByRole('button', { name: 'Save' }));
    await page.keyboard.press('Enter');
    const alert = form.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toBe('Type every credential or none: IMAP URL, SMTP URL, User name are empty. Nothing was saved.');
    const imapField = form.getByLabel('Replace IMAP URL');
    expect(await imapField.evaluate((el: { ownerDocument: { activeElement: unknown } }) => el === el.ownerDocument.activeElement)).toBe(
      true,
    );
    expect(await imapField.getAttribute('aria-invalid')).toBe('true');
    expect(await form.getByLabel('Replace password').getAttribute('aria-invalid')).toBeNull();
    expect(patches).toHaveLength(1);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(OUT, 'connections-edit-credentials.png'), fullPage: true });
    const phone = await c.newPage({ viewport: PHONE });
    await c.signIn(phone.page);
    await phone.page.goto(`${c.base}/app/settings/connections`);
    await phone.page.getByRole('button', { name: 'Edit Help mailbox desk' }).click();
    const phoneForm = phone.page.getByRole('form', { name: 'Edit Help mailbox desk' });
    await phoneForm.getByLabel('Replace password').fill('a-new-password');
    await phoneForm.getByRole('button', { name: 'Save' }).click();
    await phoneForm.getByRole('alert').waitFor();
    await phone.page.screenshot({ path: path.join(OUT, 'connections-edit-credentials-390.png'), fullPage: true });
    await phone.context.close();

    // The rest typed (the focus is already on the first missing one): the whole set is sent.
    await page.keyboard.type('imaps://mail.example.com:993');
    await typeInto(page, form.getByLabel('Replace SMTP URL'), 'smtps://mail.example.com:465');
    expect(await alert.textContent()).toBe('Type every credential or none: User name is empty. Nothing was saved.');
    await typeInto(page, form.getByLabel('Replace user name'), 'help@example.com');
    expect(await form.getByRole('alert').count()).toBe(0);
    await tabTo(page, form.getByRole('button', { name: 'Save' }));
    await page.keyboard.press('Enter');
    await form.waitFor({ state: 'detached' });
    const replaced = {
      imapUrl: 'imaps://mail.example.com:993',
      smtpUrl: 'smtps://mail.example.com:465',
      username: 'help@example.com',
      password: 'a-new-password',
    };
    expect(JSON.parse(patches[1]!)).toEqual({ credentials: replaced });
    expect(await credentials()).toEqual(replaced);
    expect(await page.content()).not.toContain('a-new-password');
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });
});
