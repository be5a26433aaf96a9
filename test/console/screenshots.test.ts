import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, it } from 'vitest';
import { createCannedResponse } from '../../src/canned-responses/canned-responses.service.js';
import { PHONE, useConsole } from '../helpers/console.js';
import { makeUser } from '../helpers/factories.js';
import { deliverWhatsappImage, picturePng } from '../helpers/pictures.js';
import { waitFor } from '../helpers/webhooks.js';

/*
 * The README's pictures of the console, with realistic seeded data. They go to
 * CONSOLE_SCREENSHOT_DIR (`CONSOLE_SCREENSHOT_DIR=docs/images npx vitest run
 * test/console/screenshots.test.ts` refreshes them), else to a temporary directory, so a
 * test run leaves the working tree as it was.
 */
const OUT = process.env.CONSOLE_SCREENSHOT_DIR ?? path.join(tmpdir(), 'console-screenshots');
const c = await useConsole({ agentName: 'Ada Lovelace', env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
const db = c.ctx.deps.db;

const CUSTOMERS = [
  {
    from: '4915100000101',
    name: 'Maya Schulz',
    texts: ['Hi! My order #4471 says delivered but nothing arrived.', 'The tracking number is DE2231'],
  },
  { from: '4915100000102', name: 'Jonas Weber', texts: ['Do you ship to Austria?'] },
  { from: '4915100000103', name: 'Lena Vogel', texts: ['Can I change the size of my jacket to XL?'] },
  { from: '4915100000104', name: 'Tom Berg', texts: ['Invoice for March please, for my accountant'] },
  { from: '4915100000105', name: 'Ines Roth', texts: ['The blender arrived with a cracked jug 😕'] },
];

describe('console screenshots', () => {
  it('writes the list, a conversation and the phone view', { timeout: 120_000 }, async () => {
    await mkdir(OUT, { recursive: true });
    await createCannedResponse(c.ctx.deps, c.tenant.workspace.id, { shortCode: 'thanks', content: 'Thank you for your patience!' });
    for (const who of CUSTOMERS)
      for (const text of who.texts) {
        await c.deliverWhatsapp({ from: who.from, name: who.name, text });
        await waitFor(() => db.selectFrom('messages').select('id').where('text', '=', text).executeTakeFirst(), text);
      }
    // Maya sends a photo: the conversation shows it inline.
    const png = await picturePng(c.browser, '18:05, no parcel', { width: 420, height: 240 });
    await deliverWhatsappImage(c, { from: '4915100000101', name: 'Maya Schulz', caption: 'This is my doorstep right now', png });
    await waitFor(async () => {
      const a = await db.selectFrom('attachments').select('status').executeTakeFirst();
      return a?.status === 'stored' ? a : undefined;
    }, 'the photo to be stored');
    const { context, page } = await c.newPage({ viewport: { width: 1280, height: 760 } });
    await c.signIn(page);
    await page.getByRole('link', { name: /Ines Roth/ }).waitFor();
    await page.screenshot({ path: path.join(OUT, 'console-list.png') });

    await page.getByRole('link', { name: /Maya Schulz/ }).click();
    await page.locator('img.inline-image').waitFor();
    const reply = page.getByRole('textbox', { name: 'Reply' });
    await reply.fill("I'm sorry to hear that, Maya. I've opened a claim with the carrier.");
    await reply.press('Enter');
    const sent = await waitFor(async () => {
      const m = await db.selectFrom('messages').selectAll().where('text', 'like', "I'm sorry to hear that%").executeTakeFirst();
      return m?.external_id ? m : undefined;
    }, 'the reply to be sent');
    await c.whatsappStatus(sent.external_id!, 'read', '4915100000101');
    await page.locator('.msg-outbound').getByText('Read').waitFor();
    await page.getByLabel('Private note').check();
    await reply.fill('Carrier claim 88-1207 opened; check again Friday.');
    await reply.press('Enter');
    await page.locator('.msg-note').waitFor();
    await page.getByLabel('Private note').uncheck();
    await reply.fill('/');
    await page.getByRole('listbox', { name: 'Canned responses' }).waitFor();
    await page.screenshot({ path: path.join(OUT, 'console-conversation.png') });
    await context.close();

    const phone = await c.newPage({ viewport: PHONE });
    await c.signIn(phone.page);
    await phone.page.getByRole('link', { name: /Maya Schulz/ }).click();
    await phone.page.locator('.msg-note').waitFor();
    await phone.page.locator('img.inline-image').waitFor();
    await phone.page.screenshot({ path: path.join(OUT, 'console-phone.png') });
    await phone.context.close();
  });

  it('writes the bell open and the collision banner', { timeout: 120_000 }, async () => {
    // Runs after the first: the customers above are there, Maya's thread is Ada's.
    const made = await makeUser(c.ctx.deps, c.tenant.workspace.id, { name: 'Bo Builder', email: 'bo@acme.test', roles: ['agent'] });
    const login = await c.ctx.app.inject({
      method: 'POST',
      url: '/api/user/login',
      payload: { email: made.user.email, password: made.password },
    });
    const bo = { authorization: `Bearer ${login.json().access_token as string}` };
    const threadOf = async (text: string) =>
      (await db.selectFrom('messages').select('thread_id').where('text', '=', text).executeTakeFirstOrThrow()).thread_id;
    const as = async (method: 'PATCH' | 'POST', url: string, payload: object) => {
      const res = await c.ctx.app.inject({ method, url, headers: bo, payload });
      if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.body}`);
    };
    await as('PATCH', `/v1/threads/${await threadOf('Invoice for March please, for my accountant')}`, { assigneeId: c.agent.id });
    await as('POST', `/v1/threads/${await threadOf('Do you ship to Austria?')}/messages`, {
      text: '@Ada Lovelace this one is yours, they asked about Austria',
      private: true,
      mentions: [c.agent.id],
    });
    const maya = await threadOf('The tracking number is DE2231');
    await as('PATCH', `/v1/threads/${await threadOf('Can I change the size of my jacket to XL?')}`, { assigneeId: c.agent.id });

    const { context, page } = await c.newPage({ viewport: { width: 1280, height: 760 } });
    // A fresh profile as on a desk: headless Chromium reports notifications blocked until asked.
    await page.addInitScript(`{
      const Real = window.Notification;
      window.Notification = class extends Real {
        static get permission() { return Real.permission === 'denied' ? 'default' : Real.permission; }
      };
    }`);
    await c.signIn(page);
    await page.getByRole('link', { name: /Maya Schulz/ }).click();
    await page.locator('img.inline-image').waitFor();
    await page.locator('button.bell .bell-count', { hasText: '3' }).waitFor();
    await page.locator('button.bell').click();
    await page.getByRole('list', { name: 'Notification list' }).getByText('Bo Builder mentioned you').waitFor();
    await page.getByRole('list', { name: 'Notification list' }).getByText('Tom Berg').waitFor();
    await page.screenshot({ path: path.join(OUT, 'console-bell.png') });
    await page.keyboard.press('Escape');

    // Bo opens Maya's conversation and starts a note: Ada sees him typing.
    const other = await c.newPage();
    await c.signIn(other.page, { email: made.user.email, password: made.password });
    await other.page.goto(`${c.base}/app/c/${maya}`);
    await other.page.getByLabel('Private note').check();
    await other.page.getByRole('textbox', { name: 'Reply' }).pressSequentially('The carrier says');
    await page.locator('.collision', { hasText: 'Bo Builder is typing…' }).waitFor();
    await page.getByRole('textbox', { name: 'Reply' }).focus();
    await page.screenshot({ path: path.join(OUT, 'console-collision.png') });
    await other.context.close();
    await context.close();
  });

  it('writes the teams settings', { timeout: 60_000 }, async () => {
    const cy = await makeUser(c.ctx.deps, c.tenant.workspace.id, { name: 'Cy Chen', email: 'cy@acme.test', roles: ['agent'] });
    const dee = await makeUser(c.ctx.deps, c.tenant.workspace.id, { name: 'Dee Park', email: 'dee@acme.test', roles: ['agent'] });
    const admin = async (method: 'POST' | 'PUT' | 'PATCH', url: string, payload: object) => {
      const res = await c.ctx.app.inject({ method, url, headers: c.tenant.headers, payload });
      if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.body}`);
      return res.json().data;
    };
    const orders = await admin('POST', '/v1/teams', {
      name: 'Orders and delivery',
      description: 'Parcels, tracking, returns',
      autoAssign: true,
    });
    await admin('PUT', `/v1/teams/${orders.id}/members`, { userIds: [c.agent.id, dee.user.id] });
    const billing = await admin('POST', '/v1/teams', { name: 'Billing', description: 'Invoices and refunds' });
    await admin('PUT', `/v1/teams/${billing.id}/members`, { userIds: [cy.user.id] });
    await admin('PATCH', `/v1/connections/${c.whatsapp.id}`, { teamId: orders.id });
    await admin('PATCH', '/v1/workspace', { restrictAgentsToTeams: true });
    // Tall enough for the whole page: it scrolls inside its pane, which a full-page picture misses.
    const { context, page } = await c.newPage({ viewport: { width: 1280, height: 1360 } });
    await c.signIn(page);
    await page.goto(`${c.base}/app/settings/teams`);
    await page.getByRole('list', { name: 'Teams' }).getByText('Members: Cy Chen').waitFor();
    await page.getByRole('button', { name: 'Edit Orders and delivery' }).click();
    await page.getByRole('group', { name: 'Members' }).waitFor();
    await page.screenshot({ path: path.join(OUT, 'console-teams.png') });
    await context.close();
  });
});
