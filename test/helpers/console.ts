import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, expect } from 'vitest';
import { type FakeProviders, startFakeProviders } from '../../harness/fake-providers.js';
import { startSmtpServer } from '../../harness/smtp.js';
import { whatsappStatusBody, whatsappTextBody } from '../../harness/whatsapp-delivery.js';
import { systemMailer } from '../../src/mail/system-mailer.js';
import { type TestContext, useTestContext } from './app.js';
import { launchBrowser } from './browser.js';
import { makeConnection, makeTenant, makeUser } from './factories.js';
import { sign } from './webhooks.js';

/*
 * The agent console against the real service (the built console from dist/console, which the
 * global setup builds), real Postgres and pg-boss workers, fake providers on loopback and a
 * real Chromium. One per test file: `const c = await useConsole()`.
 */
export const WHATSAPP_SECRET = 'console-whatsapp-app-secret';
export const PHONE_NUMBER_ID = '106540352242922';
/** The WhatsApp connection's access token: the fake's media answer to it. */
export const WHATSAPP_TOKEN = 'EAAG-console-token-0123456789';
export const PHONE = { width: 390, height: 844 };

export interface ConsoleHarness {
  ctx: TestContext;
  base: string;
  fake: FakeProviders;
  browser: Browser;
  tenant: Awaited<ReturnType<typeof makeTenant>>;
  whatsapp: Awaited<ReturnType<typeof makeConnection>>;
  agent: { email: string; password: string; id: number; name: string };
  /** A new page in a context of its own; its console errors are collected (see `errorsOf`). */
  newPage(options?: { viewport?: { width: number; height: number } }): Promise<{ context: BrowserContext; page: Page }>;
  /** Signs in through the form and waits for the list. */
  signIn(page: Page, who?: { email: string; password: string }): Promise<void>;
  /** Console errors and uncaught exceptions a page logged. */
  errorsOf(page: Page): string[];
  /** A WhatsApp Cloud delivery of one inbound text, POSTed to /webhooks/whatsapp signed. */
  deliverWhatsapp(m: { from: string; name: string; text: string; id?: string; timestamp?: number }): Promise<void>;
  /** A WhatsApp status webhook for a sent message. */
  whatsappStatus(externalId: string, status: 'sent' | 'delivered' | 'read' | 'failed', recipient: string): Promise<void>;
}

export async function useConsole(
  options: { agentName?: string; roles?: string[]; env?: Record<string, string> } = {},
): Promise<ConsoleHarness> {
  const fake = await startFakeProviders();
  afterAll(() => fake.close());
  const ctx = await useTestContext({
    workers: true,
    env: {
      INBOX_INTEGRATIONS: JSON.stringify({
        whatsapp: { webhookSecret: WHATSAPP_SECRET, apiBaseUrl: fake.baseUrls.whatsapp },
        // Provider APIs of channels an admin may add from the console: the fakes answer for them.
        'sms.twilio': { apiBaseUrl: fake.baseUrls.sms },
        telegram: { apiBaseUrl: fake.baseUrls.telegram },
      }),
      ...options.env,
    },
  });
  const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const tenant = await makeTenant(ctx.deps, { name: 'Acme Support' });
  const whatsapp = await makeConnection(ctx.deps, tenant.workspace.id, {
    integrationKey: 'whatsapp',
    externalAccountId: PHONE_NUMBER_ID,
    name: 'Acme WhatsApp',
    credentials: { accessToken: WHATSAPP_TOKEN },
  });
  const made = await makeUser(ctx.deps, tenant.workspace.id, {
    name: options.agentName ?? 'Ada Agent',
    email: `ada-${Date.now()}@acme.test`,
    roles: options.roles ?? ['admin'],
  });
  const { browser } = await launchBrowser();
  afterAll(() => browser.close());
  const errors = new WeakMap<Page, string[]>();

  const post = async (url: string, body: string, headers: Record<string, string>) => {
    const res = await fetch(base + url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    expect(res.status, await res.text()).toBe(200);
  };
  const signed = (body: string) => ({ 'x-hub-signature-256': `sha256=${sign(WHATSAPP_SECRET, body)}` });

  return {
    ctx,
    base,
    fake,
    browser,
    tenant,
    whatsapp,
    agent: { email: made.user.email, password: made.password, id: made.user.id, name: made.user.name },
    async newPage({ viewport = { width: 1280, height: 800 } } = {}) {
      const context = await browser.newContext({ viewport, locale: 'en-GB', timezoneId: 'UTC' });
      const page = await context.newPage();
      const list: string[] = [];
      errors.set(page, list);
      page.on('console', (m) => {
        if (m.type() === 'error') list.push(m.text());
      });
      page.on('pageerror', (e) => list.push(String(e)));
      return { context, page };
    },
    async signIn(page, who = { email: made.user.email, password: made.password }) {
      await page.goto(`${base}/app/`);
      await page.getByLabel('E-mail').fill(who.email);
      await page.getByLabel('Password').fill(who.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('tab', { name: 'All' }).waitFor();
    },
    errorsOf: (page) => errors.get(page) ?? [],
    async deliverWhatsapp({
      from,
      name,
      text,
      id = `wamid.${from}.${Date.now()}.${Math.random()}`,
      timestamp = Math.floor(Date.now() / 1000),
    }) {
      const body = whatsappTextBody({ phoneNumberId: PHONE_NUMBER_ID, from, name, id, text, timestamp });
      await post('/webhooks/whatsapp', body, signed(body));
    },
    async whatsappStatus(externalId, status, recipient) {
      const body = whatsappStatusBody({ phoneNumberId: PHONE_NUMBER_ID, id: externalId, status, recipient });
      await post('/webhooks/whatsapp', body, signed(body));
    },
  };
}

/**
 * A console whose service sends its own mail (invites, resets) to a real SMTP server on
 * loopback; `mailsTo` answers the mails an address got, once every queued one has gone out.
 */
export async function useConsoleWithMail() {
  const smtp = await startSmtpServer();
  afterAll(() => smtp.close());
  const c = await useConsole({
    env: { INBOX_SMTP_URL: smtp.url, INBOX_MAIL_FROM: 'Acme Inbox <inbox@acme.test>', INBOX_ALLOW_PRIVATE_SMTP: 'true' },
  });
  const mailsTo = async (to: string) => {
    await systemMailer(c.ctx.deps)!.settled();
    return smtp.mails.filter((m) => m.to.includes(to));
  };
  return { c, smtp, mailsTo };
}
