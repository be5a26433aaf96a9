import { mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PHONE, useConsole } from '../helpers/console.js';
import { makeConnection, makeUser } from '../helpers/factories.js';
import { seriousViolations, tabTo } from '../helpers/keyboard.js';
import { seedThread } from '../helpers/threads.js';

/*
 * The Reports page in a real Chromium against recorded conversations of the last eight weeks
 * (seeded as rows, as test/reports/reports.test.ts does; how they come to be recorded is
 * test/reports/recording.test.ts). The figures are checked against counts worked out here.
 */
const OUT = process.env.CONSOLE_SCREENSHOT_DIR ?? path.join(tmpdir(), 'console-screenshots');
mkdirSync(OUT, { recursive: true });
const c = await useConsole({ agentName: 'Ada Lovelace' });
const db = c.ctx.deps.db;
const ws = c.tenant.workspace.id;
const DAY = 86_400_000;
const NOW = Date.now();

/** A small deterministic generator (mulberry32), so the page looks the same each run. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sms = await makeConnection(c.ctx.deps, ws, { integrationKey: 'sms', externalAccountId: '+4930555', name: 'Acme SMS' });
const agent = await makeUser(c.ctx.deps, ws, { roles: ['agent'], name: 'Bruno Díaz' });
const chen = (await makeUser(c.ctx.deps, ws, { roles: ['agent'], name: 'Chen Wei' })).user.id;
const agents = [c.agent.id, agent.user.id, chen];
const teams = (
  await db
    .insertInto('teams')
    .values([
      { workspace_id: ws, name: 'Billing' },
      { workspace_id: ws, name: 'Technical' },
    ])
    .returning('id')
    .execute()
).map((t) => t.id);
const LABELS = ['billing', 'bug', 'refund', 'vip'];
const COMMENTS = [
  'Quick and kind, thank you!',
  'The refund took two days, but Bruno kept me posted.',
  'Had to explain my problem twice.',
  'Solved in one message.',
  'Friendly, though the answer came late.',
];

/** 140 conversations over 56 days, busier lately; the youngest still open. */
async function seed() {
  const rnd = random(42);
  const rows = [];
  for (let i = 0; i < 140; i++) {
    const connection = i % 3 === 0 ? sms : c.whatsapp;
    // Skewed toward the recent weeks: the chart rises and the period before has fewer.
    const openedAt = new Date(NOW - Math.floor(56 * DAY * rnd() ** 1.4) - 3_600_000);
    const fr = 60 + Math.floor(rnd() ** 2 * 5400);
    const resolution = fr + 600 + Math.floor((rnd() ** 2 * 2 * DAY) / 1000);
    const resolvedAt = new Date(openedAt.getTime() + resolution * 1000);
    const open = resolvedAt.getTime() > NOW;
    const assignee = agents[Math.floor(rnd() * agents.length)]!;
    const team = teams[Math.floor(rnd() * teams.length)]!;
    const labels = LABELS.filter(() => rnd() < 0.3);
    const rated = !open && rnd() < 0.45;
    const thread = await seedThread(
      c.ctx.deps,
      { id: connection.id, workspaceId: ws },
      {
        status: open ? 'open' : 'resolved',
        assigneeId: assignee,
        labels,
        lastMessageAt: open ? openedAt : resolvedAt,
      },
    );
    const messagesIn = 1 + Math.floor(rnd() * 6);
    const messagesOut = 1 + Math.floor(rnd() * 4);
    if (open)
      await db
        .updateTable('threads')
        .set({ team_id: team, conversation_messages_in: messagesIn, conversation_messages_out: messagesOut })
        .where('id', '=', thread.id)
        .execute();
    const firstResponseAt = new Date(openedAt.getTime() + fr * 1000);
    rows.push({
      workspace_id: ws,
      thread_id: thread.id,
      connection_id: connection.id,
      opened_at: openedAt,
      first_response_at: firstResponseAt.getTime() < NOW ? firstResponseAt : null,
      first_response_seconds: firstResponseAt.getTime() < NOW ? fr : null,
      first_response_business_seconds: firstResponseAt.getTime() < NOW ? fr : null,
      resolved_at: open ? null : resolvedAt,
      resolution_seconds: open ? null : resolution,
      resolution_business_seconds: open ? null : resolution,
      assignee_id: open ? null : assignee,
      team_id: open ? null : team,
      labels: open ? [] : labels,
      messages_in: open ? null : messagesIn,
      messages_out: open ? null : messagesOut,
      sla_breaches: rnd() < 0.08 ? 1 : 0,
      csat_rating: rated ? [5, 5, 4, 4, 5, 3, 4, 5, 2, 5][Math.floor(rnd() * 10)]! : null,
      csat_at: rated ? new Date(Math.min(resolvedAt.getTime() + 600_000, NOW - 1000)) : null,
      // From the row's place, not the generator: the figures above stay as they were.
      csat_comment: rated && i % 4 !== 3 ? COMMENTS[i % COMMENTS.length]! : null,
    });
  }
  await db.insertInto('conversations').values(rows).execute();
  return rows;
}
const rows = await seed();

// The page's default period: the last 30 days up to today, as whole days in the browser's zone (UTC here).
const today = new Date(NOW);
const from = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - 29);
const opened = rows.filter((r) => r.opened_at.getTime() >= from).length;
const resolved = rows.filter((r) => r.resolved_at !== null && r.resolved_at.getTime() >= from).length;
const openedBefore = rows.filter((r) => r.opened_at.getTime() >= from - 30 * DAY && r.opened_at.getTime() < from).length;

describe('the Reports page', () => {
  it('shows the period beside the one before, groups, a chart and the CSV', { timeout: 90_000 }, async () => {
    // Tall enough for the whole page in one picture: the page scrolls inside its own pane.
    const { context, page } = await c.newPage({ viewport: { width: 1280, height: 2300 } });
    await c.signIn(page);
    const link = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Reports' });
    await tabTo(page, link);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Reports' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/app/reports');

    const card = (title: string) =>
      page.locator('li.report-figure').filter({ has: page.getByRole('heading', { name: title, exact: true }) });
    await expect.poll(() => card('Conversations').locator('.figure-value').textContent()).toBe(String(opened));
    expect(await card('Resolved').locator('.figure-value').textContent()).toBe(String(resolved));
    expect(await card('Conversations').locator('.figure-before').textContent()).toContain(`Before: ${openedBefore}`);
    await card('CSAT (average)').waitFor();

    // By agent first: one row per agent who had a conversation, named.
    const byAgent = page.getByRole('table', { name: /^By agent/ });
    await byAgent.getByRole('rowheader', { name: 'Bruno Díaz' }).waitFor();
    await byAgent.getByRole('rowheader', { name: 'Chen Wei' }).waitFor();
    // The chart is drawn; its points are also a table, a keypress away.
    await page.locator('.report-chart canvas').first().waitFor();

    // The ratings of the period, newest first: each with its rating, comment, contact and a link to its conversation.
    const rated = rows
      .filter((r) => r.csat_at !== null && r.csat_at.getTime() >= from)
      .sort((a, b) => b.csat_at!.getTime() - a.csat_at!.getTime());
    expect(rated.length).toBeGreaterThan(10);
    const ratings = page.getByRole('list', { name: 'CSAT ratings' }).getByRole('listitem');
    await expect.poll(() => ratings.count()).toBe(10);
    const newest = rated[0]!;
    const { name } = await db
      .selectFrom('threads')
      .innerJoin('contacts', 'contacts.id', 'threads.contact_id')
      .select('contacts.name')
      .where('threads.id', '=', newest.thread_id)
      .executeTakeFirstOrThrow();
    await ratings.first().getByText(`${name},`).waitFor();
    expect(await ratings.first().textContent()).toContain(`${newest.csat_rating} of 5`);
    expect(await ratings.first().textContent()).toContain(newest.csat_comment ?? 'No comment');
    const toThread = ratings.first().getByRole('link', { name: `Open the conversation with ${name}` });
    expect(await toThread.getAttribute('href')).toBe(`/app/c/${newest.thread_id}`);
    expect(await seriousViolations(page)).toEqual([]);
    // The picture without the keyboard's focus ring on the navigation.
    await link.evaluate((el: { blur(): void }) => el.blur());
    await page.screenshot({ path: path.join(OUT, 'console-reports.png'), fullPage: true });
    await tabTo(page, page.getByText('The chart as a table'));
    await page.keyboard.press('Enter');
    const days = page.getByRole('table', { name: /^Conversations per day/ });
    await days.waitFor();
    expect(await days.locator('tbody tr').count()).toBe(30);

    // Another grouping by keyboard: the label table answers for the same period.
    await tabTo(page, page.getByRole('button', { name: 'Label' }));
    await page.keyboard.press('Enter');
    const byLabel = page.getByRole('table', { name: /^By label/ });
    await byLabel.getByRole('rowheader', { name: 'refund' }).waitFor();
    expect(await page.getByRole('button', { name: 'Label' }).getAttribute('aria-pressed')).toBe('true');

    // The CSV is fetched with the credential and saved: a header and a row per conversation opened.
    await tabTo(page, page.getByRole('button', { name: 'Download CSV' }));
    const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
    expect(download.suggestedFilename()).toMatch(/^conversations-\d{4}-\d{2}-\d{2}-to-\d{4}-\d{2}-\d{2}\.csv$/);
    const csv = readFileSync((await download.path())!, 'utf8')
      .trimEnd()
      .split('\r\n');
    expect(csv[0]).toMatch(/^conversationId,threadId,/);
    expect(csv).toHaveLength(1 + opened);

    // More ratings, by keyboard: the next page is added below.
    await tabTo(page, page.getByRole('button', { name: 'Show more ratings' }));
    await page.keyboard.press('Enter');
    await expect.poll(() => ratings.count()).toBe(Math.min(20, rated.length));
    expect(await ratings.nth(10).textContent()).toContain(`${rated[10]!.csat_rating} of 5`);

    // A shorter period reads again.
    await page.getByLabel('Period').selectOption('7');
    const week = rows.filter((r) => r.opened_at.getTime() >= from + 23 * DAY).length;
    await expect.poll(() => card('Conversations').locator('.figure-value').textContent()).toBe(String(week));
    // On a phone the tables (the chart's too, open now) scroll in regions the keyboard reaches.
    await page.setViewportSize(PHONE);
    expect(await seriousViolations(page)).toEqual([]);
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    await page.setViewportSize({ width: 1280, height: 2300 });
    // A rating's link opens its conversation.
    await tabTo(page, toThread);
    await page.keyboard.press('Enter');
    await expect.poll(() => new URL(page.url()).pathname).toBe(`/app/c/${newest.thread_id}`);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('is not offered to an agent', { timeout: 30_000 }, async () => {
    const { context, page } = await c.newPage();
    await c.signIn(page, { email: agent.user.email, password: agent.password });
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Conversations' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Reports' }).count()).toBe(0);
    expect(await page.getByRole('heading', { name: 'Reports' }).count()).toBe(0);
    await context.close();
  });
});
