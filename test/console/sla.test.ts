import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { describe, expect, it } from 'vitest';
import { useConsole } from '../helpers/console.js';
import { waitFor } from '../helpers/webhooks.js';

/*
 * The list with its SLA and priority badges, and the list sorted by due time. The picture goes
 * to CONSOLE_SCREENSHOT_DIR (`CONSOLE_SCREENSHOT_DIR=docs/images npx vitest run
 * test/console/sla.test.ts` refreshes docs/images/console-sla.png), else to a temporary directory.
 */
const OUT = process.env.CONSOLE_SCREENSHOT_DIR ?? path.join(tmpdir(), 'console-screenshots');
const c = await useConsole({ agentName: 'Ada Lovelace' });
const db = c.ctx.deps.db;
const call = (method: 'POST' | 'PATCH', url: string, payload: object) =>
  c.ctx.app.inject({ method, url, headers: c.tenant.headers, payload });

describe('SLA in the conversation list', () => {
  it('shows priority and time left on each row and sorts by the nearest due time', { timeout: 120_000 }, async () => {
    await mkdir(OUT, { recursive: true });
    expect(
      (
        await call('POST', '/v1/sla-policies', {
          name: 'Urgent',
          position: 0,
          firstResponse: 'PT15M',
          conditions: { priorities: ['urgent'] },
        })
      ).statusCode,
    ).toBe(201);
    expect(
      (await call('POST', '/v1/sla-policies', { name: 'Standard', position: 1, firstResponse: 'PT4H', resolution: 'P1D' })).statusCode,
    ).toBe(201);
    const customers = [
      { from: '4915100000201', name: 'Maya Schulz', text: 'My order #4471 says delivered but nothing arrived.' },
      { from: '4915100000202', name: 'Jonas Weber', text: 'Do you ship to Austria?' },
      { from: '4915100000203', name: 'Lena Vogel', text: 'Can I change the size of my jacket to XL?' },
    ];
    for (const who of customers) {
      await c.deliverWhatsapp(who);
      await waitFor(() => db.selectFrom('messages').select('thread_id').where('text', '=', who.text).executeTakeFirst(), who.text);
    }
    const maya = await db.selectFrom('messages').select('thread_id').where('text', '=', customers[0]!.text).executeTakeFirstOrThrow();
    expect((await call('PATCH', `/v1/threads/${maya.thread_id}`, { priority: 'urgent' })).statusCode).toBe(200);

    const { context, page } = await c.newPage({ viewport: { width: 1280, height: 760 } });
    // The page's clock runs as the real one until the test moves it on.
    await page.clock.install();
    await c.signIn(page);
    const row = (name: string) => page.getByRole('link', { name: new RegExp(name) });
    await row('Maya Schulz').getByText('urgent').waitFor();
    await expect.poll(() => row('Maya Schulz').locator('.sla').textContent()).toMatch(/^SLA 1[45] min left$/);
    await expect.poll(() => row('Jonas Weber').locator('.sla').textContent()).toMatch(/^SLA [34] h( \d+ min)? left$/);
    // The badges count down while the list stays open, with nothing else happening.
    await page.clock.fastForward('10:00');
    await expect.poll(() => row('Maya Schulz').locator('.sla').textContent()).toMatch(/^SLA [45] min left$/);

    await page.getByRole('combobox', { name: 'Sort' }).selectOption('sla');
    await expect
      .poll(() => page.locator('[data-thread-id] .thread-name').allTextContents())
      .toEqual(['Maya Schulz', 'Jonas Weber', 'Lena Vogel']);
    const result = await new AxeBuilder({ page }).analyze();
    expect(result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
    await page.screenshot({ path: path.join(OUT, 'console-sla.png') });
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it("turns a row's badge amber, then red, as the SLA events come, without a reload", { timeout: 90_000 }, async () => {
    expect(
      (
        await call('POST', '/v1/sla-policies', {
          name: 'Fast lane',
          position: 0,
          firstResponse: 'PT20S',
          conditions: { labels: ['fast-lane'] },
        })
      ).statusCode,
    ).toBe(201);
    const { context, page } = await c.newPage();
    await c.signIn(page);
    const text = 'Please call me back within the minute';
    await c.deliverWhatsapp({ from: '4915100000301', name: 'Rita Rasch', text });
    const { thread_id } = await waitFor(
      () => db.selectFrom('messages').select('thread_id').where('text', '=', text).executeTakeFirst(),
      text,
    );
    expect((await call('PATCH', `/v1/threads/${thread_id}`, { labels: ['fast-lane'] })).statusCode).toBe(200);
    const badge = page.locator(`[data-thread-id="${thread_id}"] .sla`);
    await badge.waitFor();
    // Every state the badge shows, recorded in the page: the warning lasts seconds only.
    await page.evaluate(`(() => {
      const list = document.querySelector('[aria-label="Conversation list"]');
      const seen = (window.__slaSeen = []);
      const note = () => {
        const el = list.querySelector('[data-thread-id="${thread_id}"] .sla');
        const state = el && el.className + ' ' + el.title;
        if (state && seen[seen.length - 1] !== state) seen.push(state);
      };
      note();
      new MutationObserver(note).observe(list, { subtree: true, childList: true, attributes: true, characterData: true });
    })()`);
    // The row is drawn again every 30 s only: what turns it within the target is the socket's
    // sla.warning and sla.breached, each carrying the thread with its new status.
    await expect.poll(() => badge.getAttribute('title'), { timeout: 40_000 }).toBe('SLA breached');
    const seen = await page.evaluate<string[]>('window.__slaSeen');
    expect(seen.some((s) => s.includes('sla-warning') && s.endsWith('SLA warning'))).toBe(true);
    expect(seen.at(-1)).toMatch(/sla-breached SLA breached$/);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('sets business hours, an away message and a policy from the settings page', { timeout: 120_000 }, async () => {
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'SLAs and hours' }).click();
    await page.getByRole('heading', { name: 'Business hours' }).waitFor();

    const hours = { timezone: 'America/New_York', weekly: { mon: [['08:00', '16:00']] }, holidays: [] };
    await page.getByRole('textbox', { name: /Business hours/ }).fill(JSON.stringify(hours));
    await page.getByRole('button', { name: 'Save business hours' }).click();
    await expect
      .poll(
        async () =>
          (await c.ctx.app.inject({ method: 'GET', url: '/v1/workspace', headers: c.tenant.headers })).json().data.businessHours?.timezone,
      )
      .toBe('America/New_York');

    const away = page.getByRole('form', { name: `Away message of ${c.whatsapp.name}` });
    await away.getByRole('textbox').fill('We answer on weekdays from 8.');
    await away.getByRole('button', { name: 'Save away message' }).click();
    await expect
      .poll(
        async () =>
          (await db.selectFrom('connections').select('away_message').where('id', '=', c.whatsapp.id).executeTakeFirst())?.away_message,
      )
      .toBe('We answer on weekdays from 8.');

    await page.getByRole('textbox', { name: 'Name' }).fill('VIP');
    await page.getByRole('combobox', { name: 'Priority' }).selectOption('high');
    await page.getByRole('textbox', { name: /First response/ }).fill('PT30M');
    await page.getByRole('button', { name: 'Add SLA policy' }).click();
    await page.getByRole('list', { name: 'SLA policies' }).getByText('first response PT30M').waitFor();
    // A target the service refuses is shown, not swallowed.
    await page.getByRole('textbox', { name: 'Name' }).fill('Too fast');
    await page.getByRole('textbox', { name: /First response/ }).fill('PT5S');
    await page.getByRole('button', { name: 'Add SLA policy' }).click();
    await page.getByText(/at least PT10S/).waitFor();
    const result = await new AxeBuilder({ page }).analyze();
    expect(result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id)).toEqual([]);
    expect(c.errorsOf(page).filter((e) => !/422/.test(e))).toEqual([]);
    await context.close();
  });
});
