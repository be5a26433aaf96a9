import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { PHONE, useConsole } from '../helpers/console.js';
import { makeUser } from '../helpers/factories.js';
import { seriousViolations, tabTo } from '../helpers/keyboard.js';
import { waitFor } from '../helpers/webhooks.js';

/*
 * Where the keyboard's focus goes on a phone-width screen, where the list hides while a
 * conversation is open; what the list shows when its read fails; and what an agent sees when
 * a conversation moves out of their sight (docs/console.md, docs/teams.md). Keyboard only.
 */
const OUT = process.env.CONSOLE_SCREENSHOT_DIR ?? path.join(tmpdir(), 'console-screenshots');
mkdirSync(OUT, { recursive: true });
const c = await useConsole({ agentName: 'Ada Admin' });
const db = c.ctx.deps.db;

/** A WhatsApp delivery's thread, once the workers made it. */
async function threadOf(from: string, name: string, text: string) {
  await c.deliverWhatsapp({ from, name, text });
  const m = await waitFor(() => db.selectFrom('messages').selectAll().where('text', '=', text).executeTakeFirst(), `"${text}"`);
  return m.thread_id;
}

/** The focused element: whether it is drawn, the pane holding it, its text. */
const focus = (page: Page) =>
  page.evaluate<{ visible: boolean; pane: string; text: string }>(`(() => {
    const el = document.activeElement;
    return {
      visible: !!el && el !== document.body && el.getClientRects().length > 0,
      pane: el && el.closest('.transcript-pane') ? 'conversation' : el && el.closest('.list-pane') ? 'list' : 'elsewhere',
      text: (el && el.textContent ? el.textContent : '').trim(),
    };
  })()`);

const ids = await (async () => {
  const first = await threadOf('4915100000101', 'Paula Phone', 'My parcel is late');
  const second = await threadOf('4915100000102', 'Quentin Phone', 'Wrong size delivered');
  return { first, second };
})();

describe('the console on a phone-width screen', () => {
  it('moves the focus to the conversation it opens (Enter, j, k) and back to its row', { timeout: 90_000 }, async () => {
    const { context, page } = await c.newPage({ viewport: PHONE });
    await c.signIn(page);
    const quentin = page.getByRole('link', { name: /Quentin Phone/ });
    await quentin.waitFor();
    await tabTo(page, quentin);
    await page.keyboard.press('Enter');
    await page.getByRole('textbox', { name: 'Reply' }).waitFor();
    await waitFor(async () => (await focus(page)).pane === 'conversation', 'the focus in the conversation');
    expect(await focus(page)).toEqual({ visible: true, pane: 'conversation', text: 'Quentin Phone' });
    await page.screenshot({ path: path.join(OUT, 'phone-focus-opened.png') });
    expect(await seriousViolations(page)).toEqual([]);

    // j opens the next one down the list (Paula, written first), k the one before.
    await page.keyboard.press('j');
    await page.getByRole('heading', { name: 'Paula Phone' }).waitFor();
    await waitFor(async () => (await focus(page)).text === 'Paula Phone', "the focus on Paula's conversation");
    expect(await focus(page)).toEqual({ visible: true, pane: 'conversation', text: 'Paula Phone' });
    await page.keyboard.press('k');
    await waitFor(async () => (await focus(page)).text === 'Quentin Phone', "the focus on Quentin's conversation");
    expect((await focus(page)).visible).toBe(true);
    await page.screenshot({ path: path.join(OUT, 'phone-focus-after-k.png') });

    // Back to the list: the focus on the row just left, so j and k go on from there.
    await tabTo(page, page.getByRole('button', { name: '← Conversations' }));
    await page.keyboard.press('Enter');
    await quentin.waitFor();
    await waitFor(async () => (await focus(page)).pane === 'list', 'the focus back in the list');
    expect(await focus(page)).toMatchObject({ visible: true, pane: 'list' });
    expect((await focus(page)).text).toContain('Quentin Phone');
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it("drops the rows of the previous filter when the list's read fails", { timeout: 90_000 }, async () => {
    const { context, page } = await c.newPage({ viewport: PHONE });
    await c.signIn(page);
    await page.getByRole('link', { name: /Paula Phone/ }).waitFor();
    // The service fails the Pending list (500), and the network drops for the Resolved one.
    await page.route(/\/v1\/threads\?.*status=(pending|resolved)/, async (route) => {
      if (route.request().url().includes('status=pending'))
        return route.fulfill({
          status: 500,
          contentType: 'application/json',
          body: JSON.stringify({ error: { code: 'internal', message: 'Internal server error' } }),
        });
      return route.abort('internetdisconnected');
    });
    const status = page.getByRole('combobox', { name: 'Status', exact: true });
    await tabTo(page, status);
    await page.keyboard.press('ArrowDown');
    expect(await status.inputValue()).toBe('pending');
    const alert = page.getByRole('alert').filter({ hasText: 'Could not load the conversations' });
    await alert.waitFor();
    expect(await page.getByRole('list', { name: 'Conversation list' }).getByRole('link').count()).toBe(0);
    // Nor does it claim there are none: it does not know.
    expect(await page.getByText('No conversations here.').count()).toBe(0);
    await page.screenshot({ path: path.join(OUT, 'phone-list-read-failed.png') });
    expect(await seriousViolations(page)).toEqual([]);

    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    expect(await status.inputValue()).toBe('resolved');
    await page.getByRole('alert').filter({ hasText: 'could not be reached' }).waitFor();
    expect(await page.getByRole('list', { name: 'Conversation list' }).getByRole('link').count()).toBe(0);

    // Back to Open, which answers: its rows, and no error.
    await page.keyboard.press('Home');
    expect(await status.inputValue()).toBe('open');
    await page.getByRole('link', { name: /Paula Phone/ }).waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    await context.close();
  });
});

describe('a conversation that moves out of an agent’s sight', () => {
  it('leaves their list and says so in the open conversation, without its new state', { timeout: 90_000 }, async () => {
    const admin = {
      authorization: `Bearer ${(await c.ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email: c.agent.email, password: c.agent.password } })).json().access_token}`,
    };
    const ok = async (method: 'POST' | 'PUT' | 'PATCH', url: string, payload: object) => {
      const res = await c.ctx.app.inject({ method, url, headers: admin, payload });
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
      return res.json().data;
    };
    const bo = await makeUser(c.ctx.deps, c.tenant.workspace.id, { name: 'Bo Billing', email: 'bo-billing@acme.test', roles: ['agent'] });
    const billing = await ok('POST', '/v1/teams', { name: 'Billing' });
    const returns = await ok('POST', '/v1/teams', { name: 'Returns' });
    await ok('PUT', `/v1/teams/${billing.id}/members`, { userIds: [bo.user.id] });
    for (const id of [ids.first, ids.second]) await ok('PATCH', `/v1/threads/${id}`, { teamId: billing.id });
    await ok('PATCH', '/v1/workspace', { restrictAgentsToTeams: true });

    const { context, page } = await c.newPage();
    await c.signIn(page, { email: bo.user.email, password: bo.password });
    await tabTo(page, page.getByRole('link', { name: /Quentin Phone/ }));
    await page.keyboard.press('Enter');
    await page.getByRole('textbox', { name: 'Reply' }).waitFor();

    // Quentin's moves to Returns (the open one), Paula's is given to no one of Bo's teams.
    await ok('PATCH', `/v1/threads/${ids.second}`, { teamId: returns.id });
    await ok('PATCH', `/v1/threads/${ids.first}`, { teamId: returns.id });
    await page.getByRole('alert').filter({ hasText: 'out of your reach' }).waitFor();
    const list = page.getByRole('list', { name: 'Conversation list' });
    await waitFor(async () => (await list.getByRole('link').count()) === 0, 'both rows gone from the list');
    // The tab counts follow: the threads are no longer Bo's to count.
    await page.getByRole('tab', { name: 'All 0' }).waitFor();
    // Nothing of where it went, nor a way to act on it.
    expect(await page.getByText('Returns').count()).toBe(0);
    expect(await page.getByRole('textbox', { name: 'Reply' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Resolve' }).count()).toBe(0);
    await page.screenshot({ path: path.join(OUT, 'moved-out-of-reach.png') });
    expect(await seriousViolations(page)).toEqual([]);
    expect(c.errorsOf(page).filter((e) => !e.includes('404'))).toEqual([]);
    await context.close();
  });
});
