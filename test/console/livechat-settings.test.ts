import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useConsole } from '../helpers/console.js';
import { seriousViolations, tabTo } from '../helpers/keyboard.js';
import { makeWidget } from '../helpers/livechat.js';
import { waitFor } from '../helpers/webhooks.js';

/*
 * "Live chat settings" in a real Chromium (docs/livechat.md, "Settings"): an admin sets a
 * widget's origins, title, colour, greeting and pre-chat form from the keyboard, copies the
 * snippet, and the widget a visitor then opens shows them and asks for what it was told to.
 */
const OUT = process.env.CONSOLE_SCREENSHOT_DIR ?? path.join(tmpdir(), 'console-screenshots');
mkdirSync(OUT, { recursive: true });
const c = await useConsole();
const widget = await makeWidget(c.ctx.deps, c.tenant.workspace.id, { name: 'Website chat' });

describe('Live chat settings', () => {
  it('are set from the keyboard, saved with PATCH, and the widget follows them', { timeout: 120_000 }, async () => {
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.goto(`${c.base}/app/settings/connections`);
    const open = page.getByRole('button', { name: 'Live chat settings of Website chat' });
    await tabTo(page, open);
    await page.keyboard.press('Enter');
    const form = page.getByRole('form', { name: 'Live chat settings: Website chat' });
    await form.waitFor();

    await tabTo(page, form.getByLabel(/^Allowed origins/));
    await page.keyboard.type(`https://shop.example\n${c.base}`);
    await tabTo(page, form.getByLabel('Title'));
    await page.keyboard.type('Acme help');
    // A colour input has no keyboard typing of its own in Chromium; its value is set directly.
    await form.getByLabel('Colour').fill('#aa3300');
    await tabTo(page, form.getByLabel(/^Greeting/));
    await page.keyboard.type('Hello! Ask us about sizes.');
    await tabTo(page, form.getByLabel("The visitor's name"));
    await page.keyboard.press('Space');
    const snippet = await form.getByLabel('Embed snippet', { exact: true }).inputValue();
    expect(snippet).toBe(`<script src="${c.base}/livechat/widget.js" data-widget-key="${widget.key}" async></script>`);
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(OUT, 'connections-livechat-settings.png'), fullPage: true });
    await tabTo(page, form.getByRole('button', { name: 'Save' }));
    await page.keyboard.press('Enter');
    await form.waitFor({ state: 'detached' });

    const row = await c.ctx.deps.db.selectFrom('connections').selectAll().where('id', '=', widget.connection.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      allowed_origins: ['https://shop.example', c.base],
      livechat_title: 'Acme help',
      livechat_colour: '#aa3300',
      livechat_greeting: 'Hello! Ask us about sizes.',
      livechat_pre_chat: { name: true, email: false },
    });

    // The visitor's side: the hosted page shows them, and the name is asked before the first message.
    const visitor = await context.newPage();
    await visitor.goto(`${c.base}/livechat/${widget.key}`);
    await visitor.getByRole('heading', { name: 'Acme help' }).waitFor();
    await visitor.getByRole('log').getByText('Hello! Ask us about sizes.').waitFor();
    await visitor.getByLabel('Your name', { exact: true }).waitFor();
    await visitor.getByLabel('E-mail (optional)').waitFor();
    const accent = await visitor.evaluate<string>(
      `getComputedStyle(document.querySelector('[data-inbox-livechat]').shadowRoot.querySelector('.send')).backgroundColor`,
    );
    expect(accent).toBe('rgb(170, 51, 0)');
    const box = visitor.getByRole('textbox', { name: 'Message' });
    await box.fill('Do you ship to Norway?');
    await box.press('Enter');
    await visitor.getByRole('alert').getByText('Please enter your name.').waitFor();
    expect(
      await c.ctx.deps.db.selectFrom('livechat_visitors').select('id').where('connection_id', '=', widget.connection.id).execute(),
    ).toEqual([]);
    await visitor.getByLabel('Your name', { exact: true }).fill('Ola');
    await box.press('Enter');
    await visitor.getByRole('log').getByText('Do you ship to Norway?').waitFor();
    const contact = await waitFor(
      async () =>
        c.ctx.deps.db
          .selectFrom('livechat_visitors')
          .innerJoin('contacts', 'contacts.id', 'livechat_visitors.contact_id')
          .select('contacts.name')
          .where('livechat_visitors.connection_id', '=', widget.connection.id)
          .executeTakeFirst(),
      "the visitor's contact",
    );
    expect(contact.name).toBe('Ola');
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });
});
