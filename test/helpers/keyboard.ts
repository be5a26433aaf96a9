import { AxeBuilder } from '@axe-core/playwright';
import type { Locator, Page } from 'playwright-core';

/** Presses Tab until `target` has the focus: the page is driven as a keyboard user drives it. */
export async function tabTo(page: Page, target: Locator): Promise<void> {
  for (let i = 0; i < 80; i += 1) {
    if (await target.evaluate((el: { ownerDocument: { activeElement: unknown } }) => el === el.ownerDocument.activeElement)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error('Tab never reached the control');
}

/** Tabs to `target`, then types `text` into it. */
export async function typeInto(page: Page, target: Locator, text: string): Promise<void> {
  await tabTo(page, target);
  await page.keyboard.type(text);
}

/** The page's serious and critical axe-core violations, as `id: help`. */
export async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
}
