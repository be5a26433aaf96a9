import type { Page } from 'playwright-core';
import twilio from 'twilio';
import { describe, expect, it } from 'vitest';
import { useConsole } from '../helpers/console.js';
import { seriousViolations, tabTo, typeInto } from '../helpers/keyboard.js';
import { fixture, waitFor } from '../helpers/webhooks.js';

/*
 * "Add a channel" for Twilio SMS and a Telegram bot, in a real Chromium against the real service
 * and the loopback fake providers (docs/connections.md): an admin connects each from the keyboard
 * alone, and what the console shows is what the provider needs for a delivery to arrive.
 */
// Twilio's own SDK computes the signature: an oracle independent of the service.
const { getExpectedTwilioSignature } = twilio;
const c = await useConsole();

const messageWithText = (text: string) =>
  c.ctx.deps.db.selectFrom('messages').select(['id', 'connection_id']).where('text', '=', text).executeTakeFirst();

async function addChannel(page: Page, choose: string, fields: [label: string, value: string][]) {
  const form = page.getByRole('form', { name: 'Add a channel' });
  await tabTo(page, form.getByRole('combobox'));
  await page.keyboard.type(choose);
  for (const [label, value] of fields) await typeInto(page, form.getByLabel(label, { exact: true }), value);
  await tabTo(page, page.getByRole('button', { name: 'Connect', exact: true }));
  await page.keyboard.press('Enter');
  const setup = page.getByRole('region', { name: 'Now tell the provider' });
  await setup.waitFor();
  return setup;
}

describe('Add a channel: Twilio and Telegram', () => {
  it('connects a Twilio number: its own URL, verified with the auth token typed in', { timeout: 120_000 }, async () => {
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.goto(`${c.base}/app/settings/connections`);
    await page.getByRole('heading', { name: 'Add a channel' }).waitFor();

    const number = `+1555${String(Date.now()).slice(-7)}`;
    const authToken = 'twilio-auth-token-typed-in-console';
    const setup = await addChannel(page, 'SMS', [
      ['Account id', number],
      ['Name', 'Support SMS'],
      ['Account SID', 'ACconsole0123456789'],
      ['Access token', 'twilio-api-secret-typed-in'],
      ['Twilio auth token', authToken],
    ]);
    const url = await setup.getByLabel('Webhook URL', { exact: true }).inputValue();
    expect(url).toMatch(/\/webhooks\/sms\.twilio\/ck_[A-Za-z0-9_-]{24}$/);
    await setup.getByText('"A message comes in"').waitFor();
    expect(await page.content()).not.toContain(authToken);

    // Twilio signs the URL it was given with the auth token: the delivery becomes a message.
    const form = new URLSearchParams(fixture('sms.twilio', 'inbound.form'));
    form.set('To', number);
    form.set('MessageSid', `SM${Date.now()}console`);
    form.set('Body', 'Is my order shipped? (by SMS)');
    const res = await fetch(`${c.base}${new URL(url).pathname}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': getExpectedTwilioSignature(authToken, url, Object.fromEntries(form)),
      },
      body: form.toString(),
    });
    expect(res.status, await res.text()).toBe(200);
    await waitFor(() => messageWithText('Is my order shipped? (by SMS)'), 'the SMS stored as a message');

    await tabTo(page, setup.getByRole('button', { name: 'Check connection' }));
    await page.keyboard.press('Enter');
    await setup
      .getByRole('status')
      .getByText(/^Working: /)
      .waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('connects a Telegram bot: "Connect webhook" tells Telegram where to send, with its secret', { timeout: 120_000 }, async () => {
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.goto(`${c.base}/app/settings/connections`);
    await page.getByRole('heading', { name: 'Add a channel' }).waitFor();

    const botId = String(Date.now()).slice(-9);
    const setup = await addChannel(page, 'Tel', [
      ['Account id', botId],
      ['Name', 'Support bot'],
      ['Access token', `${botId}:AAE-console-bot-token`],
    ]);
    await setup.getByText('Press "Connect webhook"').waitFor();
    await tabTo(page, setup.getByRole('button', { name: 'Connect webhook' }));
    await page.keyboard.press('Enter');
    await setup
      .getByRole('status')
      .getByText(/^Working: Telegram sends/)
      .waitFor();

    // What the service told Telegram: a URL and a secret; an update sent the way Telegram sends it arrives.
    const registered = c.fake.requests.find((r) => r.path === `/telegram/bot${botId}:AAE-console-bot-token/setWebhook`);
    const { url, secret_token: secret } = registered!.parsed as { url: string; secret_token: string };
    const update = JSON.parse(fixture('telegram', 'message.json')) as { message: { text: string } };
    update.message.text = 'Hello from Telegram, via the console';
    const res = await fetch(`${c.base}${new URL(url).pathname}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': secret },
      body: JSON.stringify(update),
    });
    expect(res.status, await res.text()).toBe(200);
    await waitFor(() => messageWithText('Hello from Telegram, via the console'), 'the Telegram update stored as a message');

    await tabTo(page, setup.getByRole('button', { name: 'Check connection' }));
    await page.keyboard.press('Enter');
    await setup.getByRole('status').getByText('Working: ', { exact: false }).first().waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });
});
