import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import { totpCode, totpUrl } from '../../src/auth/totp.js';
import { useConsole } from '../helpers/console.js';
import { makeUser } from '../helpers/factories.js';

/*
 * Two-factor sign-in in a real Chromium (docs/security.md): a workspace that requires it sends
 * a new user to the enrolment screen (a QR code drawn in the page, recovery codes shown once),
 * and the sign-in form then asks for a code.
 */
const OUT = process.env.CONSOLE_SCREENSHOT_DIR ?? path.join(tmpdir(), 'console-screenshots');
mkdirSync(OUT, { recursive: true });
const c = await useConsole();

async function seriousViolations(page: Page) {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
}

describe('two-factor sign-in in the console', () => {
  it('enrols where the workspace requires it, then asks for a code at sign-in', { timeout: 90_000 }, async () => {
    const patch = await c.ctx.app.inject({
      method: 'PATCH',
      url: '/v1/workspace',
      headers: c.tenant.headers,
      payload: { require2fa: true },
    });
    expect(patch.statusCode, patch.body).toBe(200);
    const { user, password } = await makeUser(c.ctx.deps, c.tenant.workspace.id, { name: 'Tess Twofactor', email: 'tess@acme.test' });
    const { context, page } = await c.newPage();
    // Nothing of the enrolment may leave for another host (no QR code service).
    const elsewhere: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(c.base)) elsewhere.push(r.url());
    });

    await page.goto(`${c.base}/app/`);
    await page.getByLabel('E-mail').fill(user.email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Set up two-factor sign-in' }).waitFor();
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    const qr = page.getByRole('img', { name: 'QR code for your authenticator app' });
    await qr.waitFor();
    const secret = (await page.locator('.totp-key').textContent())!.trim();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    // The QR code carries the otpauth address: as many dark modules as the code of that address has.
    const drawn = ((await qr.locator('path').getAttribute('d')) ?? '').split('z').filter(Boolean).length;
    const modules = QRCode.create(totpUrl(secret, user.email), { errorCorrectionLevel: 'M' }).modules;
    expect(drawn).toBe(Array.from(modules.data).filter(Boolean).length);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(OUT, 'two-factor-setup.png') });

    await page.getByLabel('Code from the app').fill(totpCode(secret, Math.floor(Date.now() / 1000) - 600));
    await page.getByRole('button', { name: 'Turn on' }).click();
    await page.getByRole('alert').getByText('That code is not right').waitFor();
    await page.getByLabel('Code from the app').fill(totpCode(secret, Math.floor(Date.now() / 1000)));
    await page.getByRole('button', { name: 'Turn on' }).click();
    const list = page.getByRole('list', { name: 'Recovery codes' });
    await list.waitFor();
    const codes = (await list.getByRole('listitem').allTextContents()).map((t) => t.trim());
    expect(codes).toHaveLength(10);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(OUT, 'two-factor-recovery-codes.png') });
    await page.getByRole('button', { name: 'I have saved them' }).click();
    await page.getByRole('tab', { name: 'All' }).waitFor();
    expect(elsewhere).toEqual([]);

    // Signing in again: the password, then the code step (here a recovery code, once).
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('E-mail').fill(user.email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const otp = page.getByLabel('Code from your authenticator app');
    await otp.waitFor();
    await otp.fill('000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').getByText('That code is not right.').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(OUT, 'two-factor-sign-in.png') });
    await otp.fill(codes[0]!);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('tab', { name: 'All' }).waitFor();
    expect(c.errorsOf(page).filter((e) => !/40[13]|422/.test(e))).toEqual([]);
    await context.close();
  });

  it('takes a code typed or pasted in two groups, at enrolment and at sign-in', { timeout: 60_000 }, async () => {
    await c.ctx.app.inject({ method: 'PATCH', url: '/v1/workspace', headers: c.tenant.headers, payload: { require2fa: false } });
    const { user, password } = await makeUser(c.ctx.deps, c.tenant.workspace.id, { name: 'Gus Groups', email: 'gus@acme.test' });
    const { page, context } = await c.newPage();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: c.base });
    await c.signIn(page, { email: user.email, password });
    await page.goto(`${c.base}/app/account`);
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
    const secret = (await page.locator('.totp-key').textContent())!.trim();
    const now = Math.floor(Date.now() / 1000);
    const grouped = (at: number) => totpCode(secret, at).replace(/^(\d{3})/, '$1 ');
    // Typed from the keyboard as an authenticator app shows it: "123 456", then Enter.
    await page.getByLabel('Code from the app').focus();
    await page.keyboard.type(grouped(now));
    await page.keyboard.press('Enter');
    await page.getByRole('list', { name: 'Recovery codes' }).waitFor();
    await page.getByRole('button', { name: 'I have saved them' }).click();

    // Signing in again, the code pasted with its space (the next step's: one code works once).
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('E-mail').fill(user.email);
    await page.getByLabel('Password').fill(password);
    await page.keyboard.press('Enter');
    const otp = page.getByLabel('Code from your authenticator app');
    await otp.waitFor();
    // A browser global, which this test's (Node) typings do not name.
    await page.evaluate(
      (text) =>
        (globalThis as unknown as { navigator: { clipboard: { writeText(t: string): Promise<void> } } }).navigator.clipboard.writeText(
          text,
        ),
      grouped(now + 30),
    );
    await otp.focus();
    await page.keyboard.press('ControlOrMeta+V');
    expect(await otp.inputValue()).toBe(grouped(now + 30));
    await page.keyboard.press('Enter');
    await page.getByRole('tab', { name: 'All' }).waitFor();
    expect(c.errorsOf(page).filter((e) => !/40[13]|422/.test(e))).toEqual([]);
    await context.close();
  });

  it('shows the account page’s enrolment at phone width', { timeout: 60_000 }, async () => {
    const { page, context } = await c.newPage({ viewport: { width: 390, height: 844 } });
    await c.ctx.app.inject({ method: 'PATCH', url: '/v1/workspace', headers: c.tenant.headers, payload: { require2fa: false } });
    await c.signIn(page);
    await page.goto(`${c.base}/app/account`);
    await page.getByRole('heading', { name: 'Two-factor sign-in' }).waitFor();
    await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
    await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(OUT, 'two-factor-account-390.png'), fullPage: true });
    await context.close();
  });
  it('moves the focus into each step of the sign-in form, so the keyboard goes on where it was', { timeout: 60_000 }, async () => {
    const { user, password } = await makeUser(c.ctx.deps, c.tenant.workspace.id, { name: 'Kit Keys', email: 'kit@acme.test' });
    const login = await c.ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email: user.email, password } });
    const token = login.json().access_token as string;
    const auth = { authorization: `Bearer ${token}` };
    const setup = await c.ctx.app.inject({ method: 'POST', url: '/v1/users/me/2fa/setup', headers: auth });
    const { secret } = setup.json().data as { secret: string };
    const on = await c.ctx.app.inject({
      method: 'POST',
      url: '/v1/users/me/2fa/enable',
      headers: auth,
      payload: { code: totpCode(secret, Math.floor(Date.now() / 1000)) },
    });
    expect(on.statusCode, on.body).toBe(200);

    const { page, context } = await c.newPage();
    await page.goto(`${c.base}/app/`);
    const focused = () => page.evaluate<string>('document.activeElement?.id || document.activeElement?.tagName');
    await page.getByLabel('E-mail').focus();
    await page.keyboard.type(user.email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(password);
    await page.keyboard.press('Enter');
    await page.getByLabel('Code from your authenticator app').waitFor();
    await expect.poll(focused).toBe('signin-otp');
    await page.keyboard.type('000000');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').getByText('That code is not right.').waitFor();
    await expect.poll(focused).toBe('signin-otp');
    // Back to the password form, and to single sign-on and back: each step's first field.
    // A wrong code sent with the Verify button: the focus comes back to the emptied field.
    await page.keyboard.type('111111');
    await page.getByRole('button', { name: 'Verify' }).press('Enter');
    await page.getByRole('alert').getByText('That code is not right.').waitFor();
    await expect.poll(() => page.getByLabel('Code from your authenticator app').inputValue()).toBe('');
    await expect.poll(focused).toBe('signin-otp');
    await page.getByRole('button', { name: 'Back' }).press('Enter');
    await page.getByLabel('Password').waitFor();
    await expect.poll(focused).toBe('signin-email');
    await page.getByRole('button', { name: 'Single sign-on (SSO)' }).press('Enter');
    await page.getByLabel('Workspace number').waitFor();
    await expect.poll(focused).toBe('signin-workspace');
    await page.getByRole('button', { name: 'Back' }).press('Enter');
    await page.getByLabel('Password').waitFor();
    await expect.poll(focused).toBe('signin-email');
    await context.close();
  });
});
