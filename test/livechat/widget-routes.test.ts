import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { WIDGET_DIR } from '../../src/livechat/widget.routes.js';
import { packageRoot } from '../../src/paths.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { makeWidget } from '../helpers/livechat.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ctx = await useTestContext();
const tenant = await makeTenant(ctx.deps);

describe('GET /livechat/widget.js', () => {
  it('serves the widget as JavaScript, cacheable, with an etag', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/livechat/widget.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/javascript; charset=utf-8');
    expect(res.headers['cache-control']).toMatch(/max-age=\d+/);
    expect(res.body).toContain('data-widget-key');
    expect(res.body).toContain('/socket?visitorToken=');
    const again = await ctx.app.inject({
      method: 'GET',
      url: '/livechat/widget.js',
      headers: { 'if-none-match': String(res.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
  });

  it('is read from the package root whether the service runs from src/ or from the compiled dist/src/', () => {
    expect(packageRoot(path.join(ROOT, 'src', 'livechat'))).toBe(ROOT);
    expect(packageRoot(path.join(ROOT, 'dist', 'src', 'livechat'))).toBe(ROOT);
    expect(WIDGET_DIR).toBe(path.join(ROOT, 'src', 'livechat', 'widget'));
    expect(existsSync(path.join(WIDGET_DIR, 'widget.js'))).toBe(true);
  });
});

describe('GET /livechat/:widgetKey', () => {
  it('hosts the widget on a page of its own, its name escaped, framable by the allowed origins only', async () => {
    const widget = await makeWidget(ctx.deps, tenant.workspace.id, {
      name: '<script>alert("x")</script> & Co',
      allowedOrigins: ['https://shop.example'],
    });
    const res = await ctx.app.inject({ method: 'GET', url: `/livechat/${widget.key}` });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.body).toContain(`<script src="/livechat/widget.js" data-widget-key="${widget.key}" data-mode="page"`);
    expect(res.body).not.toContain('<script>alert');
    expect(res.body).toContain('&#60;script&#62;alert(&#34;x&#34;)&#60;/script&#62; &#38; Co');
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'self' https://shop.example");

    const open = await makeWidget(ctx.deps, tenant.workspace.id);
    const anyFrame = await ctx.app.inject({ method: 'GET', url: `/livechat/${open.key}` });
    expect(String(anyFrame.headers['content-security-policy'])).toContain('frame-ancestors *');
  });

  it('answers 404 for a key that is no widget', async () => {
    for (const key of ['wk_nothing_here_0000', 'bad%20key', '106540352242922', `wk_${'x'.repeat(200)}`]) {
      const res = await ctx.app.inject({ method: 'GET', url: `/livechat/${key}` });
      expect(res.statusCode, key).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
  });
});
