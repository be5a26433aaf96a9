import { AxeBuilder } from '@axe-core/playwright';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { PHONE_NUMBER_ID, useConsole } from '../helpers/console.js';
import { deliverWhatsappImage, picturePng } from '../helpers/pictures.js';
import { waitFor } from '../helpers/webhooks.js';

/*
 * Files in the agent console: an inbound WhatsApp image shows inline once the service has
 * fetched it (a placeholder until then, replaced live), and a reply carries a file the agent
 * attached, which reaches the fake WhatsApp API as an upload and a send. An upload the service
 * refuses shows why and keeps the draft.
 */
const MAX_BYTES = 200 * 1024;
const c = await useConsole({
  env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true', INBOX_MAX_ATTACHMENT_BYTES: String(MAX_BYTES) },
});
const db = c.ctx.deps.db;
const SEND_PATH = `/graph/v23.0/${PHONE_NUMBER_ID}/messages`;
const PDF = Buffer.from('%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n');
const photo = await picturePng(c.browser, 'Parcel 7781: the box arrived torn');

beforeEach(() => c.fake.reset());

async function serious(page: Page, where: string) {
  const result = await new AxeBuilder({ page }).analyze();
  const found = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
  expect(found, where).toEqual([]);
}

/** Holds the service's writes of file bytes (postgres storage) while the test looks at `pending`. */
async function holdStorage() {
  const client = new pg.Client({ connectionString: c.ctx.database.url });
  await client.connect();
  await client.query('BEGIN');
  await client.query('LOCK TABLE attachment_chunks IN SHARE MODE');
  let released = false;
  const release = async () => {
    if (released) return;
    released = true;
    await client.query('COMMIT');
    await client.end();
  };
  afterAll(release);
  return release;
}

describe('files in the agent console', () => {
  it('an inbound image: a placeholder while it is fetched, then inline, live; a reply carries a PDF to WhatsApp', {
    timeout: 90_000,
  }, async () => {
    const { context, page } = await c.newPage();
    await c.signIn(page);
    const release = await holdStorage();
    await deliverWhatsappImage(c, { from: '4915100000051', name: 'Mira Fischer', caption: 'This one', png: photo });
    await page
      .getByRole('list', { name: 'Conversation list' })
      .getByRole('link', { name: /Mira Fischer/ })
      .click();
    const bubble = page.locator('.msg-inbound', { hasText: 'This one' });
    await bubble.getByText('downloading from the provider').waitFor();

    await release();
    const image = bubble.locator('img.inline-image');
    await image.waitFor();
    // The bytes were read with the agent's token and shown from a blob: URL, fully decoded.
    expect(await image.getAttribute('src')).toMatch(/^blob:/);
    await expect
      .poll(() => image.evaluate((img) => (img as unknown as { complete: boolean; naturalWidth: number }).naturalWidth))
      .toBe(480);
    await expect.poll(() => bubble.getByText('downloading from the provider').count()).toBe(0);

    // Attach a PDF with the keyboard-reachable button; WhatsApp takes one file per message.
    // locator.press focuses the button as it is when the key goes down: a live update that
    // redraws the composer between a separate focus() and the key cannot swallow the key.
    const attach = page.getByRole('button', { name: 'Attach a file' });
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), attach.press('Enter')]);
    expect(chooser.isMultiple()).toBe(false);
    await chooser.setFiles({ name: 'invoice-7781.pdf', mimeType: 'application/pdf', buffer: PDF });
    const chips = page.getByRole('list', { name: 'Files to send' });
    await chips.getByText('invoice-7781.pdf').waitFor();
    await chips.getByText(`${PDF.length} B`).waitFor();
    await expect.poll(() => attach.isDisabled()).toBe(true);
    const send = page.getByRole('button', { name: 'Send', exact: true });
    await expect.poll(() => send.isEnabled()).toBe(true);
    await serious(page, 'the composer with a file');

    // No text: the file alone is the reply.
    await send.click();
    await waitFor(async () => c.fake.requests.some((r) => r.path === SEND_PATH), 'the send to reach WhatsApp');
    const uploads = [...c.fake.uploads.values()];
    expect(uploads).toHaveLength(1);
    expect(uploads[0]!.bytes.equals(PDF)).toBe(true);
    expect(uploads[0]!.filename).toBe('invoice-7781.pdf');
    const sends = c.fake.requests.filter((r) => r.path === SEND_PATH);
    expect(sends).toHaveLength(1);
    expect(sends[0]!.parsed).toMatchObject({ type: 'document', document: { id: [...c.fake.uploads.keys()][0] } });
    // The chips are gone and the transcript shows the file as a download with its size.
    await expect.poll(() => chips.count()).toBe(0);
    const link = page.locator('.msg-outbound a.file', { hasText: 'invoice-7781.pdf' });
    await link.waitFor();
    expect(await link.textContent()).toContain(`(${PDF.length} B)`);
    expect(await link.getAttribute('download')).toBe('invoice-7781.pdf');

    await serious(page, 'a conversation with files');
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('a file over the limit shows the refusal and keeps the draft; removing it lets the text go', { timeout: 60_000 }, async () => {
    await c.deliverWhatsapp({ from: '4915100000052', name: 'Jonas Weber', text: 'Here is the video' });
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.getByRole('link', { name: /Jonas Weber/ }).click();
    const reply = page.getByRole('textbox', { name: 'Reply' });
    await reply.fill('Thanks, we are looking at it.');
    const [chooser] = await Promise.all([page.waitForEvent('filechooser'), page.getByRole('button', { name: 'Attach a file' }).click()]);
    await chooser.setFiles({ name: 'huge.bin', mimeType: 'application/octet-stream', buffer: Buffer.alloc(MAX_BYTES + 1, 7) });
    const refusal = page.getByRole('list', { name: 'Files to send' }).getByRole('alert');
    await refusal.getByText('Not uploaded').waitFor();
    expect(await refusal.textContent()).toMatch(/large|bytes/i);
    const send = page.getByRole('button', { name: 'Send', exact: true });
    expect(await send.isDisabled()).toBe(true);
    expect(await reply.inputValue()).toBe('Thanks, we are looking at it.');
    expect(await db.selectFrom('attachments').select('id').where('filename', '=', 'huge.bin').execute()).toEqual([]);

    await page.getByRole('button', { name: 'Remove huge.bin' }).click();
    await expect.poll(() => send.isEnabled()).toBe(true);
    await send.click();
    await waitFor(async () => c.fake.requests.some((r) => r.path === SEND_PATH), 'the text to reach WhatsApp');
    expect(c.fake.requests.filter((r) => r.path === SEND_PATH)[0]!.parsed).toMatchObject({ type: 'text' });
    // The browser logs the refused upload's 413; nothing else.
    expect(c.errorsOf(page).filter((e) => !e.includes('413'))).toEqual([]);
    await context.close();
  });

  it('an image pasted into the reply box is attached and sent with the text as its caption', { timeout: 60_000 }, async () => {
    await c.deliverWhatsapp({ from: '4915100000053', name: 'Ida Lang', text: 'Which cable do I need?' });
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.getByRole('link', { name: /Ida Lang/ }).click();
    const reply = page.getByRole('textbox', { name: 'Reply' });
    await reply.fill('This one, see the picture.');
    // What a browser hands the page when a screenshot is pasted: a File on the clipboard event.
    await reply.evaluate(
      (box, bytes) => {
        // Browser globals, which this test's (Node) typings do not name.
        const w = globalThis as unknown as {
          DataTransfer: new () => { items: { add(file: unknown): void } };
          ClipboardEvent: new (type: string, init: object) => Event;
        };
        const data = new w.DataTransfer();
        data.items.add(new File([new Uint8Array(bytes)], 'image.png', { type: 'image/png' }));
        box.dispatchEvent(new w.ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
      },
      [...photo],
    );
    await page.getByRole('list', { name: 'Files to send' }).getByText('pasted-image.png').waitFor();
    const send = page.getByRole('button', { name: 'Send', exact: true });
    await expect.poll(() => send.isEnabled()).toBe(true);
    await reply.press('Enter');
    await waitFor(async () => c.fake.requests.some((r) => r.path === SEND_PATH), 'the send to reach WhatsApp');
    const [upload] = [...c.fake.uploads.values()];
    expect(upload!.bytes.equals(photo)).toBe(true);
    expect(c.fake.requests.filter((r) => r.path === SEND_PATH)[0]!.parsed).toMatchObject({
      type: 'image',
      image: { caption: 'This one, see the picture.' },
    });
    await page.locator('.msg-outbound img.inline-image').waitFor();
    expect(await reply.inputValue()).toBe('');
    await context.close();
  });
});
