import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { PHONE, useConsole } from '../helpers/console.js';
import { makeUser } from '../helpers/factories.js';

const c = await useConsole();

async function serious(page: Page, where: string) {
  const result = await new AxeBuilder({ page }).analyze();
  const found = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
  expect(found, where).toEqual([]);
}

const sideways = (page: Page) => page.evaluate<boolean>('document.documentElement.scrollWidth > document.documentElement.clientWidth');

/**
 * The first `method` request to a path matching `path` goes with `token` (one another tab's
 * refresh has just ended), as a call made a moment before the console learnt of it would: the
 * service answers it 401 and nothing else changes.
 */
async function firstCallWith(page: Page, method: string, path: RegExp, token: string) {
  let done = false;
  await page.route(path, async (route) => {
    if (done || route.request().method() !== method) return route.continue();
    done = true;
    await route.continue({ headers: { ...route.request().headers(), authorization: `Bearer ${token}` } });
  });
}

describe('the agent console at 390 px, its reply window and its session', () => {
  it('on a phone the list and the conversation are separate views and nothing scrolls sideways', { timeout: 60_000 }, async () => {
    await c.deliverWhatsapp({
      from: '4915100000010',
      name: 'Sophie Hartmann-Oberbergmeister',
      text: 'A rather long first message that would push a careless layout sideways on a small phone screen: https://example.test/a/very/long/link/without/spaces',
    });
    const { context, page } = await c.newPage({ viewport: PHONE });
    await page.goto(`${c.base}/app/`);
    expect(await sideways(page)).toBe(false);
    await c.signIn(page);
    const link = page.getByRole('link', { name: /Sophie/ });
    await link.waitFor();
    expect(await sideways(page)).toBe(false);
    await serious(page, 'the list at 390 px');
    await link.click();
    await page.getByRole('textbox', { name: 'Reply' }).waitFor();
    expect(await page.getByRole('list', { name: 'Conversation list' }).isVisible()).toBe(false);
    expect(await sideways(page)).toBe(false);
    await serious(page, 'the conversation at 390 px');
    await page.getByRole('button', { name: '← Conversations' }).click();
    await link.waitFor();
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'Connections' }).waitFor();
    expect(await sideways(page)).toBe(false);
    await serious(page, 'the settings at 390 px');
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('outside the reply window the composer says so and offers templates instead', { timeout: 60_000 }, async () => {
    const twoDaysAgo = Math.floor(Date.now() / 1000) - 2 * 86_400;
    await c.deliverWhatsapp({ from: '4915100000011', name: 'Old Timer', text: 'Wrote two days ago', timestamp: twoDaysAgo });
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.getByRole('link', { name: /Old Timer/ }).click();
    await page.getByText(/reply window closed/).waitFor();
    expect(await page.getByRole('textbox', { name: 'Reply' }).isDisabled()).toBe(true);
    await page.getByText(/no approved templates|Choose a template/).waitFor();
    // A private note is never refused by a window.
    await page.getByLabel('Private note').check();
    expect(await page.getByRole('textbox', { name: 'Reply' }).isDisabled()).toBe(false);
    await serious(page, 'the closed reply window');
    await context.close();
  });

  it("a session ended mid-reply keeps the agent's draft; the next agent at the tab never sees it; sign out forgets it", {
    timeout: 90_000,
  }, async () => {
    await c.deliverWhatsapp({ from: '4915100000012', name: 'Greta Draft', text: 'Is my order on its way?' });
    const bo = await makeUser(c.ctx.deps, c.tenant.workspace.id, {
      name: 'Bo Agent',
      email: `bo-${Date.now()}@acme.test`,
      roles: ['agent'],
    });
    const { context, page } = await c.newPage();
    const login = page.waitForResponse((r) => r.url().endsWith('/api/user/login'));
    await c.signIn(page);
    const token = ((await (await login).json()) as { access_token: string }).access_token;
    const reply = page.getByRole('textbox', { name: 'Reply' });
    const conversation = page.getByRole('link', { name: /Greta Draft/ });
    await conversation.click();
    await reply.fill('Half an answer about the order');
    // The session ends while the agent writes; signing in again finds the words where they were.
    const res = await fetch(`${c.base}/api/user/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBeLessThan(300);
    await page.getByText('Your session has ended').waitFor();
    await c.signIn(page);
    await conversation.click();
    await expect.poll(() => reply.inputValue()).toBe('Half an answer about the order');
    // Signing out forgets them: a colleague signing in at this tab starts from an empty box.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate<number>('sessionStorage.length')).toBe(0);
    await c.signIn(page, { email: bo.user.email, password: bo.password });
    await conversation.click();
    await page.getByRole('heading', { name: 'Greta Draft' }).waitFor();
    expect(await reply.inputValue()).toBe('');
    await context.close();
  });

  it("a reply sent just after another tab replaced the session's token goes out once, with no error to the agent", {
    timeout: 60_000,
  }, async () => {
    await c.deliverWhatsapp({ from: '4915100000013', name: 'Tomas Token', text: 'Are you still there?' });
    const { context, page } = await c.newPage();
    const login = page.waitForResponse((r) => r.url().endsWith('/api/user/login'));
    await c.signIn(page);
    const token = ((await (await login).json()) as { access_token: string }).access_token;
    await page.getByRole('link', { name: /Tomas Token/ }).click();
    const reply = page.getByRole('textbox', { name: 'Reply' });
    await reply.fill('Yes, still here');
    // Another tab of this browser refreshes the session: this tab's token stops working, the
    // refresh cookie moves to the new one.
    const status = await page.evaluate(
      (t) => fetch('/api/user/refresh', { method: 'POST', headers: { authorization: `Bearer ${t}` } }).then((r) => r.status),
      token,
    );
    expect(status).toBe(200);
    await firstCallWith(page, 'POST', /\/v1\/threads\/\d+\/messages$/, token);
    await reply.press('Enter');
    await expect.poll(() => reply.inputValue()).toBe('');
    const sent = await c.ctx.deps.db.selectFrom('messages').selectAll().where('text', '=', 'Yes, still here').execute();
    expect(sent).toHaveLength(1);
    expect(await page.getByRole('alert').count()).toBe(0);
    await expect
      .poll(() => c.fake.requests.filter((r) => r.path.endsWith('/messages') && r.body.includes('Yes, still here')).length)
      .toBe(1);
    await context.close();
  });

  it("Resolve just after another tab replaced the session's token resolves, with no error to the agent", { timeout: 60_000 }, async () => {
    await c.deliverWhatsapp({ from: '4915100000016', name: 'Rita Resolve', text: 'All sorted, thanks' });
    const { context, page } = await c.newPage();
    const login = page.waitForResponse((r) => r.url().endsWith('/api/user/login'));
    await c.signIn(page);
    const token = ((await (await login).json()) as { access_token: string }).access_token;
    await page.getByRole('link', { name: /Rita Resolve/ }).click();
    await page.getByRole('heading', { name: 'Rita Resolve' }).waitFor();
    const status = await page.evaluate(
      (t) => fetch('/api/user/refresh', { method: 'POST', headers: { authorization: `Bearer ${t}` } }).then((r) => r.status),
      token,
    );
    expect(status).toBe(200);
    await firstCallWith(page, 'PATCH', /\/v1\/threads\/\d+$/, token);
    await page.getByRole('button', { name: 'Resolve' }).click();
    const message = await c.ctx.deps.db
      .selectFrom('messages')
      .select('thread_id')
      .where('text', '=', 'All sorted, thanks')
      .executeTakeFirstOrThrow();
    await expect
      .poll(
        async () =>
          (await c.ctx.deps.db.selectFrom('threads').select('status').where('id', '=', message.thread_id).executeTakeFirstOrThrow()).status,
      )
      .toBe('resolved');
    // The console took the answer as any resolve's (the next conversation opens, or with none
    // left the header offers Reopen), and nothing was refused.
    await expect
      .poll(async () => !page.url().endsWith(`/c/${message.thread_id}`) || (await page.getByRole('button', { name: 'Reopen' }).count()) > 0)
      .toBe(true);
    expect(await page.getByRole('alert').count()).toBe(0);
    await context.close();
  });

  it('a session ended elsewhere returns to sign-in; sign out ends it here', { timeout: 60_000 }, async () => {
    const { context, page } = await c.newPage();
    // The token lives in the page's memory only: it is read from the login answer.
    const login = page.waitForResponse((r) => r.url().endsWith('/api/user/login'));
    await c.signIn(page);
    const token = ((await (await login).json()) as { access_token: string }).access_token;
    const res = await fetch(`${c.base}/api/user/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBeLessThan(300);
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await page.getByText('Your session has ended').waitFor();

    await c.signIn(page);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate<number>('localStorage.length + sessionStorage.length')).toBe(0);
    // Signed out means signed out after a reload too.
    await page.reload();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await context.close();
  });
});
