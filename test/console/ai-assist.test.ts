import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AI_RATE_LIMIT } from '../../src/ai/ai.service.js';
import { enforceRateLimit } from '../../src/rate-limits/rate-limit.js';
import { PHONE, useConsole } from '../helpers/console.js';
import { startFakeModel } from '../helpers/fake-model.js';
import { seriousViolations, tabTo, typeInto } from '../helpers/keyboard.js';
import { seedMessage, seedThread } from '../helpers/threads.js';
import { waitFor } from '../helpers/webhooks.js';

/*
 * AI assist in the console (docs/console.md, "AI assist"), driven by the keyboard in a real
 * Chromium against the real service and an OpenAI-compatible model on loopback. The picture
 * of a suggestion goes to CONSOLE_SCREENSHOT_DIR when set (docs/images), else to a temporary
 * directory.
 */
const OUT = process.env.CONSOLE_SCREENSHOT_DIR ?? path.join(tmpdir(), 'console-screenshots');
const model = await startFakeModel();
afterAll(() => model.close());
// The model listens on loopback: this deployment allows a model on its own machine.
const c = await useConsole({ agentName: 'Ada Lovelace', env: { INBOX_ALLOW_PRIVATE_AI: 'true' } });
const db = c.ctx.deps.db;

const ASKED = 'Hi! My parcel tracking number DE2231 does not work, where is my order?';
const DRAFT = 'Sorry about that, Maya! Tracking numbers start working within 24 hours of dispatch.';
let threadId = 0;
let page: Page;

const replyBox = () => page.getByRole('textbox', { name: 'Reply' });
const outbound = () =>
  db
    .selectFrom('messages')
    .select(['text', 'kind', 'ai'])
    .where('thread_id', '=', threadId)
    .where('direction', '=', 'outbound')
    .where('kind', '!=', 'activity')
    .execute();
const focusedId = () => page.evaluate<string>('document.activeElement?.id ?? ""');

beforeAll(async () => {
  // A resolved conversation whose agent reply answers the same question: the draft draws on it.
  const line = { id: c.whatsapp.id, workspaceId: c.tenant.workspace.id };
  const solved = await seedThread(c.ctx.deps, line, { status: 'resolved' });
  await seedMessage(c.ctx.deps, solved, 'The tracking number of my parcel does not work');
  const answer = await seedMessage(c.ctx.deps, solved, 'Tracking numbers start working within 24 hours of dispatch.');
  await db.updateTable('messages').set({ direction: 'outbound', status: 'sent' }).where('id', '=', answer.id).execute();

  await c.deliverWhatsapp({ from: '4915100000101', name: 'Maya Schulz', text: ASKED });
  const row = await waitFor(
    () => db.selectFrom('threads').select('id').where('last_message_preview', '=', ASKED).executeTakeFirst(),
    ASKED,
  );
  threadId = Number(row.id);
  ({ page } = await c.newPage({ viewport: { width: 1280, height: 760 } }));
});

describe('AI assist in the console', () => {
  it('offers nothing while AI assist is off; an admin turns it on in Settings → AI assist', { timeout: 60_000 }, async () => {
    const workspaceRead = page.waitForResponse((r) => r.url().endsWith('/v1/workspace') && r.request().method() === 'GET');
    await c.signIn(page);
    // j opens the first conversation of the list once the list holds it.
    await page.locator(`[data-thread-id="${threadId}"]`).waitFor();
    await page.keyboard.press('j');
    await replyBox().waitFor();
    expect((await workspaceRead).status()).toBe(200);
    expect(await page.getByRole('button', { name: /^(Suggest|Summarize|Rewrite…)$/ }).count()).toBe(0);

    await tabTo(page, page.getByRole('link', { name: 'Settings' }));
    await page.keyboard.press('Enter');
    await tabTo(page, page.getByRole('link', { name: 'AI assist' }));
    await page.keyboard.press('Enter');
    await typeInto(page, page.getByLabel('Base URL'), model.baseUrl);
    await typeInto(page, page.getByRole('textbox', { name: 'Model', exact: true }), 'llama3.1');
    await typeInto(page, page.getByLabel('API key (optional)'), 'sk-console-0123456789');
    await tabTo(page, page.getByLabel('AI assist is on'));
    await page.keyboard.press('Space');
    expect(await seriousViolations(page)).toEqual([]);
    await tabTo(page, page.getByRole('button', { name: 'Save AI assist' }));
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('AI assist is on.').waitFor();
    const shown = await c.ctx.app.inject({ method: 'GET', url: '/v1/workspace', headers: c.tenant.headers });
    expect(shown.json().data.ai).toEqual({ enabled: true, baseUrl: model.baseUrl, model: 'llama3.1', apiKeySet: true });
    // Write-only: the page never holds the key again.
    expect(await page.getByLabel('API key (optional)').inputValue()).toBe('');

    await tabTo(page, page.getByRole('link', { name: 'Conversations' }));
    await page.keyboard.press('Enter');
    await page.locator(`[data-thread-id="${threadId}"]`).waitFor();
    await page.keyboard.press('j');
    await page.getByRole('button', { name: 'Suggest' }).waitFor();
    expect(model.calls).toHaveLength(0);
  });

  it('Ctrl+J puts a draft in the composer, sends nothing; the agent edits it and sends it', { timeout: 60_000 }, async () => {
    // The model streams its words, and so does the service to the page.
    model.behave({ answer: DRAFT, stream: true });
    await page.keyboard.press('r');
    await page.keyboard.press('Control+j');
    await expect.poll(() => replyBox().inputValue()).toBe(DRAFT);
    await page.getByRole('status').getByText('drawing on a reply of similar resolved conversations').waitFor();
    expect(await focusedId()).toBe('reply-box');
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]!.headers.authorization).toBe('Bearer sk-console-0123456789');
    expect(model.calls[0]!.body.stream).toBe(true);
    expect(model.prompt()).toContain(ASKED);
    expect(await outbound()).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
    await mkdir(OUT, { recursive: true });
    await page.screenshot({ path: path.join(OUT, 'console-ai.png') });

    await page.keyboard.press('End');
    await page.keyboard.type(' Yours arrives tomorrow.');
    await page.keyboard.press('Enter');
    await expect.poll(outbound).toEqual([{ text: `${DRAFT} Yours arrives tomorrow.`, kind: 'message', ai: false }]);
    await expect.poll(() => replyBox().inputValue()).toBe('');
  });

  it('Summarize adds the model’s summary to the transcript as a private note marked AI', { timeout: 60_000 }, async () => {
    const summary = 'Maya’s tracking number DE2231 did not work; told her it starts within 24 hours.';
    model.behave({ answer: summary });
    await tabTo(page, page.getByRole('button', { name: 'Summarize' }));
    await page.keyboard.press('Enter');
    const note = page.locator('.msg-note', { hasText: summary });
    await note.getByText('AI', { exact: true }).waitFor();
    expect(await outbound()).toContainEqual({ text: summary, kind: 'note', ai: true });
    expect(model.prompt()).toContain(ASKED);
  });

  it('Rewrite → Shorter replaces the text; Ctrl+Z and Restore give the agent’s back', { timeout: 60_000 }, async () => {
    const mine = 'Thank you so much for your message, we are really very sorry, the parcel will arrive tomorrow.';
    const shorter = 'Sorry! Your parcel arrives tomorrow.';
    model.behave({ answer: shorter });
    await typeInto(page, replyBox(), mine);
    await tabTo(page, page.getByRole('button', { name: 'Rewrite…' }));
    await page.keyboard.press('Enter');
    await tabTo(page, page.getByRole('button', { name: 'Shorter' }));
    await page.keyboard.press('Enter');
    await expect.poll(() => replyBox().inputValue()).toBe(shorter);
    expect(await focusedId()).toBe('reply-box');
    expect(model.prompt()).toContain(mine);
    expect(model.prompt()).toContain('shorter');

    await page.keyboard.press('Control+z');
    expect(await replyBox().inputValue()).toBe(mine);
    // Rewritten again, then given back with the button.
    await tabTo(page, page.getByRole('button', { name: 'Rewrite…' }));
    await page.keyboard.press('Enter');
    await tabTo(page, page.getByRole('button', { name: 'Shorter' }));
    await page.keyboard.press('Enter');
    await expect.poll(() => replyBox().inputValue()).toBe(shorter);
    await tabTo(page, page.getByRole('button', { name: 'Restore' }));
    await page.keyboard.press('Enter');
    expect(await replyBox().inputValue()).toBe(mine);
    expect(await focusedId()).toBe('reply-box');
    expect(c.errorsOf(page)).toEqual([]);
  });

  it('a model answering 500, then the workspace over its AI budget: the composer says why and keeps text and focus', {
    timeout: 60_000,
  }, async () => {
    model.behave({ status: 500, body: '{"error":"upstream secret detail"}' });
    const kept = replyBox();
    await tabTo(page, kept);
    await page.keyboard.press('Control+a');
    await page.keyboard.type('Let me check that for you.');
    await page.keyboard.press('Control+j');
    const alert = page.locator('.composer').getByRole('alert');
    await alert.getByText(/The model could not answer \(HTTP 500\)\. Your text is unchanged\./).waitFor();
    expect(await alert.textContent()).not.toContain('secret');
    expect(await kept.inputValue()).toBe('Let me check that for you.');
    expect(await focusedId()).toBe('reply-box');
    // The buttons stay: the model may answer the next time.
    await page.getByRole('button', { name: 'Suggest' }).waitFor();

    // The workspace's minute of AI requests spent: the service refuses (429) before the model.
    const calls = model.calls.length;
    for (let i = 0; i < AI_RATE_LIMIT.limit; i++)
      await db
        .transaction()
        .execute((trx) => enforceRateLimit(trx, AI_RATE_LIMIT, c.tenant.workspace.id, new Date()))
        .catch(() => undefined);
    await page.keyboard.press('Control+j');
    await alert.getByText(/Too many AI requests in this workspace just now: try again in \d+ s\. Your text is unchanged\./).waitFor();
    expect(await kept.inputValue()).toBe('Let me check that for you.');
    expect(await focusedId()).toBe('reply-box');
    expect(model.calls).toHaveLength(calls);

    // On a phone the composer's extra buttons wrap: nothing scrolls sideways.
    await page.setViewportSize(PHONE);
    await tabTo(page, page.getByRole('button', { name: 'Rewrite…' }));
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Shorter' }).waitFor();
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    // The panes clip what overflows them, so each control's own edge is what tells.
    const rights = await page
      .locator('.composer-bar button, .rewrite-menu button, .rewrite-menu input')
      .evaluateAll((els: { getBoundingClientRect(): { right: number } }[]) => els.map((el) => el.getBoundingClientRect().right));
    expect(Math.max(...rights)).toBeLessThanOrEqual(PHONE.width);
  });
});
