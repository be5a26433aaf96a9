import { tmpdir } from 'node:os';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page, WebSocketRoute } from 'playwright-core';
import { beforeEach, describe, expect, it } from 'vitest';
import { createCannedResponse } from '../../src/canned-responses/canned-responses.service.js';
import { PHONE_NUMBER_ID, useConsole } from '../helpers/console.js';
import { makeUser } from '../helpers/factories.js';
import { seedMessage } from '../helpers/threads.js';
import { waitFor } from '../helpers/webhooks.js';

/*
 * The agent console end to end (issue 27's items 1, 2, 4, 5, 6 and its bad-input list):
 * the built console in Chromium, the real service with its workers, the fake WhatsApp API.
 */
const c = await useConsole();

/**
 * The page's realtime socket through a line the test can cut: `cut` waits for the socket,
 * closes it and refuses every new one (the console shows "Connection lost" and retries);
 * `restore` lets the next retry through. `hold` keeps each new socket connecting (it reaches
 * the service only on the returned release), as a slow network would.
 */
async function realtimeLine(page: Page) {
  let down = false;
  let gate: Promise<void> | null = null;
  let waiting = 0;
  const live: WebSocketRoute[] = [];
  await page.routeWebSocket(/\/v1\/realtime/, async (ws) => {
    if (down) {
      void ws.close({ code: 4000, reason: 'test: network down' });
      return;
    }
    if (gate !== null) {
      waiting += 1;
      await gate;
      waiting -= 1;
    }
    ws.connectToServer();
    live.push(ws);
  });
  return {
    hold() {
      let release!: () => void;
      gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      return {
        /** Resolves once the page's socket is waiting at the line. */
        waiting: () => waitFor(async () => waiting > 0, 'the socket to wait'),
        release() {
          gate = null;
          release();
        },
      };
    },
    async cut() {
      await waitFor(async () => live.length > 0, 'the socket');
      down = true;
      for (const ws of live.splice(0)) await ws.close({ code: 4000, reason: 'test: network down' });
    },
    restore() {
      down = false;
    },
  };
}
const db = c.ctx.deps.db;
const SEND_PATH = `/graph/v23.0/${PHONE_NUMBER_ID}/messages`;
const sends = () => c.fake.requests.filter((r) => r.path === SEND_PATH);

beforeEach(() => c.fake.reset());

async function serious(page: Page, where: string) {
  const result = await new AxeBuilder({ page }).analyze();
  const found = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
  expect(found, where).toEqual([]);
}

const messageRow = (text: string) =>
  waitFor(() => db.selectFrom('messages').selectAll().where('text', '=', text).executeTakeFirst(), `the message "${text}"`);
const sentRow = (text: string) =>
  waitFor(async () => {
    const m = await messageRow(text);
    return m.status !== 'queued' ? m : undefined;
  }, `"${text}" to leave queued`);

describe('the agent console in Chromium', () => {
  it('shows a new WhatsApp message live with its unread badge, answers it once despite a dropped network, and ticks to read', {
    timeout: 90_000,
  }, async () => {
    const { context, page } = await c.newPage();
    await c.signIn(page);
    const list = page.getByRole('list', { name: 'Conversation list' });

    // 1. A delivery arrives while the list is open: it appears without a reload, unread.
    await c.deliverWhatsapp({ from: '4915100000001', name: 'Lena Vogel', text: 'Hello, where is parcel 7781?' });
    const row = list.getByRole('link', { name: /Lena Vogel/ });
    await row.getByText('Hello, where is parcel 7781?').waitFor();
    await expect.poll(() => row.locator('.badge').textContent()).toContain('1');

    // 2. Open it, reply with Enter; the network drops once after the request reached the service.
    let dropped = 0;
    await page.route('**/v1/threads/*/messages', async (route) => {
      if (route.request().method() === 'POST' && dropped === 0) {
        dropped += 1;
        await route.fetch(); // the service has it now…
        await route.abort('connectionreset'); // …but the browser never hears the answer
        return;
      }
      await route.continue();
    });
    await row.click();
    await page.getByRole('heading', { name: 'Lena Vogel' }).waitFor();
    const reply = page.getByRole('textbox', { name: 'Reply' });
    await reply.fill('It left our warehouse this morning.');
    await reply.press('Enter');
    const bubble = page.locator('.msg-outbound', { hasText: 'It left our warehouse this morning.' });
    await bubble.waitFor();
    await expect.poll(() => reply.inputValue()).toBe('');
    const sent = await sentRow('It left our warehouse this morning.');
    expect(dropped).toBe(1);
    await waitFor(async () => sends().length >= 1, 'the provider to receive the send');
    expect(sends()).toHaveLength(1);
    expect(await db.selectFrom('messages').select('id').where('text', '=', 'It left our warehouse this morning.').execute()).toHaveLength(
      1,
    );
    // Opening the thread read it: the badge is gone.
    await expect.poll(() => row.locator('.badge').count()).toBe(0);

    await c.whatsappStatus(sent.external_id!, 'delivered', '4915100000001');
    await bubble.getByText('Delivered').waitFor();
    await c.whatsappStatus(sent.external_id!, 'read', '4915100000001');
    await bubble.getByText('Read').waitFor();
    expect(sends()).toHaveLength(1);

    // 4. A private note is shown apart and never reaches the provider.
    await page.getByLabel('Private note').check();
    await reply.fill('Customer is a VIP, offer express shipping next time.');
    await reply.press('Enter');
    const note = page.locator('.msg-note', { hasText: 'Customer is a VIP' });
    await note.getByText('Private note').waitFor();
    expect((await messageRow('Customer is a VIP, offer express shipping next time.')).kind).toBe('note');
    expect(sends()).toHaveLength(1);

    await serious(page, 'the conversation');
    // The browser logs the request the test cut itself; nothing else.
    expect(c.errorsOf(page).filter((e) => !e.includes('ERR_CONNECTION_RESET'))).toEqual([]);
    await context.close();
  });

  it("shows the provider's reason on a failed message", { timeout: 60_000 }, async () => {
    c.fake.behave(SEND_PATH, 'bad-request');
    await c.deliverWhatsapp({ from: '4915100000002', name: 'Tom Berg', text: 'Can I change my address?' });
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.getByRole('link', { name: /Tom Berg/ }).click();
    const reply = page.getByRole('textbox', { name: 'Reply' });
    await reply.fill('Yes, send us the new one.');
    await reply.press('Enter');
    const failed = await waitFor(async () => {
      const m = await messageRow('Yes, send us the new one.');
      return m.status === 'failed' ? m : undefined;
    }, 'the send to fail');
    const bubble = page.locator('.msg-outbound', { hasText: 'Yes, send us the new one.' });
    await bubble.getByText('Failed').waitFor();
    await bubble.getByText(failed.error!.slice(0, 30), { exact: false }).waitFor();
    await context.close();
  });

  it('search finds a message by a word, / inserts a canned response, and the main flow runs on the keyboard alone', {
    timeout: 90_000,
  }, async () => {
    await createCannedResponse(c.ctx.deps, c.tenant.workspace.id, {
      shortCode: 'thanks',
      content: 'Thank you for your patience, {{contact.name}}!',
    });
    await c.deliverWhatsapp({ from: '4915100000003', name: 'Ines Roth', text: 'My blender arrived broken' });
    await messageRow('My blender arrived broken');
    const { context, page } = await c.newPage();

    // Keyboard only: sign in, j to the newest conversation, r to reply, Enter, e to resolve.
    await page.goto(`${c.base}/app/`);
    await page.getByLabel('E-mail').focus();
    await page.keyboard.type(c.agent.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(c.agent.password);
    await page.keyboard.press('Enter');
    await page.getByRole('tab', { name: 'All' }).waitFor();
    await page.getByRole('list', { name: 'Conversation list' }).getByText('Ines Roth').waitFor();
    // j walks the list from its top until Ines's conversation is open.
    const heading = page.getByRole('heading', { name: 'Ines Roth' });
    const transcriptName = page.locator('.transcript-head h2');
    const selectedName = page.locator('.thread.selected .thread-name');
    // Nothing is selected yet, so the first j selects the top row and each next one the row
    // below: wait for each step's selection before the next press, never pressing past Ines.
    const names = await page.locator('.thread .thread-name').allTextContents();
    expect(names).toContain('Ines Roth');
    for (const name of names.slice(0, names.indexOf('Ines Roth') + 1)) {
      await page.keyboard.press('j');
      await expect.poll(() => selectedName.textContent()).toBe(name);
    }
    await expect.poll(() => transcriptName.textContent()).toBe('Ines Roth');
    await heading.waitFor();
    await page.keyboard.press('r');
    await expect.poll(() => page.evaluate<string | undefined>('document.activeElement?.id')).toBe('reply-box');
    await page.keyboard.type('/than');
    await page.getByRole('listbox', { name: 'Canned responses' }).waitFor();
    await page.keyboard.press('Enter');
    const reply = page.getByRole('textbox', { name: 'Reply' });
    // The variable is filled in for this conversation's contact (docs/automation.md).
    await expect.poll(() => reply.inputValue()).toBe('Thank you for your patience, Ines Roth!');
    await page.keyboard.press('Enter');
    await sentRow('Thank you for your patience, Ines Roth!');
    await page.keyboard.press('Escape');
    await page.keyboard.press('e');
    const thread = await waitFor(async () => {
      const m = await messageRow('My blender arrived broken');
      const t = await db.selectFrom('threads').select('status').where('id', '=', m.thread_id).executeTakeFirstOrThrow();
      return t.status === 'resolved' ? t : undefined;
    }, 'the thread to be resolved');
    expect(thread.status).toBe('resolved');
    await page.keyboard.press('?');
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    await serious(page, 'the shortcuts dialog');
    await page.keyboard.press('Escape');

    // Search: a word of the message finds it.
    await page.getByRole('searchbox', { name: 'Search messages and contacts' }).fill('blender');
    await page.getByRole('list', { name: 'Matching messages' }).getByText('My blender arrived broken').waitFor();
    await serious(page, 'search results');
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('a lost connection shows a banner and keeps the draft; the list catches up when it is back', { timeout: 90_000 }, async () => {
    await c.deliverWhatsapp({ from: '4915100000004', name: 'Jonas Weber', text: 'Do you ship to Austria?' });
    await c.deliverWhatsapp({ from: '4915100000005', name: 'Mia Klein', text: 'Invoice please' });
    const { context, page } = await c.newPage();
    const network = await realtimeLine(page);
    await c.signIn(page);
    await page.getByRole('link', { name: /Jonas Weber/ }).click();
    const reply = page.getByRole('textbox', { name: 'Reply' });
    await reply.fill('Yes, we ship to Austria within 3 days');
    await network.cut();
    await page.getByText('Connection lost').waitFor();
    await serious(page, 'the connection banner');
    // The draft survives switching away and back.
    await page.getByRole('link', { name: /Mia Klein/ }).click();
    await page.getByRole('heading', { name: 'Mia Klein' }).waitFor();
    await page.getByRole('link', { name: /Jonas Weber/ }).click();
    await expect.poll(() => reply.inputValue()).toBe('Yes, we ship to Austria within 3 days');

    // Something happens while the socket is away; once back, the list re-reads it.
    await c.deliverWhatsapp({ from: '4915100000006', name: 'Paul Frank', text: 'Arrived while you were offline' });
    await messageRow('Arrived while you were offline');
    network.restore();
    await page.getByText('Connection lost').waitFor({ state: 'hidden' });
    await page.getByRole('list', { name: 'Conversation list' }).getByText('Arrived while you were offline').waitFor();
    expect(await reply.inputValue()).toBe('Yes, we ship to Austria within 3 days');
    await context.close();
  });

  it('back from a lost connection, what came meanwhile in the open conversation is read, and a colleague added meanwhile can be assigned', {
    timeout: 90_000,
  }, async () => {
    await c.deliverWhatsapp({ from: '4915100000014', name: 'Lena Gap', text: 'Before the gap' });
    const { context, page } = await c.newPage();
    const network = await realtimeLine(page);
    await c.signIn(page);
    await page.getByRole('link', { name: /Lena Gap/ }).click();
    await page.getByRole('heading', { name: 'Lena Gap' }).waitFor();
    const threadId = (await messageRow('Before the gap')).thread_id;
    const unread = async () =>
      (await db.selectFrom('threads').select('unread_count').where('id', '=', threadId).executeTakeFirstOrThrow()).unread_count;
    await expect.poll(unread).toBe(0);
    await network.cut();
    await page.getByText('Connection lost').waitFor();
    await c.deliverWhatsapp({ from: '4915100000014', name: 'Lena Gap', text: 'Written while you were away' });
    await messageRow('Written while you were away');
    await expect.poll(unread).toBe(1);
    await makeUser(c.ctx.deps, c.tenant.workspace.id, { name: 'Cy Newcomer', roles: ['agent'] });

    network.restore();
    await page.getByText('Connection lost').waitFor({ state: 'hidden' });
    await page.getByRole('list', { name: 'Messages' }).getByText('Written while you were away').waitFor();
    // The agent is reading it: nothing of it is unread, here or for colleagues.
    await expect.poll(unread).toBe(0);
    await page.locator(`[data-thread-id="${threadId}"] .badge`).waitFor({ state: 'detached' });
    // The team is read again: the colleague who joined during the gap is offered.
    const assignee = page.getByRole('region', { name: 'Conversation' }).getByLabel('Assignee');
    await expect.poll(() => assignee.locator('option').allTextContents()).toContain('Cy Newcomer');
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('what arrives while the page loads and its socket is still connecting is shown once the socket is ready', {
    timeout: 90_000,
  }, async () => {
    await c.deliverWhatsapp({ from: '4915100000016', name: 'Rosa Early', text: 'First words' });
    await c.deliverWhatsapp({ from: '4915100000017', name: 'Kai Early', text: 'A question about returns' });
    const rosa = (await messageRow('First words')).thread_id;
    const kai = (await messageRow('A question about returns')).thread_id;
    const { context, page } = await c.newPage();
    const network = await realtimeLine(page);
    await c.signIn(page);
    await page.getByRole('link', { name: /Rosa Early/ }).click();
    await page.getByRole('heading', { name: 'Rosa Early' }).waitFor();
    const list = page.getByRole('list', { name: 'Conversation list' });
    const kaiRow = page.locator(`[data-thread-id="${kai}"]`);
    await kaiRow.waitFor();
    const allCount = () => page.getByRole('tab', { name: /^All/ }).locator('.tab-count').textContent();
    const before = Number(await waitFor(async () => (await allCount())?.trim() || undefined, 'the tab counts'));

    // The page loads again: the list, the counts and the conversation are read while the
    // socket is still on its way to the service.
    const line = network.hold();
    await page.reload();
    await page.getByRole('list', { name: 'Messages' }).getByText('First words').waitFor();
    await kaiRow.getByText('A question about returns').waitFor();
    await expect.poll(allCount).toBe(` ${before}`);
    await line.waiting();

    // Written after those reads and before the service holds the socket: no event brings them.
    await c.deliverWhatsapp({ from: '4915100000016', name: 'Rosa Early', text: 'Are you there?' });
    await c.deliverWhatsapp({ from: '4915100000017', name: 'Kai Early', text: 'Still waiting on returns' });
    await c.deliverWhatsapp({ from: '4915100000018', name: 'Nora Early', text: 'A brand new question' });
    for (const text of ['Are you there?', 'Still waiting on returns', 'A brand new question']) await messageRow(text);
    // While the socket comes up, the "connection lost" banner never shows and the list never empties.
    await page.evaluate(`
      window.seen = { banner: false, empty: false };
      new MutationObserver(() => {
        if (document.body.textContent.includes('Connection lost')) window.seen.banner = true;
        if (document.querySelectorAll('[data-thread-id]').length === 0) window.seen.empty = true;
      }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    `);
    line.release();

    await page.getByRole('list', { name: 'Messages' }).getByText('Are you there?').waitFor();
    await kaiRow.getByText('Still waiting on returns').waitFor();
    await expect.poll(() => kaiRow.locator('.badge').textContent()).toContain('2');
    await list
      .getByRole('link', { name: /Nora Early/ })
      .getByText('A brand new question')
      .waitFor();
    await expect.poll(allCount).toBe(` ${before + 1}`);
    // The open conversation is being read: its new message is not left unread.
    await page.locator(`[data-thread-id="${rosa}"] .badge`).waitFor({ state: 'detached' });
    expect(await page.evaluate('window.seen')).toEqual({ banner: false, empty: false });
    await page.screenshot({ path: path.join(tmpdir(), 'inbox-ready-reread.png') });
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it("the conversation's first read, answering after the one the socket's ready asked for, takes no message back", {
    timeout: 60_000,
  }, async () => {
    await c.deliverWhatsapp({ from: '4915100000023', name: 'Uwe Slow', text: 'Uwe asks first' });
    const uwe = (await messageRow('Uwe asks first')).thread_id;
    const { context, page } = await c.newPage();
    const network = await realtimeLine(page);
    await c.signIn(page);
    await page.getByRole('link', { name: /Uwe Slow/ }).click();
    await page.getByRole('heading', { name: 'Uwe Slow' }).waitFor();
    // The page loads again: the transcript's first read is answered at once but reaches the
    // page late, after the socket's `ready` had it read again.
    let asked = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const messagesRead = new RegExp(`/v1/threads/${uwe}/messages\\?`);
    await page.route(messagesRead, async (route) => {
      if (asked > 0 || route.request().method() !== 'GET') return route.continue();
      asked += 1;
      const response = await route.fetch();
      await held;
      await route.fulfill({ response });
    });
    const line = network.hold();
    await page.reload();
    await waitFor(async () => asked === 1 || undefined, 'the first read');
    await line.waiting();
    await c.deliverWhatsapp({ from: '4915100000023', name: 'Uwe Slow', text: 'Uwe asks again' });
    await messageRow('Uwe asks again');
    line.release();
    const transcript = page.getByRole('list', { name: 'Messages' });
    await transcript.getByText('Uwe asks again').waitFor();
    release();
    await waitFor(async () => {
      const done = await page.evaluate<number>(
        `performance.getEntriesByType('resource').filter((e) => e.name.includes('/v1/threads/${uwe}/messages')).length`,
      );
      return done >= 2 || undefined;
    }, 'the first read to arrive');
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    expect(await transcript.getByText('Uwe asks again').count()).toBe(1);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('the focused row keeps the focus when a new message moves it to the top of the list', { timeout: 60_000 }, async () => {
    const now = Math.floor(Date.now() / 1000);
    const people = [
      { from: '4915100000019', name: 'Ole Moved', text: 'An older question', timestamp: now - 180 },
      { from: '4915100000020', name: 'Pia Above', text: 'A newer question', timestamp: now - 120 },
      { from: '4915100000021', name: 'Quirin Above', text: 'The newest question', timestamp: now - 60 },
    ];
    for (const who of people) await c.deliverWhatsapp(who);
    const ole = (await messageRow('An older question')).thread_id;
    await messageRow('The newest question');
    const { context, page } = await c.newPage();
    await c.signIn(page);
    const row = page.locator(`[data-thread-id="${ole}"]`);
    const rowIds = () => page.locator('[data-thread-id]').evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-thread-id'))));
    // Opened from the keyboard, the conversation leaves the focus on its row.
    await row.focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Ole Moved' }).waitFor();
    const focused = () => page.evaluate<string | null>("document.activeElement?.getAttribute('data-thread-id') ?? null");
    await expect.poll(focused).toBe(String(ole));
    const below = (await rowIds()).indexOf(ole);
    await c.deliverWhatsapp({ from: '4915100000019', name: 'Ole Moved', text: 'Moving up', timestamp: now });
    await row.getByText('Moving up').waitFor();
    await expect.poll(async () => (await rowIds()).indexOf(ole)).toBeLessThan(below);
    expect(await focused()).toBe(String(ole));
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('back from a lost connection, more messages than a page in the open conversation are all shown, in order', {
    timeout: 90_000,
  }, async () => {
    await c.deliverWhatsapp({ from: '4915100000022', name: 'Tilo Many', text: 'Before the flood' });
    const { context, page } = await c.newPage();
    const network = await realtimeLine(page);
    await c.signIn(page);
    await page.getByRole('link', { name: /Tilo Many/ }).click();
    const transcript = page.getByRole('list', { name: 'Messages' });
    await transcript.getByText('Before the flood').waitFor();
    await network.cut();
    await page.getByText('Connection lost').waitFor();
    // More than one page (30) of the transcript arrives while the socket is away.
    const texts = Array.from({ length: 36 }, (_, i) => `Line ${String(i + 1).padStart(2, '0')} of the flood`);
    const now = Math.floor(Date.now() / 1000);
    for (const [i, text] of texts.entries())
      await c.deliverWhatsapp({ from: '4915100000022', name: 'Tilo Many', text, timestamp: now + i });
    await messageRow(texts.at(-1)!);
    network.restore();
    await page.getByText('Connection lost').waitFor({ state: 'hidden' });
    await transcript.getByText(texts.at(-1)!).waitFor();
    const shown = await transcript.locator('.msg-inbound').allTextContents();
    expect(shown.map((t) => /^(Before the flood|Line \d+ of the flood)/.exec(t)?.[1])).toEqual(['Before the flood', ...texts]);

    // Past five pages the transcript starts over from the newest, with no hole in it: what it
    // shows ends with the newest and runs on without a gap (the older ones a scroll away).
    await network.cut();
    await page.getByText('Connection lost').waitFor();
    const thread = await db
      .selectFrom('threads')
      .selectAll()
      .where('id', '=', (await messageRow('Before the flood')).thread_id)
      .executeTakeFirstOrThrow();
    const waves = Array.from({ length: 160 }, (_, i) => `Wave ${String(i + 1).padStart(3, '0')}`);
    for (const [i, text] of waves.entries()) await seedMessage(c.ctx.deps, thread, text, { createdAt: new Date((now + 60 + i) * 1000) });
    network.restore();
    await page.getByText('Connection lost').waitFor({ state: 'hidden' });
    await transcript.getByText(waves.at(-1)!).waitFor();
    const after = await transcript.locator('.msg-inbound').allTextContents();
    expect(after.map((t) => /^(Before the flood|Line \d{2}|Wave \d{3})/.exec(t)?.[1])).toEqual(waves.slice(-150));
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('what the agent types or switches on while a reply is on its way stays in the box, for the next message', {
    timeout: 90_000,
  }, async () => {
    await c.deliverWhatsapp({ from: '4915100000015', name: 'Omar Quick', text: 'Is the shop open on Sunday?' });
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.getByRole('link', { name: /Omar Quick/ }).click();
    await page.getByRole('heading', { name: 'Omar Quick' }).waitFor();
    // The reply's request is held until the agent has gone on writing.
    let release: (() => void) | undefined;
    await page.route(/\/v1\/threads\/\d+\/messages$/, async (route) => {
      if (route.request().method() !== 'POST' || release) return route.continue();
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      await route.continue();
    });
    const reply = page.getByRole('textbox', { name: 'Reply' });
    await reply.fill('No, we are closed on Sundays.');
    await reply.press('Enter');
    await waitFor(async () => release, 'the reply to be under way');
    // The agent goes on at once: a note for the team, typed after the sent words.
    await page.getByLabel('Private note').check();
    await reply.press('End');
    await reply.pressSequentially(' Check the holiday hours');
    release!();
    const sent = await sentRow('No, we are closed on Sundays.');
    await expect.poll(() => reply.inputValue()).toBe('Check the holiday hours');
    expect(await page.getByLabel('Private note').isChecked()).toBe(true);
    await reply.press('Enter');
    const note = await messageRow('Check the holiday hours');
    expect(note).toMatchObject({ kind: 'note', private: true, thread_id: sent.thread_id });
    await expect.poll(() => reply.inputValue()).toBe('');
    // Only the reply went to the provider.
    expect(sends().map((r) => JSON.parse(r.body).text.body)).toEqual(['No, we are closed on Sundays.']);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('a wrong password shows the error and keeps the e-mail; too many show when to try again', { timeout: 60_000 }, async () => {
    const { user } = await makeUser(c.ctx.deps, c.tenant.workspace.id, { email: 'bo.limit@acme.test', roles: ['agent'] });
    const { context, page } = await c.newPage();
    await page.goto(`${c.base}/app/`);
    await serious(page, 'the sign-in page');
    await page.getByLabel('E-mail').fill(user.email);
    for (let i = 0; i < 5; i++) {
      await page.getByLabel('Password').fill(`wrong-${i}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('alert').getByText('Wrong e-mail or password.').waitFor();
      expect(await page.getByLabel('E-mail').inputValue()).toBe(user.email);
    }
    await page.getByLabel('Password').fill('wrong-again');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('alert')
      .getByText(/Try again in \d+ minutes?/)
      .waitFor();
    expect(await page.getByLabel('E-mail').inputValue()).toBe(user.email);
    await context.close();
  });
});
