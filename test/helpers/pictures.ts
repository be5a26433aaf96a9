import type { Browser } from 'playwright-core';
import { expect } from 'vitest';
import { type ConsoleHarness, WHATSAPP_SECRET, WHATSAPP_TOKEN } from './console.js';
import { fixture, sign } from './webhooks.js';

/**
 * A real PNG of a photo-like picture (a gradient with a caption), drawn by Chromium: what a
 * contact's photo or an agent's screenshot looks like to the console, without a binary fixture.
 */
export async function picturePng(browser: Browser, caption: string, size = { width: 480, height: 300 }): Promise<Buffer> {
  const context = await browser.newContext({ viewport: size });
  try {
    const page = await context.newPage();
    await page.setContent(
      `<body style="margin:0;height:100vh;display:grid;place-items:center;background:linear-gradient(135deg,#7aa7e0,#f2c48d);font:600 28px sans-serif;color:#1c2230">${caption}</body>`,
    );
    return await page.screenshot({ type: 'png' });
  } finally {
    await context.close();
  }
}

/**
 * A WhatsApp Cloud image message from `from`, its bytes served by the fake's media API (the
 * service's fetch-media job downloads them), POSTed signed. Needs
 * INBOX_ALLOW_PRIVATE_WEBHOOK_URLS=true, since the fake is on loopback.
 */
export async function deliverWhatsappImage(
  c: ConsoleHarness,
  m: { from: string; name: string; caption: string; png: Buffer; id?: string },
): Promise<void> {
  const file = c.fake.media.whatsapp({ bytes: m.png, contentType: 'image/png' }, { token: WHATSAPP_TOKEN });
  const body = JSON.parse(fixture('whatsapp', 'image-message.json'));
  const value = body.entry[0].changes[0].value;
  value.contacts[0] = { profile: { name: m.name }, wa_id: m.from };
  Object.assign(value.messages[0], {
    from: m.from,
    id: m.id ?? `wamid.image-${m.from}-${Date.now()}`,
    timestamp: String(Math.floor(Date.now() / 1000)),
    image: { caption: m.caption, mime_type: 'image/png', id: file.mediaId },
  });
  const text = JSON.stringify(body);
  const res = await fetch(`${c.base}/webhooks/whatsapp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${sign(WHATSAPP_SECRET, text)}` },
    body: text,
  });
  expect(res.status).toBe(200);
}
