import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import { describe, expect, it } from 'vitest';
import { useConsole } from '../helpers/console.js';

/* The audit log's settings page in a real Chromium: entries newest first, filters that combine. */
const OUT = process.env.CONSOLE_SCREENSHOT_DIR ?? path.join(tmpdir(), 'console-screenshots');
mkdirSync(OUT, { recursive: true });
const c = await useConsole();

describe('the audit log page', () => {
  it('lists who did what and filters by action', { timeout: 60_000 }, async () => {
    const failed = await c.ctx.app.inject({
      method: 'POST',
      url: '/api/user/login',
      payload: { email: c.agent.email, password: 'not the password', remember: false },
    });
    expect(failed.statusCode).toBe(401);
    await c.ctx.app.inject({ method: 'PATCH', url: '/v1/workspace', headers: c.tenant.headers, payload: { assignOnReply: false } });
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.goto(`${c.base}/app/settings/audit-log`);
    const table = page.getByRole('table', { name: 'Audit log' });
    await table.waitFor();
    await expect.poll(() => table.getByText('sign_in.succeeded').count()).toBeGreaterThan(0);
    await table.getByText('workspace.settings_changed').waitFor();
    await table.getByText('assignOnReply').waitFor();
    const violations = (await new AxeBuilder({ page }).analyze()).violations.filter(
      (v) => v.impact === 'serious' || v.impact === 'critical',
    );
    expect(violations.map((v) => v.id)).toEqual([]);
    await page.screenshot({ path: path.join(OUT, 'audit-log.png'), fullPage: true });

    await page.getByLabel('Action').selectOption('sign_in.failed');
    await expect.poll(() => table.locator('tbody tr').count()).toBe(1);
    await expect.poll(() => table.locator('tbody tr code').first().textContent()).toBe('sign_in.failed');
    await page.getByLabel('Action').selectOption('');
    await page.getByLabel('Who').selectOption({ label: c.agent.name });
    await expect
      .poll(async () => (await table.locator('tbody tr td:nth-child(2)').allTextContents()).every((t) => t === c.agent.name))
      .toBe(true);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });
});
