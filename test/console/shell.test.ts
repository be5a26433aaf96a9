import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { PHONE, useConsole } from '../helpers/console.js';

const c = await useConsole();

async function seriousViolations(page: Page) {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
}

describe('the agent console shell', () => {
  it('signs in with the labelled fields and shows the list, under a strict CSP, with no serious axe finding', {
    timeout: 60_000,
  }, async () => {
    await c.deliverWhatsapp({ from: '4915112345678', name: 'Maya Schulz', text: 'Is my order on its way?' });
    const { context, page } = await c.newPage();
    const res = await page.goto(`${c.base}/app/`);
    const csp = res!.headers()['content-security-policy'] ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(csp).toContain("frame-ancestors 'none'");
    expect(await seriousViolations(page)).toEqual([]);

    await c.signIn(page);
    const list = page.getByRole('list', { name: 'Conversation list' });
    await list.getByText('Is my order on its way?').waitFor();
    await list.getByText('Maya Schulz').waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('shows each filter of the list whole, whichever status is chosen, on a desktop and a phone', { timeout: 60_000 }, async () => {
    /** Whether the select's chosen option is wider than the room its box leaves for text. */
    const cut = (page: Page, label: string) =>
      page.evaluate<boolean>(`(() => {
        const select = document.querySelector('select[aria-label="${label}"]');
        const style = getComputedStyle(select);
        const ctx = document.createElement('canvas').getContext('2d');
        ctx.font = style.font;
        const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        return ctx.measureText(select.selectedOptions[0].text).width > room;
      })()`);
    for (const viewport of [{ width: 1280, height: 800 }, PHONE]) {
      const { context, page } = await c.newPage({ viewport });
      await c.signIn(page);
      for (const status of ['open', 'pending', 'snoozed', 'resolved']) {
        await page.getByLabel('Status', { exact: true }).selectOption(status);
        expect(await cut(page, 'Status'), `${status} at ${viewport.width} px`).toBe(false);
      }
      for (const label of ['Channel', 'Sort', 'Label']) expect(await cut(page, label), `${label} at ${viewport.width} px`).toBe(false);
      await page.getByLabel('Sort', { exact: true }).selectOption('sla');
      expect(await cut(page, 'Sort'), `SLA due first at ${viewport.width} px`).toBe(false);
      await context.close();
    }
  });

  it('the views are one tab stop: Tab enters at the chosen one, arrows, Home and End choose another', { timeout: 60_000 }, async () => {
    const { context, page } = await c.newPage();
    await c.signIn(page);
    const tab = (name: string) => page.getByRole('tab', { name: new RegExp(`^${name}`) });
    const chosen = async () => {
      for (const name of ['Mine', 'Unassigned', 'All']) if ((await tab(name).getAttribute('aria-selected')) === 'true') return name;
      return null;
    };
    const focused = () =>
      page.evaluate<string | undefined>(
        "document.activeElement?.getAttribute('role') === 'tab' ? document.activeElement.textContent : undefined",
      );
    await page.getByRole('searchbox', { name: 'Search messages and contacts' }).focus();
    await page.keyboard.press('Tab');
    expect(await focused()).toMatch(/^All/);
    await page.keyboard.press('ArrowLeft');
    await expect.poll(chosen).toBe('Unassigned');
    expect(await focused()).toMatch(/^Unassigned/);
    await page.keyboard.press('Home');
    await expect.poll(chosen).toBe('Mine');
    expect(await focused()).toMatch(/^Mine/);
    await page.keyboard.press('ArrowLeft');
    await expect.poll(chosen).toBe('All');
    await page.keyboard.press('ArrowRight');
    await expect.poll(chosen).toBe('Mine');
    await page.keyboard.press('End');
    await expect.poll(chosen).toBe('All');
    // One stop: the next Tab leaves the tab list for the filters.
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string | null>("document.activeElement?.getAttribute('aria-label')")).toBe('Status');
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });
});
