import { describe, expect, it } from 'vitest';
import { useConsole } from '../helpers/console.js';
import { waitFor } from '../helpers/webhooks.js';

/*
 * The tabs' counts under the list's sort (docs/console.md, "Tab counts"): "SLA due first" lists
 * only conversations with a clock running, so the counts beside the tabs count those too.
 */
const c = await useConsole({ agentName: 'Ada Lovelace' });
const db = c.ctx.deps.db;
const call = (method: 'POST' | 'PATCH', url: string, payload: object) =>
  c.ctx.app.inject({ method, url, headers: c.tenant.headers, payload });

describe('tab counts with the list sorted by SLA', () => {
  it('count only the conversations the sorted list shows', { timeout: 90_000 }, async () => {
    const policy = await call('POST', '/v1/sla-policies', {
      name: 'Urgent',
      position: 0,
      firstResponse: 'PT15M',
      conditions: { priorities: ['urgent'] },
    });
    expect(policy.statusCode, policy.body).toBe(201);
    const customers = [
      { from: '4915100000301', name: 'Maya Schulz', text: 'My order #4471 says delivered but nothing arrived.' },
      { from: '4915100000302', name: 'Jonas Weber', text: 'Do you ship to Austria?' },
    ];
    for (const who of customers) {
      await c.deliverWhatsapp(who);
      await waitFor(() => db.selectFrom('messages').select('thread_id').where('text', '=', who.text).executeTakeFirst(), who.text);
    }
    const maya = await db.selectFrom('messages').select('thread_id').where('text', '=', customers[0]!.text).executeTakeFirstOrThrow();
    expect((await call('PATCH', `/v1/threads/${maya.thread_id}`, { priority: 'urgent' })).statusCode).toBe(200);

    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.getByRole('tab', { name: 'All' }).click();
    const allCount = () => page.getByRole('tab', { name: /^All/ }).locator('.tab-count').textContent();
    await expect.poll(allCount).toBe(' 2');
    await page.getByRole('combobox', { name: 'Sort' }).focus();
    await page.getByRole('combobox', { name: 'Sort' }).selectOption('sla');
    await expect.poll(() => page.locator('[data-thread-id] .thread-name').allTextContents()).toEqual(['Maya Schulz']);
    await expect.poll(allCount).toBe(' 1');
    await expect
      .poll(() =>
        page
          .getByRole('tab', { name: /^Unassigned/ })
          .locator('.tab-count')
          .textContent(),
      )
      .toBe(' 1');
    // Back to the most recent first: every conversation counts again.
    await page.getByRole('combobox', { name: 'Sort' }).selectOption('recent');
    await expect.poll(allCount).toBe(' 2');
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });
});
