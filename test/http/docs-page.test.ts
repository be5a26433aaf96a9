import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';

const ctx = await useTestContext();
const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });

/** A CSP header as directive → sources. */
function directives(header: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const part of header.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) out.set(name.toLowerCase(), sources);
  }
  return out;
}

describe('the reference page at /docs', () => {
  it('sends a CSP that covers what the page uses: its own files, and the stylesheet inside its logo', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    const csp = directives(String(res.headers['content-security-policy']));
    // Every script and stylesheet of the page is a file of its own origin.
    const urls = [...res.body.matchAll(/<(?:script|link)[^>]+(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(urls.length).toBeGreaterThan(0);
    for (const u of urls) expect(new URL(u, `${base}/docs/`).origin).toBe(base);
    expect(res.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>\s*\S/); // no inline script
    expect(csp.get('script-src')).toEqual(["'self'"]);
    // The inline stylesheets swagger-ui's scripts create (its logo's), each allowed by its hash.
    const ui = path.dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui'));
    const preset = readFileSync(path.join(ui, 'static', 'swagger-ui-standalone-preset.js'), 'utf8');
    const inline = [...preset.matchAll(/createElement\("style",null,"([^"]*)"\)/g)].map((m) => m[1]!);
    expect(inline.length).toBeGreaterThan(0);
    const hashes = inline.map((css) => `'sha256-${createHash('sha256').update(css).digest('base64')}'`);
    expect(csp.get('style-src')).toEqual(["'self'", 'https:', ...hashes]);
    expect(csp.has('style-src-attr')).toBe(false);
    expect(csp.get('script-src-attr')).toEqual(["'none'"]);
    expect(csp.has('upgrade-insecure-requests')).toBe(false);
  });

  it('loads in a real browser with no console error', { timeout: 60_000 }, async () => {
    const { browser } = await launchBrowser();
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(String(e)));
      await page.goto(`${base}/docs`);
      // The document's own title, rendered by swagger-ui once it has read /docs/json.
      await page
        .getByRole('heading', { name: /^inbox/ })
        .first()
        .waitFor();
      await page.getByText('/api/user/login').first().waitFor();
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
