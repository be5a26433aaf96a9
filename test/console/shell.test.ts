import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useConsole } from '../helpers/console.js';

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
});
