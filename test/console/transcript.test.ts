import type { Page } from 'playwright-core';
import { beforeEach, describe, expect, it } from 'vitest';
import { PHONE, PHONE_NUMBER_ID, useConsole } from '../helpers/console.js';
import { deliverWhatsappImage, picturePng } from '../helpers/pictures.js';
import { waitFor } from '../helpers/webhooks.js';

/*
 * The open conversation in a real Chromium against the real service (docs/console.md): where
 * the transcript is scrolled once its images load, the label filter and the activity lines
 * kept live, a reply's state when the socket's news beats the transcript's read, who wrote
 * each reply, the tab kept across reloads and the next conversation after a resolve.
 */
const c = await useConsole({ env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
const db = c.ctx.deps.db;
const SEND_PATH = `/graph/v23.0/${PHONE_NUMBER_ID}/messages`;

beforeEach(() => c.fake.reset());

let seq = 0;
/** A new WhatsApp conversation of `texts`, oldest first; answers its thread id once the last is written. */
async function conversation(name: string, texts: string[]): Promise<{ id: number; from: string }> {
  seq += 1;
  const from = `49152000${String(seq).padStart(4, '0')}${Date.now() % 1000}`;
  const start = Math.floor(Date.now() / 1000) - texts.length;
  for (const [i, text] of texts.entries()) await c.deliverWhatsapp({ from, name, text, timestamp: start + i });
  const last = texts.at(-1)!;
  const row = await waitFor(
    () => db.selectFrom('threads').select('id').where('last_message_preview', '=', last).executeTakeFirst(),
    `the thread of "${last}"`,
  );
  return { id: Number(row.id), from };
}

async function open(page: Page, threadId: number) {
  await page.locator(`[data-thread-id="${threadId}"]`).press('Enter');
  await page.waitForURL(`**/app/c/${threadId}`);
  await page.getByRole('region', { name: 'Conversation' }).getByLabel('Assignee').waitFor();
}

/** How far the transcript is from its bottom, in pixels. */
const fromBottom = (page: Page) =>
  page.getByRole('region', { name: 'Transcript' }).evaluate((el) => {
    const box = el as unknown as { scrollHeight: number; scrollTop: number; clientHeight: number };
    return box.scrollHeight - box.scrollTop - box.clientHeight;
  });

describe('the open conversation', () => {
  it('ends at its newest message once a recent image has loaded, and stays there as messages arrive', { timeout: 90_000 }, async () => {
    const texts = Array.from({ length: 16 }, (_, i) => `Earlier line ${i + 1} about order 5521`);
    const { id, from } = await conversation('Jana Kluge', texts);
    await deliverWhatsappImage(c, { from, name: 'Jana Kluge', caption: 'The dent', png: await picturePng(c.browser, 'A dented box') });
    await waitFor(
      () =>
        db
          .selectFrom('attachments')
          .select('id')
          .where('status', '=', 'stored')
          .where('workspace_id', '=', c.tenant.workspace.id)
          .executeTakeFirst(),
      'the image to be stored',
    );
    await c.deliverWhatsapp({ from, name: 'Jana Kluge', text: 'Can you see it?' });
    await waitFor(
      () =>
        db.selectFrom('threads').select('id').where('id', '=', id).where('last_message_preview', '=', 'Can you see it?').executeTakeFirst(),
      'the newest message',
    );

    const { context, page } = await c.newPage();
    await c.signIn(page);
    await open(page, id);
    const transcript = page.getByRole('list', { name: 'Messages' });
    const image = transcript.locator('.msg-inbound', { hasText: 'The dent' }).locator('img.inline-image');
    await image.waitFor();
    await expect.poll(() => image.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBeGreaterThan(0);
    await expect.poll(() => fromBottom(page)).toBeLessThan(2);
    expect(await transcript.getByText('Can you see it?').isVisible()).toBe(true);

    // At the bottom, a new message keeps the transcript pinned to it.
    await c.deliverWhatsapp({ from, name: 'Jana Kluge', text: 'Hello? Anyone there?' });
    await transcript.getByText('Hello? Anyone there?').waitFor();
    await expect.poll(() => fromBottom(page)).toBeLessThan(2);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('offers a label in the filter as soon as a thread first gets it', { timeout: 60_000 }, async () => {
    const { id } = await conversation('Otto Brandt', ['Is the warranty two years?']);
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await open(page, id);
    const filter = page.getByLabel('Label', { exact: true });
    expect(await filter.locator('option', { hasText: 'warranty' }).count()).toBe(0);
    await page.getByLabel('New label').fill('warranty');
    await page.getByLabel('New label').press('Enter');
    await expect.poll(() => filter.locator('option', { hasText: 'warranty' }).count()).toBe(1);
    await filter.selectOption('warranty');
    await page.locator(`[data-thread-id="${id}"]`).waitFor();
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it("writes the snooze's end in the agent's own locale and time zone", { timeout: 60_000 }, async () => {
    const { id } = await conversation('Pia Lorenz', ['Please call me on Monday']);
    const context = await c.browser.newContext({ viewport: { width: 1280, height: 800 }, locale: 'de-DE', timezoneId: 'Europe/Berlin' });
    const page = await context.newPage();
    await c.signIn(page);
    await open(page, id);
    await page.getByRole('button', { name: 'Snooze…' }).press('Enter');
    await page.getByRole('button', { name: '1 hour' }).press('Enter');
    const line = page.locator('.msg-activity', { hasText: 'snoozed the conversation until' });
    await line.waitFor();
    const until = (await db.selectFrom('threads').select('snoozed_until').where('id', '=', id).executeTakeFirstOrThrow()).snoozed_until!;
    const time = line.locator('time').first();
    expect(await time.getAttribute('datetime')).toBe(until.toISOString());
    const shown = new Intl.DateTimeFormat('de-DE', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'Europe/Berlin' }).format(until);
    expect(await time.textContent()).toBe(shown);
    expect(await line.textContent()).not.toMatch(/\d{4}-\d{2}-\d{2}T/);
    // The API keeps the machine-readable instant.
    const stored = await db.selectFrom('messages').select('text').where('thread_id', '=', id).where('kind', '=', 'activity').execute();
    expect(stored.map((m) => m.text)).toContainEqual(expect.stringContaining(until.toISOString()));
    await context.close();
  });

  it("shows a reply as sent when the socket's news comes before the transcript's read, with its author", { timeout: 90_000 }, async () => {
    const { id, from } = await conversation('Rolf Weber', ['Did you get my return?']);
    let release!: () => void;
    c.fake.behave(SEND_PATH, { heldUntil: new Promise<void>((r) => (release = r)) });
    const { context, page } = await c.newPage();
    // Every message.updated frame the page received.
    const updates: { id: number; status: string }[] = [];
    page.on('websocket', (ws) =>
      ws.on('framereceived', ({ payload }) => {
        const event = JSON.parse(String(payload)) as { type: string; data: { id: number; status: string } };
        if (event.type === 'message.updated') updates.push(event.data);
      }),
    );
    await c.signIn(page);
    await open(page, id);

    // The read after the reply is held with its answer (the reply still queued) until the
    // socket has told the page that the reply was sent.
    let held = 0;
    await page.route(`**/v1/threads/${id}/messages?*`, async (route) => {
      if (route.request().method() !== 'GET' || held > 0) return route.continue();
      held += 1;
      const answer = await route.fetch();
      const reply = (await answer.json()).data.find((m: { text: string }) => m.text === 'Yes, the refund is on its way.');
      expect(reply?.status).toBe('queued');
      release();
      await waitFor(async () => updates.some((u) => u.id === reply.id && u.status === 'sent'), 'the sent event');
      await route.fulfill({ response: answer });
    });
    const box = page.getByRole('textbox', { name: 'Reply' });
    await box.fill('Yes, the refund is on its way.');
    await box.press('Enter');
    const bubble = page.locator('.msg-outbound', { hasText: 'Yes, the refund is on its way.' });
    await bubble.waitFor();
    await bubble.getByText('Sent').waitFor({ timeout: 10_000 });
    expect(held).toBe(1);
    expect(await bubble.locator('.author').textContent()).toContain(c.agent.name);

    await page.getByLabel('Private note').check();
    await box.fill('Refund approved by finance.');
    await box.press('Enter');
    await page.locator('.msg-note', { hasText: 'Refund approved by finance.' }).locator('.author', { hasText: c.agent.name }).waitFor();
    // A reply through an API key has no user behind it.
    const res = await fetch(`${c.base}/v1/threads/${id}/messages`, {
      method: 'POST',
      headers: { ...c.tenant.headers, 'content-type': 'application/json', 'idempotency-key': `api-author-${id}` },
      body: JSON.stringify({ text: 'Sent by the shop system' }),
    });
    expect(res.ok, await res.text()).toBe(true);
    await page.locator('.msg-outbound', { hasText: 'Sent by the shop system' }).locator('.author', { hasText: /^API/ }).waitFor();
    // A rule's reply and note have no user behind them either: the service wrote them.
    const rule = await fetch(`${c.base}/v1/automation-rules`, {
      method: 'POST',
      headers: { ...c.tenant.headers, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'Receipt',
        event: 'message.created',
        conditions: [{ field: 'text', op: 'contains', value: 'receipt' }],
        actions: [
          { type: 'reply', text: 'We will send your receipt today.' },
          { type: 'note', text: 'Receipt asked for.' },
        ],
      }),
    });
    expect(rule.status, await rule.text()).toBe(201);
    await c.deliverWhatsapp({ from, name: 'Rolf Weber', text: 'And my receipt?' });
    await page
      .locator('.msg-outbound', { hasText: 'We will send your receipt today.' })
      .locator('.author', { hasText: /^Automation/ })
      .waitFor();
    await page
      .locator('.msg-note', { hasText: 'Receipt asked for.' })
      .locator('.author', { hasText: /^Automation/ })
      .waitFor();
    await context.close();
  });

  it('keeps the chosen tab across a reload, and a resolve opens the next conversation', { timeout: 60_000 }, async () => {
    const first = await conversation('Sven Kraft', ['First question']);
    const second = await conversation('Tina Vogt', ['Second question']);
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.getByRole('tab', { name: 'Unassigned' }).press('Enter');
    await expect.poll(() => page.getByRole('tab', { name: 'Unassigned' }).getAttribute('aria-selected')).toBe('true');
    await page.reload();
    await page.getByRole('tab', { name: 'Unassigned' }).waitFor();
    await expect.poll(() => page.getByRole('tab', { name: 'Unassigned' }).getAttribute('aria-selected')).toBe('true');

    // The newest is on top: resolving it opens the one below.
    await open(page, second.id);
    await page.locator(`[data-thread-id="${first.id}"]`).waitFor();
    await page.getByRole('button', { name: 'Resolve' }).press('Enter');
    await page.waitForURL(`**/app/c/${first.id}`);
    await page.getByRole('heading', { name: 'Sven Kraft' }).waitFor();
    expect((await db.selectFrom('threads').select('status').where('id', '=', second.id).executeTakeFirstOrThrow()).status).toBe('resolved');
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('tells a screen reader what arrives live: the contact’s words, a note, a reply that failed, never the agent’s own, each written once', {
    timeout: 60_000,
  }, async () => {
    c.fake.behave(SEND_PATH, 'bad-request');
    const { id, from } = await conversation('Lena Busch', ['Hello there']);
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await open(page, id);
    const news = page.getByRole('log', { name: 'New in this conversation' });
    expect(await news.textContent()).toBe('');

    await c.deliverWhatsapp({ from, name: 'Lena Busch', text: 'Are you still there?' });
    await news.getByText('New message from Lena Busch: Are you still there?').waitFor();
    const note = await c.ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${id}/messages`,
      headers: c.tenant.headers,
      payload: { text: 'Checked the stock', private: true },
    });
    expect(note.statusCode).toBe(201);
    await news.getByText('New note from API.').waitFor();
    // The note's words are on the page once: in the transcript.
    await page.getByText('Checked the stock').waitFor();

    const reply = page.getByRole('textbox', { name: 'Reply' });
    await reply.fill('Yes, one moment');
    await reply.press('Enter');
    await news.getByText('A reply was not delivered; the reason is shown with it.').waitFor();
    expect(await news.getByText(/replied/).count()).toBe(0);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it("never shows a conversation left behind: a late answer for it does not land in the next one's transcript", {
    timeout: 60_000,
  }, async () => {
    const anna = await conversation('Anna Alt', ['A question of Anna']);
    const bert = await conversation('Bert Neu', ['A question of Bert']);
    const { context, page } = await c.newPage();
    await c.signIn(page);
    // Anna's conversation is read on a slow line: the service answers, the page hears it later.
    let asked = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(new RegExp(`/v1/threads/${anna.id}(/messages)?(\\?.*)?$`), async (route) => {
      asked += 1;
      const response = await route.fetch();
      await held;
      await route.fulfill({ response });
    });
    await page.locator(`[data-thread-id="${anna.id}"]`).click();
    await waitFor(async () => asked === 2, "Anna's reads");
    // The agent moves on to Bert before Anna's conversation came.
    await open(page, bert.id);
    const transcript = page.getByRole('list', { name: 'Messages' });
    await transcript.getByText('A question of Bert').waitFor();
    release();
    await waitFor(async () => {
      const done = await page.evaluate<number>(
        `performance.getEntriesByType('resource').filter((e) => e.name.includes('/v1/threads/${anna.id}')).length`,
      );
      return done >= 2 || undefined;
    }, "Anna's answers to arrive");
    // Whatever Anna's answers did, it is done once the page has drawn twice more.
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    expect(await transcript.locator('.msg').allTextContents()).toEqual([expect.stringContaining('A question of Bert')]);
    expect(await page.locator('.transcript-head h2').textContent()).toBe('Bert Neu');
    expect(await page.getByRole('button', { name: 'Assign to me' }).count()).toBe(1);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('wraps a long contact name in the header instead of running under its buttons', { timeout: 60_000 }, async () => {
    const name = `Maximilian ${'Long'.repeat(20)}`;
    const { id } = await conversation(name, ['A long name']);
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await open(page, id);
    const heading = page.getByRole('heading', { name });
    await heading.waitFor();
    expect(await heading.evaluate((h) => h.scrollWidth <= h.clientWidth)).toBe(true);
    const headingBox = (await heading.boundingBox())!;
    const buttons = (await page.locator('.transcript-head .actions').boundingBox())!;
    const overlaps =
      headingBox.x < buttons.x + buttons.width &&
      buttons.x < headingBox.x + headingBox.width &&
      headingBox.y < buttons.y + buttons.height &&
      buttons.y < headingBox.y + headingBox.height;
    expect(overlaps).toBe(false);
    await context.close();
    // On a phone the buttons go below the name rather than squeezing it a letter wide (with
    // "Assign to me" gone, Macros and Resolve would just fit beside it).
    const mine = await c.ctx.app.inject({
      method: 'PATCH',
      url: `/v1/threads/${id}`,
      headers: c.tenant.headers,
      payload: { assigneeId: c.agent.id },
    });
    expect(mine.statusCode).toBe(200);
    const phone = await c.newPage({ viewport: PHONE });
    await c.signIn(phone.page);
    await open(phone.page, id);
    const box = (await phone.page.getByRole('heading', { name }).boundingBox())!;
    expect(box.width).toBeGreaterThan(150);
    await phone.context.close();
  });
});
