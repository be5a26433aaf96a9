import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { linkKey, signedLink } from '../../src/attachments/signed-links.js';
import { useTestContext } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';
import { makeTenant } from '../helpers/factories.js';
import { makeWidget } from '../helpers/livechat.js';
import { PNG_1X1, uploadFile } from '../helpers/multipart.js';
import { waitFor } from '../helpers/webhooks.js';

/*
 * Hostile files in a real browser (playwright-core, test/helpers/browser.ts): an SVG and an
 * HTML page that carry a script are uploaded, then opened from the service's own origin the
 * way a visitor or an agent would open a link. Their scripts call a beacon; the same bytes
 * served WITHOUT the content route's headers call it too, which proves the beacon would see
 * a script that ran.
 */
const ctx = await useTestContext();
const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
// Links the service hands out must reach this listener (its port is known only now).
ctx.deps.config.publicUrl = base;
const tenant = await makeTenant(ctx.deps);

const hits: string[] = [];
const beacon: Server = createServer((req, res) => {
  hits.push(req.url ?? '');
  res.setHeader('access-control-allow-origin', '*');
  res.end('ok');
});
await new Promise<void>((resolve) => beacon.listen(0, '127.0.0.1', () => resolve()));
const beaconUrl = `http://127.0.0.1:${(beacon.address() as AddressInfo).port}`;
afterAll(() => new Promise<void>((resolve) => beacon.close(() => resolve())));

// The same bytes as they would be served by a careless file server: inline, no CSP.
const careless = new Map<string, { type: string; body: string }>();
const plain: Server = createServer((req, res) => {
  const file = careless.get(req.url ?? '');
  if (!file) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': file.type }).end(file.body);
});
await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', () => resolve()));
const plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
afterAll(() => new Promise<void>((resolve) => plain.close(() => resolve())));

const { browser } = await launchBrowser();
afterAll(() => browser.close());

const svg = (tag: string) => `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">
<script>fetch('${beaconUrl}/${tag}');new Image().src='${beaconUrl}/${tag}-img';</script><rect width="10" height="10"/></svg>`;
const html = (tag: string) => `<!doctype html><html><body><h1>invoice</h1>
<script>fetch('${beaconUrl}/${tag}');new Image().src='${beaconUrl}/${tag}-img';</script></body></html>`;

async function uploadAndLink(body: string, filename: string, contentType: string) {
  const { id } = await uploadFile(ctx.app, tenant.headers, { filename, contentType, bytes: body });
  return signedLink({ publicUrl: base, key: linkKey(ctx.deps.secretKey), now: new Date() }, id);
}

/** Opens `url` in a fresh page; a download (not a page) is reported, not thrown. */
async function open(url: string) {
  const context = await browser.newContext({ acceptDownloads: true });
  const page = await context.newPage();
  const download = page.waitForEvent('download', { timeout: 10_000 }).then(
    () => true,
    () => false,
  );
  const loaded = await page.goto(url).then(
    (r) => r?.status() ?? 0,
    () => 'no page',
  );
  const downloaded = loaded === 'no page' ? await download : false;
  return { page, context, loaded, downloaded };
}

describe('hostile uploads in a real browser', () => {
  it('an SVG with a script is a download, never a document of the service that runs it', async () => {
    const link = await uploadAndLink(svg('served-svg'), 'logo.svg', 'image/svg+xml');
    const served = await open(link);
    expect(served.downloaded).toBe(true);
    await served.context.close();

    careless.set('/logo.svg', { type: 'image/svg+xml', body: svg('careless-svg') });
    const control = await open(`${plainUrl}/logo.svg`);
    await waitFor(async () => hits.includes('/careless-svg'), 'the careless SVG to run its script');
    await control.context.close();
    // The file served by the service was opened first and called nothing.
    expect(hits.filter((h) => h.startsWith('/served-svg'))).toEqual([]);
  });

  it('an HTML page with a script is a download, never a page of the service that runs it', async () => {
    const link = await uploadAndLink(html('served-html'), 'invoice.html', 'text/html');
    const served = await open(link);
    expect(served.downloaded).toBe(true);
    await served.context.close();

    careless.set('/invoice.html', { type: 'text/html', body: html('careless-html') });
    const control = await open(`${plainUrl}/invoice.html`);
    await waitFor(async () => hits.includes('/careless-html'), 'the careless page to run its script');
    await control.context.close();
    expect(hits.filter((h) => h.startsWith('/served-html'))).toEqual([]);
  });

  it("an uploaded script is never loaded by a <script> of the service’s own page (script-src 'self')", async () => {
    const link = await uploadAndLink(`fetch('${beaconUrl}/served-js');document.title='ran';`, 'app.js', 'text/javascript');
    const context = await browser.newContext();
    const page = await context.newPage();
    // The console's sign-in page: an origin and a CSP (script-src 'self') of the service itself.
    await page.goto(`${base}/app/`);
    const outcome = await page.evaluate<string>(`new Promise((resolve) => {
      const script = document.createElement('script');
      script.src = ${JSON.stringify(link)};
      script.onload = () => resolve('loaded');
      script.onerror = () => resolve('refused');
      document.head.append(script);
    })`);
    expect(outcome).toBe('refused');
    expect(await page.title()).not.toBe('ran');
    await context.close();
    expect(hits.filter((h) => h.startsWith('/served-js'))).toEqual([]);
  });

  it('the live chat widget sends a file chosen with its file button and shows the image inline', async () => {
    const widget = await makeWidget(ctx.deps, tenant.workspace.id, { name: 'Files desk' });
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${base}/livechat/${widget.key}`);
    await page.getByLabel('Attach a file').setInputFiles({ name: 'broken-part.png', mimeType: 'image/png', buffer: PNG_1X1 });
    await page.getByLabel('Message').fill('Here is the broken part');
    await page.getByRole('button', { name: 'Send' }).click();
    const image = page.getByRole('img', { name: 'broken-part.png' });
    await image.waitFor();
    await waitFor(
      () =>
        image.evaluate((img) => {
          const loaded = img as unknown as { complete: boolean; naturalWidth: number };
          return loaded.complete && loaded.naturalWidth === 1;
        }),
      'the image to load',
    );
    await context.close();
    expect(errors).toEqual([]);

    const threads = await ctx.app.inject({ method: 'GET', url: '/v1/threads', headers: tenant.headers });
    const thread = (threads.json().data as { id: number; lastMessagePreview: string }[]).find(
      (t) => t.lastMessagePreview === 'Here is the broken part',
    )!;
    const messages = await ctx.app.inject({ method: 'GET', url: `/v1/threads/${thread.id}/messages`, headers: tenant.headers });
    expect(messages.json().data[0].attachments).toEqual([
      expect.objectContaining({ kind: 'image', contentType: 'image/png', filename: 'broken-part.png', size: PNG_1X1.byteLength }),
    ]);
  });
});
