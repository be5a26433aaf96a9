import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { useConsole } from '../helpers/console.js';
import { makeWidget, startVisitor } from '../helpers/livechat.js';
import { multipartBody } from '../helpers/multipart.js';
import { picturePng } from '../helpers/pictures.js';
import { waitFor } from '../helpers/webhooks.js';

/*
 * A live chat visitor sends the agent files that carry script: an SVG, an HTML page, and HTML
 * bytes declared as a PNG; each runs a script inline and loads another one from the service's
 * own origin (the visitor's uploaded `app.js`, through its signed link, which `script-src
 * 'self'` would allow). The agent, signed in with "remember me", opens them every way a person
 * can: a click in the conversation, the file's blob: address in a new tab (the context menu's
 * "Open in new tab" / "Open image in new tab"), and the addresses typed into a tab (the
 * content route, the visitor's signed link). Every script leaves three marks should it run:
 * `localStorage.pwned` on its origin, the page's title, and a call to a loopback beacon. None
 * may appear; and no token may be readable from storage. docs/security.md, "The console's
 * tokens and files".
 */
const c = await useConsole({ agentName: 'Ada Agent' });
// Links the service hands out (signed links) must reach this listener.
c.ctx.deps.config.publicUrl = c.base;
const OUT = process.env.CONSOLE_SCREENSHOT_DIR ?? path.join(tmpdir(), 'console-screenshots');

const hits: string[] = [];
/** A page of its own origin running the same script: the control that proves the marks show. */
let controlPage = '';
const beacon: Server = createServer((req, res) => {
  if (req.url === '/control') return void res.writeHead(200, { 'content-type': 'text/html' }).end(controlPage);
  hits.push(req.url ?? '');
  res.setHeader('access-control-allow-origin', '*');
  res.end('ok');
});
await new Promise<void>((resolve) => beacon.listen(0, '127.0.0.1', () => resolve()));
const beaconUrl = `http://127.0.0.1:${(beacon.address() as AddressInfo).port}`;
afterAll(
  () =>
    new Promise<void>((resolve) => {
      beacon.close(() => resolve());
      beacon.closeAllConnections();
    }),
);

/** The script every hostile file runs: the three marks, each tried on its own. */
const mark = (tag: string) =>
  `(function(){var t=${JSON.stringify(tag)};` +
  `try{localStorage.setItem('pwned',t)}catch(e){}` +
  `try{document.title='pwned'}catch(e){}` +
  `try{window.top.document.title='pwned'}catch(e){}` +
  `try{fetch('${beaconUrl}/ran/'+t).catch(function(){})}catch(e){}` +
  `try{new Image().src='${beaconUrl}/ran/'+t+'-img'}catch(e){}})();`;

const widget = await makeWidget(c.ctx.deps, c.tenant.workspace.id, { name: 'Website chat' });
const visitor = await startVisitor(c.ctx.app, widget.key, { name: 'Mallory Visitor' });

async function visitorUploads(filename: string, contentType: string, bytes: Buffer | string) {
  const body = multipartBody({ filename, contentType, bytes });
  const res = await c.ctx.app.inject({
    method: 'POST',
    url: `/v1/livechat/${widget.key}/attachments`,
    headers: { ...visitor.headers, ...body.headers },
    payload: body.payload,
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: number; url: string; contentType: string };
}

const script = await visitorUploads('app.js', 'text/javascript', mark('external-js'));
const svg = await visitorUploads(
  'photo.svg',
  'image/svg+xml',
  `<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><script>${mark('svg-inline')}</script>` +
    `<script href="${script.url.replaceAll('&', '&amp;')}"/><rect width="40" height="40" fill="red"/></svg>`,
);
const page$ = (tag: string) =>
  `<!doctype html><html><head><title>invoice</title></head><body><h1>Invoice</h1><script>${mark(tag)}</script>` +
  `<script src="${script.url.replaceAll('&', '&amp;')}"></script></body></html>`;
const html = await visitorUploads('invoice.html', 'text/html', page$('html-inline'));
const polyglot = await visitorUploads('scan.png', 'image/png', page$('polyglot-inline'));
const photo = await visitorUploads('receipt.png', 'image/png', await picturePng(c.browser, 'Receipt 5512', { width: 320, height: 200 }));
expect([svg.contentType, html.contentType, polyglot.contentType, photo.contentType]).toEqual([
  'image/svg+xml',
  'text/html',
  'image/png',
  'image/png',
]);
const sent = await c.ctx.app.inject({
  method: 'POST',
  url: `/v1/livechat/${widget.key}/messages`,
  headers: visitor.headers,
  payload: { text: 'Here are my files', attachmentIds: [svg.id, html.id, polyglot.id, photo.id] },
});
expect(sent.statusCode, sent.body).toBe(201);

/** Every storage entry of the page's origin. */
const storageOf = (page: Page) =>
  page.evaluate<Record<string, string>>(
    `(() => { const all = {}; for (const s of [localStorage, sessionStorage]) for (let i = 0; i < s.length; i++) all[s.key(i)] = s.getItem(s.key(i)); return all; })()`,
  );
const JWT = /[\w-]{10,}\.[\w-]{10,}\.[\w-]{10,}/;

async function signInRemembered(page: Page) {
  await page.goto(`${c.base}/app/`);
  await page.getByLabel('E-mail').fill(c.agent.email);
  await page.getByLabel('Password').fill(c.agent.password);
  await page.getByLabel('Remember me for 30 days').check();
  const login = page.waitForResponse((r) => r.url().endsWith('/api/user/login'));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('tab', { name: 'All' }).waitFor();
  return ((await (await login).json()) as { access_token: string }).access_token;
}

/** Opens `url` in a new tab the way a person does from the context menu or the address bar. */
async function openInNewTab(context: BrowserContext, url: string) {
  const tab = await context.newPage();
  const download = tab.waitForEvent('download', { timeout: 10_000 }).then(
    (d) => d.suggestedFilename(),
    () => null,
  );
  const status = await tab.goto(url).then(
    (r) => r?.status() ?? 'loaded',
    () => 'no page',
  );
  const downloaded = status === 'no page' ? await download : null;
  const title = await tab.title().catch(() => '');
  await tab.close();
  return { status, downloaded, title };
}

describe('hostile files in the agent console', () => {
  it('an SVG, an HTML page and HTML posing as a PNG run nothing, however the agent opens them; no token is readable', {
    timeout: 120_000,
  }, async () => {
    const { context, page } = await c.newPage();
    // What an older console left in storage is removed on sight.
    await page.goto(`${c.base}/app/`);
    await page.evaluate(`localStorage.setItem('inbox.session', JSON.stringify({ token: 'an old token' }))`);
    const token = await signInRemembered(page);

    await page.getByRole('link', { name: /Here are my files/ }).click();
    const bubble = page.locator('.msg-inbound', { hasText: 'Here are my files' });
    // The real photo shows inline from a blob: of its own type: the control that blobs work.
    const receipt = bubble.getByRole('img', { name: 'receipt.png' });
    await receipt.waitFor();
    await expect.poll(() => receipt.evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth)).toBe(320);
    // Each file as the console shows it (a link or an image) and the blob: address it carries.
    const shown = async (id: number) => {
      const el = bubble.locator(`[data-attachment-id="${id}"]`);
      await expect
        .poll(() => el.evaluate((e) => (e as unknown as { href?: string; src?: string }).href || (e as { src?: string }).src || ''))
        .toMatch(/^blob:/);
      const tag = await el.evaluate((e) => (e as unknown as { tagName: string }).tagName);
      const url = (await el.getAttribute(tag === 'A' ? 'href' : 'src'))!;
      return { el, tag, url };
    };
    const files = { svg: await shown(svg.id), html: await shown(html.id), scan: await shown(polyglot.id), receipt: await shown(photo.id) };
    await mkdir(OUT, { recursive: true });
    await page.screenshot({ path: path.join(OUT, 'console-hostile-files.png') });

    // 1. A click: a link downloads the file under its name; an image stays an image.
    const downloads: Record<string, string> = {};
    for (const [name, file] of Object.entries(files)) {
      if (file.tag !== 'A') await file.el.click();
      else {
        const [download] = await Promise.all([page.waitForEvent('download'), file.el.click()]);
        downloads[name] = download.suggestedFilename();
      }
      expect(await page.title(), name).not.toBe('pwned');
    }

    // 2. "Open in new tab" / "Open image in new tab": the blob: addresses in a tab of their own.
    const tabs: Record<string, Awaited<ReturnType<typeof openInNewTab>>> = {};
    for (const [name, file] of Object.entries(files)) {
      tabs[name] = await openInNewTab(context, file.url);
      expect(tabs[name]!.title, name).not.toBe('pwned');
    }

    // 3. The addresses typed into a tab: the content route (the browser's private cache may
    //    answer it with the bytes the console fetched, and their headers) and the visitor's
    //    signed links.
    const signedTabs: Record<string, Awaited<ReturnType<typeof openInNewTab>>> = {};
    for (const file of [svg, html, polyglot, script]) {
      const plain = await openInNewTab(context, `${c.base}/v1/attachments/${file.id}/content`);
      expect(plain.title, String(file.id)).not.toBe('pwned');
      signedTabs[file.id] = await openInNewTab(context, file.url);
      expect(signedTabs[file.id]!.title, file.url).not.toBe('pwned');
    }

    // The marks would show: the same script on a page of its own does leave them.
    controlPage = `<!doctype html><title>control</title><script>${mark('control')}</script>`;
    const control = await context.newPage();
    await control.goto(`${beaconUrl}/control`);
    await waitFor(async () => hits.includes('/ran/control'), 'the control script to call the beacon');
    expect(await control.title()).toBe('pwned');
    expect(await control.evaluate<string | null>(`localStorage.getItem('pwned')`)).toBe('control');
    await control.close();

    // No hostile script ran anywhere.
    expect(await page.evaluate<string | null>(`localStorage.getItem('pwned')`)).toBeNull();
    expect(hits.filter((h) => !h.startsWith('/ran/control'))).toEqual([]);
    expect(await page.title()).not.toBe('pwned');

    // How: the SVG and the HTML page are download links, never images or pages, in every way.
    expect([files.svg.tag, files.html.tag, files.scan.tag, files.receipt.tag]).toEqual(['A', 'A', 'IMG', 'IMG']);
    expect(downloads).toEqual({ svg: 'photo.svg', html: 'invoice.html' });
    expect(tabs.svg!.status).toBe('no page');
    expect(tabs.html!.status).toBe('no page');
    expect(signedTabs[svg.id]).toMatchObject({ status: 'no page', downloaded: 'photo.svg' });
    expect(signedTabs[html.id]).toMatchObject({ status: 'no page', downloaded: 'invoice.html' });
    await serious(page);

    // No token where a script can read it: storage holds a flag, the cookie is HttpOnly.
    expect(await page.evaluate<string | null>(`localStorage.getItem('inbox.session')`)).toBeNull();
    const stored = await storageOf(page);
    expect(Object.values(stored).join(' ')).not.toMatch(JWT);
    expect(JSON.stringify(stored)).not.toContain(token);
    expect(await page.evaluate<string>('document.cookie')).not.toContain('inbox_refresh');
    const cookies = await context.cookies();
    expect(cookies.map(({ name, path: p, httpOnly, sameSite }) => ({ name, path: p, httpOnly, sameSite }))).toEqual([
      { name: 'inbox_refresh', path: '/api/user/refresh', httpOnly: true, sameSite: 'Strict' },
    ]);
    expect(cookies[0]!.expires).toBeGreaterThan(Date.now() / 1000 + 29 * 86_400);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('with "remember me" a reload and a new tab stay signed in; without it only this tab’s reload does', {
    timeout: 90_000,
  }, async () => {
    const remembered = await c.newPage();
    const token = await signInRemembered(remembered.page);
    await remembered.page.getByRole('link', { name: /Here are my files/ }).click();
    await remembered.page.getByRole('img', { name: 'receipt.png' }).waitFor();
    const address = remembered.page.url();
    expect(address).toMatch(/\/app\/c\/\d+$/);
    await remembered.page.reload();
    // The same conversation, signed in through the cookie.
    await remembered.page.getByRole('img', { name: 'receipt.png' }).waitFor();
    expect(remembered.page.url()).toBe(address);
    const second = await remembered.context.newPage();
    await second.goto(`${c.base}/app/`);
    await second.getByRole('tab', { name: 'All' }).waitFor();
    // Both tabs keep working: one tab's reload did not end the other's token.
    const listed = (tab: Page) => tab.waitForResponse((r) => new URL(r.url()).pathname === '/v1/threads');
    for (const tab of [remembered.page, second]) {
      const answer = listed(tab);
      await tab.getByRole('tab', { name: 'Mine' }).click();
      expect((await answer).status()).toBe(200);
      await tab.getByRole('tab', { name: 'All' }).click();
    }
    expect(Object.values(await storageOf(second)).join(' ')).not.toMatch(JWT);

    // The session is extended elsewhere (the bearer refresh, which moves the cookie to the new
    // session and ends the old one): both tabs carry on through the cookie, not to sign-in.
    const [remembering] = await remembered.context.cookies();
    expect(c.errorsOf(remembered.page)).toEqual([]);
    // Each tab opens its socket anew once it holds a token of the new session.
    const recovered = [remembered.page, second].map((tab) => tab.waitForEvent('websocket'));
    const extended = await fetch(`${c.base}/api/user/refresh`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, cookie: `inbox_refresh=${remembering!.value}` },
    });
    expect(extended.status).toBe(200);
    const moved = /^inbox_refresh=([^;]+)/.exec(extended.headers.get('set-cookie') ?? '')![1]!;
    await remembered.context.addCookies([{ ...remembering!, value: moved }]);
    await Promise.all(recovered);
    for (const tab of [remembered.page, second]) {
      const answer = listed(tab);
      await tab.getByRole('tab', { name: 'Mine' }).click();
      expect((await answer).status()).toBe(200);
      expect(await tab.getByText('Your session has ended').count()).toBe(0);
    }
    await remembered.page.getByRole('button', { name: 'Sign out' }).click();
    await remembered.page.getByRole('button', { name: 'Sign in' }).waitFor();
    // Logout's answer clears the cookie.
    await expect.poll(() => remembered.context.cookies()).toEqual([]);
    await remembered.page.reload();
    await remembered.page.getByRole('button', { name: 'Sign in' }).waitFor();
    // Only the 401s of the token the extension ended, which sent the tab to the cookie.
    expect(c.errorsOf(remembered.page).filter((e) => !e.includes('status of 401'))).toEqual([]);
    await remembered.context.close();

    const tabOnly = await c.newPage();
    await c.signIn(tabOnly.page);
    const cookie = (await tabOnly.context.cookies())[0]!;
    // A cookie for the browser session only (-1: no expiry).
    expect(cookie).toMatchObject({ name: 'inbox_refresh', httpOnly: true, sameSite: 'Strict', expires: -1 });
    await tabOnly.page.reload();
    await tabOnly.page.getByRole('tab', { name: 'All' }).waitFor();
    const other = await tabOnly.context.newPage();
    await other.goto(`${c.base}/app/`);
    await other.getByRole('button', { name: 'Sign in' }).waitFor();
    await tabOnly.context.close();
  });
});

async function serious(page: Page) {
  const result = await new AxeBuilder({ page }).analyze();
  const found = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
  expect(found).toEqual([]);
}
