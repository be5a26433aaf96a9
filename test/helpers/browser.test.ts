import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { findSystemChromium, launchBrowser } from './browser.js';

async function serve(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('launchBrowser', () => {
  it('prefers the first system candidate that exists', () => {
    expect(findSystemChromium(['/nonexistent/chromium', process.execPath])).toBe(process.execPath);
    expect(findSystemChromium(['/nonexistent/chromium'])).toBeNull();
  });

  it('with no system browser, launches the Chromium of @sparticuz/chromium, which renders a page and keeps CORS on', {
    timeout: 60_000,
  }, async () => {
    const { browser, source, executablePath } = await launchBrowser({ systemPaths: ['/nonexistent/chromium'] });
    try {
      expect(source).toBe('bundled');
      expect(executablePath).toMatch(/inbox-chromium-[^/]+\/chromium$/);
      // Another origin that allows nobody: the browser must refuse to hand its answer to the page.
      const other = await serve((_req, res) => res.end('secret'));
      const page$ = await serve((_req, res) => {
        res.setHeader('content-type', 'text/html; charset=utf-8');
        res.end('<!doctype html><title>Hello</title><h1 style="font:32px sans-serif">Rendered</h1>');
      });
      const page = await browser.newPage();
      await page.goto(page$.url);
      expect(await page.getByRole('heading').textContent()).toBe('Rendered');
      const box = await page.getByRole('heading').boundingBox();
      expect(box?.width).toBeGreaterThan(0);
      const shot = await page.screenshot();
      expect(shot.subarray(1, 4).toString()).toBe('PNG');
      const crossOrigin = await page.evaluate(`fetch(${JSON.stringify(other.url)}).then((r) => r.text(), (e) => 'refused: ' + e.name)`);
      expect(crossOrigin).toBe('refused: TypeError');
      // Tests open and close a context per visitor: closing one leaves the browser running.
      const first = await browser.newContext();
      await (await first.newPage()).goto(page$.url);
      await first.close();
      const second = await browser.newContext();
      await (await second.newPage()).goto(page$.url);
      await second.close();
    } finally {
      await browser.close();
    }
  });
});
