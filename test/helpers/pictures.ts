import type { Browser } from 'playwright-core';

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
