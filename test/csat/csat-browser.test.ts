import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { launchBrowser } from '../helpers/browser.js';
import { makeTenant } from '../helpers/factories.js';
import { seriousViolations } from '../helpers/keyboard.js';
import { makeWidget, openSocket } from '../helpers/livechat.js';
import { signedInUser } from '../helpers/threads.js';
import { waitFor } from '../helpers/webhooks.js';

/*
 * CSAT in Chromium (docs/reports.md, "CSAT"): the survey inside the live chat widget, and the
 * rating page with JavaScript on (axe-core) and off (the plain form post). The page's screenshot
 * goes to CSAT_SCREENSHOT_DIR (`docs/images` to refresh the docs'), else to a temporary directory.
 */
const SCREENSHOTS = process.env.CSAT_SCREENSHOT_DIR ?? tmpdir();

const ctx = await useTestContext({ workers: true });
const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
const tenant = await makeTenant(ctx.deps, { name: 'Acme Outdoor' });
const widget = await makeWidget(ctx.deps, tenant.workspace.id, { name: 'Acme Support' });
const patched = await ctx.app.inject({
  method: 'PATCH',
  url: `/v1/connections/${widget.connection.id}`,
  headers: tenant.headers,
  payload: { csat: { enabled: true, question: 'How did we do today?' }, colour: '#0f6e4f' },
});
expect(patched.statusCode, patched.body).toBe(200);
const agent = await signedInUser(ctx.app, ctx.deps, tenant.workspace.id, ['admin']);
const jwt = agent.headers.authorization.replace('Bearer ', '');
const agentSocket = await openSocket(`${base.replace('http', 'ws')}/v1/realtime?token=${encodeURIComponent(jwt)}`);
afterAll(() => agentSocket.ws.close());
const { browser } = await launchBrowser();
afterAll(() => browser.close());

const rating = async (threadId: number) =>
  (
    await ctx.deps.db
      .selectFrom('conversations')
      .select(['csat_rating', 'csat_comment'])
      .where('thread_id', '=', threadId)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow()
  ).csat_rating;

describe('CSAT in the browser', () => {
  it('the widget shows the survey after a resolution and rates in one click; the page is accessible and works without JavaScript', {
    timeout: 90_000,
  }, async () => {
    const chat = await browser.newContext({ viewport: { width: 390, height: 844 }, locale: 'en-GB', timezoneId: 'UTC' });
    const widgetPage = await chat.newPage();
    await widgetPage.goto(`${base}/livechat/${widget.key}`);
    const box = widgetPage.getByRole('textbox', { name: 'Message' });
    await box.fill('Is my order on its way?');
    await box.press('Enter');
    await widgetPage.getByRole('log').getByText('Is my order on its way?', { exact: true }).waitFor();
    const { thread_id: threadId } = await waitFor(
      () => ctx.deps.db.selectFrom('messages').select('thread_id').where('text', '=', 'Is my order on its way?').executeTakeFirst(),
      'the visitor message',
    );
    const as = { headers: agent.headers };
    expect(
      (await ctx.app.inject({ method: 'POST', url: `/v1/threads/${threadId}/messages`, ...as, payload: { text: 'Yes, it ships today.' } }))
        .statusCode,
    ).toBe(202);
    expect(
      (await ctx.app.inject({ method: 'PATCH', url: `/v1/threads/${threadId}`, ...as, payload: { status: 'resolved' } })).statusCode,
    ).toBe(200);
    await widgetPage.getByText('How did we do today?').waitFor();
    const survey = await ctx.deps.db
      .selectFrom('messages')
      .select('text')
      .where('thread_id', '=', threadId)
      .where('text', 'like', '%/csat/%')
      .executeTakeFirstOrThrow();
    const link = `${base}/csat/${/\/csat\/(\S+)$/.exec(survey.text)![1]}`;

    // The page, as a contact opens the link: no serious axe finding.
    const reader = await browser.newContext({ viewport: { width: 720, height: 900 }, locale: 'en-GB', timezoneId: 'UTC' });
    const page = await reader.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') violations.push(m.text());
    });
    await page.goto(link);
    await page.getByRole('group', { name: 'How did we do today?' }).waitFor();
    await page.getByLabel('4 Satisfied').check();
    await page.getByLabel('Anything to add? (optional)').fill('Quick answer, thank you.');
    expect(await seriousViolations(page)).toEqual([]);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'csat-page.png'), fullPage: true });
    // The CSP refused nothing the page uses.
    expect(violations).toEqual([]);
    await reader.close();

    // Without JavaScript: the form posts and the page says the rating is saved.
    const plain = await browser.newContext({ javaScriptEnabled: false });
    const noScript = await plain.newPage();
    await noScript.goto(link);
    await noScript.getByLabel('2 Dissatisfied').check();
    await noScript.getByRole('button', { name: 'Send rating' }).click();
    await noScript.getByText('Your rating of 2 of 5 is saved').waitFor();
    expect(await rating(threadId)).toBe(2);
    await plain.close();

    // In the widget: one click changes it.
    await widgetPage.getByRole('button', { name: '5 of 5: very satisfied' }).click();
    await widgetPage.getByText('Thank you for your rating!').waitFor();
    expect(await widgetPage.getByRole('button', { name: '5 of 5: very satisfied' }).getAttribute('aria-pressed')).toBe('true');
    expect(await rating(threadId)).toBe(5);
    // Agents' sockets are told each answer.
    const told = await agentSocket.frame(
      (f) => f.type === 'csat.received' && f.data.threadId === threadId && f.data.rating === 5,
      'csat.received on the agent socket',
    );
    expect(told.data).toEqual({ threadId, rating: 5, comment: null, contactId: expect.any(Number), assigneeId: agent.user.id });
    await chat.close();
  });
});
