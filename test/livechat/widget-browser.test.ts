import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page, WebSocketRoute } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';
import { makeTenant, makeUser } from '../helpers/factories.js';
import { seriousViolations } from '../helpers/keyboard.js';
import { makeWidget, openSocket } from '../helpers/livechat.js';
import { waitFor } from '../helpers/webhooks.js';

/*
 * The widget in a real browser, driven by playwright-core: Debian's chromium when installed,
 * else the one @sparticuz/chromium ships (test/helpers/browser.ts chooses).
 * Screenshots go to LIVECHAT_SCREENSHOT_DIR (`docs` to refresh the README's), else to a
 * temporary directory, so a test run leaves the working tree as it was.
 */
const SCREENSHOTS = process.env.LIVECHAT_SCREENSHOT_DIR ?? tmpdir();
const PHONE = { width: 390, height: 844 };

const ctx = await useTestContext({ workers: true });
const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
const tenant = await makeTenant(ctx.deps);
const hosted = await makeWidget(ctx.deps, tenant.workspace.id, { name: 'Acme Support' });

// A customer's own site, on another origin, embedding the widget with one <script>.
const site: Server = createServer((req, res) => {
  const key = new URL(req.url ?? '/', 'http://x').searchParams.get('key') ?? '';
  res.setHeader('content-type', 'text/html; charset=utf-8');
  res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme shop</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font:16px system-ui;margin:0;padding:32px;background:#fafafa"><h1>Acme shop</h1><p>Spring collection, 20% off.</p>
<script src="${base}/livechat/widget.js" data-widget-key="${key}" data-title="Acme Support" async></script></body></html>`);
});
await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', () => resolve()));
const sitePort = (site.address() as AddressInfo).port;
afterAll(() => new Promise<void>((resolve) => site.close(() => resolve())));

const { browser } = await launchBrowser();
afterAll(() => browser.close());

const { user, password } = await makeUser(ctx.deps, tenant.workspace.id, { email: 'agent.browser@acme.test' });
const jwt = (await ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email: user.email, password } })).json()
  .access_token as string;
const agentSocket = await openSocket(`${base.replace('http', 'ws')}/v1/realtime?token=${encodeURIComponent(jwt)}`);
afterAll(() => agentSocket.ws.close());

const agentGet = (url: string) => ctx.app.inject({ method: 'GET', url, headers: tenant.headers }).then((r) => r.json());
const agentReplies = async (threadId: number, text: string) => {
  const res = await ctx.app.inject({ method: 'POST', url: `/v1/threads/${threadId}/messages`, headers: tenant.headers, payload: { text } });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().data as { id: number };
};
const statusOf = async (id: number) =>
  (await ctx.deps.db.selectFrom('messages').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;
/** The thread whose last message is `text`, as the agent's list shows it. */
const threadShowing = (text: string) =>
  waitFor(
    async () =>
      (
        (await agentGet('/v1/threads')).data as { id: number; contactId: number; integrationKey: string; lastMessagePreview: string }[]
      ).find((t) => t.lastMessagePreview === text),
    `a thread showing "${text}"`,
  );

async function phonePage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: PHONE,
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
    locale: 'en-GB',
    timezoneId: 'UTC',
  });
  return { context, page: await context.newPage() };
}

/** The id (or class) of the element focused inside the widget's shadow root. */
const focused = (page: Page) =>
  page.evaluate<string | undefined>(
    `(() => { const el = document.querySelector('[data-inbox-livechat]')?.shadowRoot?.activeElement; return el ? el.id || el.className : undefined; })()`,
  );

async function write(page: Page, text: string) {
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill(text);
  await box.press('Enter');
  await page.getByRole('log').getByText(text, { exact: true }).waitFor();
}

describe('the live chat widget in Chromium', () => {
  it('hosted page: the visitor writes, the agent sees it in /v1/threads and on /v1/realtime, answers, and the answer appears live', {
    timeout: 90_000,
  }, async () => {
    const { context, page } = await phonePage();
    await page.goto(`${base}/livechat/${hosted.key}`);
    await expect.poll(() => page.title()).toBe('Acme Support');
    await page.getByRole('heading', { name: 'Acme Support' }).waitFor();
    // The message box has the focus on the hosted page; every field is labelled.
    await expect.poll(() => focused(page)).toBe('text');
    await page.getByLabel('Your name (optional)').fill('Maya');
    await page.getByLabel('E-mail (optional)').fill('maya@example.test');
    await write(page, 'Hi! Does the green jacket come in XL?');

    const thread = await threadShowing('Hi! Does the green jacket come in XL?');
    expect(thread.integrationKey).toBe('livechat');
    const created = await agentSocket.frame(
      (f) => f.type === 'message.created' && f.data.threadId === thread.id,
      'the visitor message on the agent socket',
    );
    expect(created.data).toMatchObject({ direction: 'inbound', preview: 'Hi! Does the green jacket come in XL?' });
    const contacts = (await agentGet('/v1/contacts')).data as { id: number; name: string; email: string | null }[];
    // The contact carries what the visitor typed, the e-mail too.
    expect(contacts.find((c) => c.id === thread.contactId)).toMatchObject({ name: 'Maya', email: 'maya@example.test' });

    const reply = await agentReplies(thread.id, 'Hi Maya! Yes, XL is in stock in green.');
    await page.getByRole('log').getByText('Hi Maya! Yes, XL is in stock in green.').waitFor();
    await waitFor(async () => (await statusOf(reply.id)) === 'delivered', 'the reply to be delivered');
    // The conversation is a list inside a live region: axe finds nothing serious.
    expect(await seriousViolations(page)).toEqual([]);

    // The token is kept: a reload shows the same conversation, not a new one.
    await page.reload();
    await page.getByRole('log').getByText('Hi Maya! Yes, XL is in stock in green.').waitFor();
    await write(page, 'Great, thanks!');
    expect((await threadShowing('Great, thanks!')).id).toBe(thread.id);
    await agentReplies(thread.id, 'You’re welcome. Anything else?');
    await page.getByRole('log').getByText('You’re welcome. Anything else?').waitFor();
    await page.getByRole('textbox', { name: 'Message' }).fill('Can I pick it up in store?');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'livechat-widget.png') });
    await context.close();
  });

  it('a second browser context is a second visitor who sees nothing of the first', { timeout: 90_000 }, async () => {
    const first = await phonePage();
    const second = await phonePage();
    await first.page.goto(`${base}/livechat/${hosted.key}`);
    await write(first.page, 'Visitor one here');
    const one = await threadShowing('Visitor one here');
    await second.page.goto(`${base}/livechat/${hosted.key}`);
    await second.page.getByRole('log').getByText('Ask us anything').waitFor();
    await write(second.page, 'Visitor two here');
    const two = await threadShowing('Visitor two here');
    expect(two.id).not.toBe(one.id);

    await agentReplies(one.id, 'Only for one');
    await agentReplies(two.id, 'Only for two');
    await first.page.getByRole('log').getByText('Only for one').waitFor();
    await second.page.getByRole('log').getByText('Only for two').waitFor();
    const logText = async (page: Page) => page.getByRole('log').textContent();
    expect(await logText(second.page)).not.toMatch(/Visitor one here|Only for one/);
    expect(await logText(first.page)).not.toMatch(/Visitor two here|Only for two/);
    await first.context.close();
    await second.context.close();
  });

  it('after the network drops, the widget reconnects and shows the reply it missed', { timeout: 90_000 }, async () => {
    const { context, page } = await phonePage();
    // The visitor socket runs through the test: it can cut it, and refuse new ones while offline.
    let offline = false;
    const routes: WebSocketRoute[] = [];
    await page.routeWebSocket(/\/socket\?visitorToken=/, (ws) => {
      if (offline) return void ws.close({ code: 4000, reason: 'offline' });
      routes.push(ws, ws.connectToServer());
    });
    await page.goto(`${base}/livechat/${hosted.key}`);
    await write(page, 'Before the tunnel');
    const thread = await threadShowing('Before the tunnel');
    await waitFor(async () => routes.length > 0, 'the widget’s socket');
    const visitorSockets = () => [...ctx.app.websocketServer.clients].length;
    const held = visitorSockets();

    offline = true;
    await context.setOffline(true);
    await Promise.all(routes.splice(0).map((r) => r.close({ code: 4000, reason: 'network down' })));
    await waitFor(async () => visitorSockets() < held, 'the server to lose the socket');
    await page
      .getByRole('status')
      .getByText(/Reconnecting/)
      .waitFor();

    const missed = await agentReplies(thread.id, 'Sent while you were offline');
    await waitFor(async () => (await statusOf(missed.id)) === 'sent', 'the reply to end sent, no socket taking it');
    expect(await page.getByRole('log').getByText('Sent while you were offline').count()).toBe(0);

    offline = false;
    await context.setOffline(false);
    await page.getByRole('log').getByText('Sent while you were offline').waitFor({ timeout: 30_000 });
    // Live again: the next reply arrives over the new socket and is delivered.
    const live = await agentReplies(thread.id, 'And this one live');
    await page.getByRole('log').getByText('And this one live').waitFor();
    await waitFor(async () => (await statusOf(live.id)) === 'delivered', 'the live reply to be delivered');
    await expect.poll(() => page.getByText(/Reconnecting|Connecting/).count()).toBe(0);
    await context.close();
  });

  it('embedded with one <script> on an allowed origin; keyboard: open, write, Escape closes and gives the focus back', {
    timeout: 90_000,
  }, async () => {
    const embedded = await makeWidget(ctx.deps, tenant.workspace.id, {
      name: 'Acme shop chat',
      allowedOrigins: [`http://localhost:${sitePort}`],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'en-GB', timezoneId: 'UTC' });
    const page = await context.newPage();
    await page.goto(`http://localhost:${sitePort}/?key=${embedded.key}`);
    const launcher = page.getByRole('button', { name: 'Open chat: Acme Support' });
    await launcher.waitFor();
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    await launcher.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Acme Support' });
    await dialog.waitFor();
    await expect.poll(() => focused(page)).toBe('text');
    await page.keyboard.type('Hello from the shop page');
    await page.keyboard.press('Enter');
    await dialog.getByRole('log').getByText('Hello from the shop page').waitFor();
    const thread = await threadShowing('Hello from the shop page');
    await agentReplies(thread.id, 'Hello! How can we help?');
    await dialog.getByRole('log').getByText('Hello! How can we help?').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'livechat-embedded.png') });
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    await expect.poll(() => focused(page)).toBe('launcher');
    await context.close();
  });

  it('a light accent colour gets dark text: axe finds no contrast failure', { timeout: 60_000 }, async () => {
    const light = await makeWidget(ctx.deps, tenant.workspace.id, { name: 'Sunny desk' });
    const patched = await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/connections/${light.connection.id}`,
      headers: tenant.headers,
      payload: { colour: '#ffd400' },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`http://localhost:${sitePort}/?key=${light.key}`);
    await page.getByRole('button', { name: /Open chat/ }).click();
    await write(page, 'Is it sunny?');
    expect(await seriousViolations(page)).toEqual([]);
    await context.close();
  });

  it('on an origin the widget does not allow, the browser gets nothing through', { timeout: 60_000 }, async () => {
    const embedded = await makeWidget(ctx.deps, tenant.workspace.id, { allowedOrigins: ['https://shop.example'] });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`http://localhost:${sitePort}/?key=${embedded.key}`);
    await page.getByRole('button', { name: /Open chat/ }).click();
    await page.getByRole('textbox', { name: 'Message' }).fill('Let me in');
    await page.getByRole('button', { name: 'Send' }).click();
    await page
      .getByRole('alert')
      .getByText(/Could not send/)
      .waitFor();
    const visitors = await ctx.deps.db
      .selectFrom('livechat_visitors')
      .select('id')
      .where('connection_id', '=', embedded.connection.id)
      .execute();
    expect(visitors).toHaveLength(0);
    await context.close();
  });
});
