import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { useConsole } from '../helpers/console.js';
import { makeUser } from '../helpers/factories.js';
import { seriousViolations, tabTo, typeInto } from '../helpers/keyboard.js';
import { waitFor } from '../helpers/webhooks.js';

/*
 * Automation in the console (docs/console.md, "Automation and macros"), from the keyboard only:
 * an admin builds a rule in the editor, reorders, switches and deletes rules, sees a refusal
 * beside the form, the rule acts on the next WhatsApp delivery, and makes a macro with the
 * same action editor; an agent runs that macro from the conversation header. The editor's
 * picture goes to CONSOLE_SCREENSHOT_DIR (`CONSOLE_SCREENSHOT_DIR=docs/images npx vitest run
 * test/console/automation.test.ts` refreshes docs/images/console-automation.png), else to a
 * temporary directory.
 */
const OUT = process.env.CONSOLE_SCREENSHOT_DIR ?? path.join(tmpdir(), 'console-screenshots');
const c = await useConsole({ agentName: 'Ada Lovelace' });
const db = c.ctx.deps.db;
const api = async (method: 'POST' | 'PATCH', url: string, payload: object) => {
  const res = await c.ctx.app.inject({ method, url, headers: c.tenant.headers, payload });
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json().data;
};
const boMade = await makeUser(c.ctx.deps, c.tenant.workspace.id, { name: 'Bo Builder', email: 'bo@acme.test', roles: ['agent'] });

const vipDesk = await api('POST', '/v1/teams', { name: 'VIP desk' });
await api('POST', '/v1/teams', { name: 'Billing' });
// Maya wrote before; her e-mail came from the shop's CRM since.
const first = 'Hello, a question about my order';
await c.deliverWhatsapp({ from: '4915100000301', name: 'Maya Schulz', text: first });
const firstMessage = await waitFor(() => db.selectFrom('messages').selectAll().where('text', '=', first).executeTakeFirst(), first);
const thread = await db.selectFrom('threads').selectAll().where('id', '=', firstMessage.thread_id).executeTakeFirstOrThrow();
await api('PATCH', `/v1/contacts/${thread.contact_id}`, { email: 'maya@vip.test' });
const outOfHours = await api('POST', '/v1/automation-rules', {
  name: 'Out of hours',
  event: 'thread.created',
  conditions: [{ field: 'insideBusinessHours', op: 'eq', value: false }],
  actions: [{ type: 'add_labels', labels: ['out-of-hours'] }],
});
const focused = (target: Locator) =>
  target.evaluate((el: { ownerDocument: { activeElement: unknown } }) => el === el.ownerDocument.activeElement);

/** Picks an option of a closed select as a keyboard user does: focus it and type the option's start. */
async function choose(page: Page, select: Locator, text: string) {
  await tabTo(page, select);
  await page.keyboard.type(text);
  await expect.poll(() => select.evaluate((el: { selectedOptions: { text: string }[] }) => el.selectedOptions[0]?.text)).toBe(text);
}

describe('automation in the console', () => {
  it('an admin builds a rule that acts on the next delivery, orders, switches, deletes and refuses rules, and makes a macro', {
    timeout: 150_000,
  }, async () => {
    await mkdir(OUT, { recursive: true });
    const { context, page } = await c.newPage({ viewport: { width: 1280, height: 1060 } });
    await c.signIn(page);
    await page.goto(`${c.base}/app/settings/automation`);
    await page.getByRole('heading', { name: 'Automation', level: 2 }).waitFor();
    const rules = page.getByRole('list', { name: 'Rules, in the order they run' });
    await rules.getByText('Out of hours', { exact: true }).waitFor();

    await tabTo(page, page.getByRole('button', { name: 'New rule' }));
    await page.keyboard.press('Enter');
    const form = page.getByRole('form', { name: 'New rule' });
    const name = form.getByRole('textbox', { name: 'Rule name' });
    // The form opens at its first field.
    await expect.poll(() => focused(name)).toBe(true);
    await page.keyboard.type('VIP');
    await tabTo(page, form.getByRole('button', { name: 'Add condition' }));
    await page.keyboard.press('Enter');
    const condition = form.getByRole('group', { name: 'Condition 1' });
    expect(await condition.getByRole('combobox', { name: 'Field' }).evaluate((el: { value: string }) => el.value)).toBe('contact.email');
    // The comparisons offered are those of a text field.
    expect(await condition.getByRole('combobox', { name: 'Comparison' }).locator('option').allTextContents()).toEqual([
      'contains',
      'does not contain',
      'starts with',
      'is',
      'is not',
      'is set',
      'is not set',
    ]);
    await typeInto(page, condition.getByRole('textbox', { name: 'Value' }), '@vip.test');
    await typeInto(page, form.getByRole('group', { name: 'Action 1' }).getByRole('combobox', { name: 'Labels (comma separated)' }), 'vip');
    await tabTo(page, form.getByRole('button', { name: 'Add action' }));
    await page.keyboard.press('Enter');
    const second = form.getByRole('group', { name: 'Action 2' });
    await choose(page, second.getByRole('combobox', { name: 'Action' }), 'Assign to a team');
    await choose(page, second.getByRole('combobox', { name: 'Team' }), 'VIP desk');
    expect(await seriousViolations(page)).toEqual([]);
    // The picture shows the editor from its page's title down.
    await page
      .getByRole('heading', { name: 'Automation', level: 2 })
      .evaluate((h: { scrollIntoView(o: object): void }) => h.scrollIntoView({ block: 'start' }));
    await page.screenshot({ path: path.join(OUT, 'console-automation.png') });
    await tabTo(page, form.getByRole('button', { name: 'Save rule' }));
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('Rule VIP saved.').waitFor();
    const saved = await db.selectFrom('automation_rules').selectAll().where('name', '=', 'VIP').executeTakeFirstOrThrow();
    expect(saved).toMatchObject({
      event: 'message.created',
      match: 'all',
      enabled: true,
      conditions: [{ field: 'contact.email', op: 'contains', value: '@vip.test' }],
      actions: [
        { type: 'add_labels', labels: ['vip'] },
        { type: 'assign_team', teamId: vipDesk.id },
      ],
    });

    // Reorder by keyboard: VIP goes first; the focus stays with the rule it moved.
    await tabTo(page, page.getByRole('button', { name: 'Move VIP up' }));
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('VIP moved to place 1 of 2.').waitFor();
    const order = () => db.selectFrom('automation_rules').select('name').orderBy('position').orderBy('id').execute();
    expect((await order()).map((r) => r.name)).toEqual(['VIP', 'Out of hours']);
    await expect.poll(() => focused(page.getByRole('button', { name: 'Move VIP down' }))).toBe(true);
    expect(await rules.getByRole('listitem').locator('strong').allTextContents()).toEqual(['VIP', 'Out of hours']);

    // Switched off, then deleted after a confirmation whose first answer keeps it.
    await tabTo(page, page.getByRole('checkbox', { name: 'Enabled: Out of hours' }));
    await page.keyboard.press('Space');
    await expect
      .poll(
        async () => (await db.selectFrom('automation_rules').select('enabled').where('id', '=', outOfHours.id).executeTakeFirst())?.enabled,
      )
      .toBe(false);
    await tabTo(page, page.getByRole('button', { name: 'Delete Out of hours' }));
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(page.getByRole('button', { name: 'Keep' }))).toBe(true);
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('Rule Out of hours deleted.').waitFor();
    expect((await order()).map((r) => r.name)).toEqual(['VIP']);

    // Maya writes again: the rule labels the conversation and gives it to the VIP desk.
    const again = 'Is my parcel on its way?';
    await c.deliverWhatsapp({ from: '4915100000301', name: 'Maya Schulz', text: again });
    const acted = await waitFor(
      () =>
        db
          .selectFrom('threads')
          .select(['labels', 'team_id'])
          .where('id', '=', thread.id)
          .where('team_id', '=', vipDesk.id)
          .executeTakeFirst(),
      'the VIP rule to act',
    );
    expect(acted.labels).toEqual(['vip']);
    // Someone else's message does not match.
    const other = 'Do you ship to Austria?';
    await c.deliverWhatsapp({ from: '4915100000302', name: 'Jonas Weber', text: other });
    const jonas = await waitFor(() => db.selectFrom('messages').select('thread_id').where('text', '=', other).executeTakeFirst(), other);
    expect((await db.selectFrom('threads').select('labels').where('id', '=', jonas.thread_id).executeTakeFirstOrThrow()).labels).toEqual(
      [],
    );
    await tabTo(page, page.getByRole('button', { name: 'Refresh' }));
    await page.keyboard.press('Enter');
    await rules
      .getByRole('listitem')
      .filter({ hasText: 'VIP' })
      .getByText(/^Runs: 1 · last run /)
      .waitFor();

    // A rule the service refuses: the 422 is shown beside the form and takes the focus.
    await tabTo(page, page.getByRole('button', { name: 'New rule' }));
    await page.keyboard.press('Enter');
    const refused = page.getByRole('form', { name: 'New rule' });
    // Typing before the form has the focus would lose the name under load.
    await expect.poll(() => focused(refused.getByRole('textbox', { name: 'Rule name' }))).toBe(true);
    await page.keyboard.type('Big spenders');
    await tabTo(page, refused.getByRole('button', { name: 'Add condition' }));
    await page.keyboard.press('Enter');
    const spend = refused.getByRole('group', { name: 'Condition 1' });
    await choose(page, spend.getByRole('combobox', { name: 'Field' }), 'Contact attribute');
    await typeInto(page, spend.getByRole('textbox', { name: 'Attribute key' }), 'orders');
    await choose(page, spend.getByRole('combobox', { name: 'Comparison' }), 'is greater than');
    await typeInto(page, spend.getByRole('textbox', { name: 'Value' }), 'many');
    await typeInto(page, refused.getByRole('group', { name: 'Action 1' }).getByRole('combobox', { name: /Labels/ }), 'big');
    await tabTo(page, refused.getByRole('button', { name: 'Save rule' }));
    await page.keyboard.press('Enter');
    const alert = refused.getByRole('alert');
    await alert.getByText('conditions[0].value: gt takes a number').waitFor();
    await expect.poll(() => focused(alert)).toBe(true);
    expect(await db.selectFrom('automation_rules').select('name').where('name', '=', 'Big spenders').executeTakeFirst()).toBeUndefined();
    expect(await seriousViolations(page)).toEqual([]);

    // A macro, from the same action editor.
    await page.goto(`${c.base}/app/settings/macros`);
    await tabTo(page, page.getByRole('button', { name: 'New macro' }));
    await page.keyboard.press('Enter');
    const macro = page.getByRole('form', { name: 'New macro' });
    await expect.poll(() => focused(macro.getByRole('textbox', { name: 'Macro name' }))).toBe(true);
    await page.keyboard.type('Ask for the order number');
    const reply = macro.getByRole('group', { name: 'Action 1' });
    expect(await reply.getByRole('combobox', { name: 'Action' }).evaluate((el: { value: string }) => el.value)).toBe('reply');
    await typeInto(page, reply.getByRole('textbox', { name: /^Reply text/ }), 'Hi {{contact.name}}, could you send us your order number?');
    await tabTo(page, macro.getByRole('button', { name: 'Add action' }));
    await page.keyboard.press('Enter');
    await typeInto(page, macro.getByRole('group', { name: 'Action 2' }).getByRole('combobox', { name: /Labels/ }), 'asked');
    await tabTo(page, macro.getByRole('button', { name: 'Add action' }));
    await page.keyboard.press('Enter');
    const status = macro.getByRole('group', { name: 'Action 3' });
    await choose(page, status.getByRole('combobox', { name: 'Action' }), 'Set status');
    await choose(page, status.getByRole('combobox', { name: 'Status' }), 'pending');
    expect(await seriousViolations(page)).toEqual([]);
    await tabTo(page, macro.getByRole('button', { name: 'Save macro' }));
    await page.keyboard.press('Enter');
    await page.getByRole('list', { name: 'Macros' }).getByText('Shared · reply, add labels asked, set status pending').waitFor();
    expect((await db.selectFrom('macros').selectAll().executeTakeFirstOrThrow()).actions).toEqual([
      { type: 'reply', text: 'Hi {{contact.name}}, could you send us your order number?' },
      { type: 'add_labels', labels: ['asked'] },
      { type: 'set_status', status: 'pending' },
    ]);
    expect(c.errorsOf(page).filter((e) => !/422/.test(e))).toEqual([]);
    await context.close();
  });

  it('an agent runs a macro from the conversation header and sees what it did', { timeout: 90_000 }, async () => {
    const { context, page } = await c.newPage();
    await c.signIn(page, { email: boMade.user.email, password: boMade.password });
    await page.goto(`${c.base}/app/c/${thread.id}`);
    const menu = page.getByRole('button', { name: 'Macros' });
    await tabTo(page, menu);
    await page.keyboard.press('Enter');
    const macro = page.getByRole('list', { name: 'Run a macro' }).getByRole('button', { name: 'Ask for the order number' });
    await expect.poll(() => focused(macro)).toBe(true);
    await page.keyboard.press('Enter');
    await page.getByRole('status').getByText('Ran “Ask for the order number”.').waitFor();
    // The reply with its variable filled, the label and the status show without a reload.
    await page.getByText('Hi Maya Schulz, could you send us your order number?').waitFor();
    await page.getByRole('list', { name: 'Labels' }).getByText('asked').waitFor();
    await page
      .locator('.transcript-head .sub')
      .getByText(/pending/)
      .waitFor();
    await expect.poll(() => focused(menu)).toBe(true);
    const row = await db.selectFrom('threads').select(['status', 'labels']).where('id', '=', thread.id).executeTakeFirstOrThrow();
    expect(row.status).toBe('pending');
    expect(row.labels).toContain('asked');
    expect(await seriousViolations(page)).toEqual([]);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });
});
