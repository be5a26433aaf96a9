import { tmpdir } from 'node:os';
import path from 'node:path';
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { PHONE, useConsole } from '../helpers/console.js';
import { makeUser } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';

/*
 * Working as a team in the console (docs/console.md, "Working as a team"): the bell, the tab
 * title, desktop notifications and the sound, the status menu, the `@` picker, collision and
 * the tab counts, with two agents in two browser contexts against the real service.
 */
const c = await useConsole({ agentName: 'Ada Lovelace' });
const db = c.ctx.deps.db;
const ada = c.agent;
const boMade = await makeUser(c.ctx.deps, c.tenant.workspace.id, { name: 'Bo Builder', email: 'bo@acme.test', roles: ['agent'] });
const bo = { email: boMade.user.email, password: boMade.password, id: boMade.user.id, name: boMade.user.name };

async function serious(page: Page, where: string) {
  const result = await new AxeBuilder({ page }).analyze();
  const found = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
  expect(found, where).toEqual([]);
}

/** A signed-in API caller as `who` (its own session), for what a colleague does elsewhere. */
async function apiAs(who: { email: string; password: string }) {
  const res = await c.ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email: who.email, password: who.password } });
  expect(res.statusCode, res.body).toBe(200);
  const headers = { authorization: `Bearer ${res.json().access_token as string}` };
  return async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) => {
    const answer = await c.ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
    expect(answer.statusCode, `${method} ${url}: ${answer.body}`).toBeLessThan(300);
    return answer.json().data;
  };
}

/** A WhatsApp delivery's thread, once the workers made it. */
async function threadOf(from: string, name: string, text: string) {
  await c.deliverWhatsapp({ from, name, text });
  const m = await waitFor(() => db.selectFrom('messages').selectAll().where('text', '=', text).executeTakeFirst(), `"${text}"`);
  return m.thread_id;
}

const unread = (userId: number) =>
  db.selectFrom('notifications').select('id').where('user_id', '=', userId).where('read_at', 'is', null).execute();

/**
 * Records what the page does with the browser's notification and audio APIs while still
 * calling the real ones: how often it asked for permission, what it showed, tones it played.
 * Headless Chromium answers "denied" to a page nobody has asked for yet; a fresh profile of a
 * browser on a desk answers "default", which the spy reports until the page asks.
 */
const SPY = `
  window.__asks = 0; window.__shown = []; window.__tones = 0;
  const Real = window.Notification;
  class Spy extends Real {
    constructor(title, options) { super(title, options); window.__shown.push({ title, body: options && options.body }); }
    static get permission() { return window.__asks === 0 && Real.permission === 'denied' ? 'default' : Real.permission; }
    static requestPermission(...args) { window.__asks += 1; return Real.requestPermission(...args); }
  }
  window.Notification = Spy;
  const oscillator = AudioContext.prototype.createOscillator;
  AudioContext.prototype.createOscillator = function () { window.__tones += 1; return oscillator.call(this); };
`;

describe('working as a team in the console', () => {
  it('the bell counts what needs the agent live, titles the tab, opens and marks read; desktop notifications and sound only when chosen', {
    timeout: 120_000,
  }, async () => {
    const boApi = await apiAs(bo);
    const first = await threadOf('4915100000201', 'Maya Schulz', 'My parcel never arrived');
    const second = await threadOf('4915100000202', 'Jonas Weber', 'Do you ship to Austria?');

    const { context, page } = await c.newPage();
    await page.addInitScript(SPY);
    // The bell's first reads (at sign-in, and again on the socket's first `ready`) are answered
    // by the service at once but reach the page only after the assignment below was heard live:
    // answers that predate an event, and may come in any order, must not take it back.
    let read = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(/\/v1\/notifications\?/, async (route) => {
      if (route.request().method() !== 'GET' || read >= 4) return route.continue();
      read += 1;
      const response = await route.fetch();
      await held;
      await route.fulfill({ response });
    });
    const heard = new Promise<void>((resolve) =>
      page.on('websocket', (socket) =>
        socket.on('framereceived', (frame) => {
          if (String(frame.payload).includes('"type":"notification.created"')) resolve();
        }),
      ),
    );
    await c.signIn(page);
    const bell = page.locator('button.bell');
    await waitFor(async () => read === 4, 'both reads of the bell');
    expect(await page.title()).toBe('Inbox');

    // Bo assigns a thread to Ada and mentions her in a note of another: both reach her bell live.
    await boApi('PATCH', `/v1/threads/${first}`, { assigneeId: ada.id });
    await heard;
    release();
    await expect.poll(() => page.title()).toBe('(1) Inbox');
    await page.unroute(/\/v1\/notifications\?/);
    await boApi('POST', `/v1/threads/${second}/messages`, { text: '@Ada Lovelace can you take this?', private: true, mentions: [ada.id] });
    // The contact writes again in Ada's thread: a `message` notification.
    await c.deliverWhatsapp({ from: '4915100000201', name: 'Maya Schulz', text: 'Any news?' });
    await expect.poll(() => page.title()).toBe('(3) Inbox');
    await expect.poll(() => bell.getAttribute('aria-label')).toBe('Notifications, 3 unread');
    expect(await bell.locator('.bell-count').textContent()).toBe('3');

    // Nothing asked the browser for permission on load, and without it nothing was shown.
    expect(await page.evaluate('window.__asks')).toBe(0);
    expect(await page.evaluate('window.__shown.length')).toBe(0);
    expect(await page.evaluate('window.__tones')).toBe(0);

    await bell.click();
    const panel = page.getByRole('region', { name: 'Notifications' });
    const items = panel.getByRole('list', { name: 'Notification list' }).getByRole('listitem');
    await expect.poll(() => items.count()).toBe(3);
    // Newest first: the message, the mention (by Bo), the assignment (by Bo), each naming its conversation.
    await expect.poll(() => items.nth(0).textContent()).toMatch(/New message.*Maya Schulz/);
    await expect.poll(() => items.nth(1).textContent()).toMatch(/Bo Builder mentioned you.*Jonas Weber/);
    await expect.poll(() => items.nth(2).textContent()).toMatch(/Bo Builder assigned you.*Maya Schulz/);
    await serious(page, 'the bell open');
    // Bo renames the contact: the bell names her conversations so at once.
    const maya = await db.selectFrom('threads').select('contact_id').where('id', '=', first).executeTakeFirstOrThrow();
    await boApi('PATCH', `/v1/contacts/${maya.contact_id}`, { name: 'Maya Berg' });
    await expect.poll(() => items.nth(0).textContent()).toMatch(/New message.*Maya Berg/);
    await expect.poll(() => items.nth(2).textContent()).toMatch(/Bo Builder assigned you.*Maya Berg/);
    // Without a name, her WhatsApp number names her, as it does when first read.
    await boApi('PATCH', `/v1/contacts/${maya.contact_id}`, { name: null });
    await expect.poll(() => items.nth(0).textContent()).toMatch(/New message.*4915100000201/);

    // Enter on the mention opens Jonas's conversation and marks it read, here and on the service.
    await items.nth(1).getByRole('link').focus();
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Jonas Weber' }).waitFor();
    await expect.poll(() => page.title()).toBe('(2) Inbox');
    // The bell's accessible name, as a screen reader announces it, counts what is left.
    await page.getByRole('button', { name: 'Notifications, 2 unread', exact: true }).waitFor();
    await expect.poll(async () => (await unread(ada.id)).length).toBe(2);
    expect(page.url()).toContain(`/app/c/${second}`);

    // Allowing desktop notifications is the agent's click; then a new one shows, with the sound once on.
    await bell.click();
    await context.grantPermissions(['notifications'], { origin: c.base });
    await panel.getByRole('button', { name: 'Allow desktop notifications' }).click();
    await panel.getByText('Desktop notifications are on.').waitFor();
    expect(await page.evaluate('window.__asks')).toBe(1);
    await panel.getByLabel('Play a sound').check();
    expect(await page.evaluate("localStorage.getItem('inbox.notify.sound')")).toBe('on');
    await boApi('PATCH', `/v1/threads/${second}`, { assigneeId: ada.id });
    await expect.poll(() => page.evaluate('window.__shown.length')).toBe(1);
    expect(await page.evaluate('window.__shown[0].body')).toMatch(/Bo Builder assigned you · Jonas Weber/);
    expect(await page.evaluate('window.__tones')).toBeGreaterThan(0);
    await expect.poll(() => page.title()).toBe('(3) Inbox');
    // Jonas writes in the conversation Ada is reading: counted, but neither shown nor chimed.
    const tones = await page.evaluate('window.__tones');
    await c.deliverWhatsapp({ from: '4915100000202', name: 'Jonas Weber', text: 'Vienna, 1010' });
    await expect.poll(() => page.title()).toBe('(4) Inbox');
    expect(await page.evaluate('window.__shown.length')).toBe(1);
    expect(await page.evaluate('window.__tones')).toBe(tones);

    // Mark all read: the count and the title clear, and so does the service's list.
    await panel.getByRole('button', { name: 'Mark all read' }).click();
    await expect.poll(() => page.title()).toBe('Inbox');
    await expect.poll(async () => (await unread(ada.id)).length).toBe(0);
    expect(await bell.getAttribute('aria-label')).toBe('Notifications');
    await page.keyboard.press('Escape');
    await panel.waitFor({ state: 'hidden' });

    // The sound setting is this browser's: still on after a reload, and still no permission prompt.
    await page.reload();
    await page.getByRole('tab', { name: 'All' }).waitFor();
    await bell.click();
    expect(await panel.getByLabel('Play a sound').isChecked()).toBe(true);
    expect(await page.evaluate('window.__asks')).toBe(0);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();

    // On a phone every control of the header stays on the screen.
    const phone = await c.newPage({ viewport: PHONE });
    await c.signIn(phone.page);
    await phone.page.getByRole('combobox', { name: 'Your status' }).waitFor();
    const controls = await phone.page.locator('.topbar').locator('a, button, select').all();
    expect(controls.length).toBeGreaterThan(4);
    let right = 0;
    let bottom = 0;
    for (const control of controls) {
      // A hidden control (the brand, the shortcuts) has no box; the others sit side by side,
      // on a second row when the first is full.
      const box = await control.boundingBox();
      if (!box) continue;
      const name = (await control.textContent()) ?? '';
      if (box.y >= bottom) right = 0;
      expect(box.x, `${name} overlaps the control before it`).toBeGreaterThanOrEqual(right);
      bottom = Math.max(bottom, box.y + box.height);
      expect(box.x + box.width, name).toBeLessThanOrEqual(PHONE.width);
      right = box.x + box.width;
    }
    await phone.page.locator('button.bell').click();
    const panelBox = await phone.page.getByRole('region', { name: 'Notifications' }).boundingBox();
    expect(panelBox!.x).toBeGreaterThanOrEqual(0);
    expect(panelBox!.x + panelBox!.width).toBeLessThanOrEqual(PHONE.width);
    await phone.context.close();
  });

  it('the status menu sets availability and shows a change made elsewhere live', { timeout: 60_000 }, async () => {
    const adaApi = await apiAs(ada);
    const { context, page } = await c.newPage();
    await c.signIn(page);
    const status = page.getByRole('combobox', { name: 'Your status' });
    await expect.poll(() => status.isEnabled()).toBe(true);
    expect(await status.inputValue()).toBe('online');
    await status.selectOption('busy');
    await waitFor(async () => {
      const u = await db.selectFrom('users').select('availability').where('id', '=', ada.id).executeTakeFirstOrThrow();
      return u.availability === 'busy' ? u : undefined;
    }, 'Ada to be busy');
    await serious(page, 'the status menu');
    // Another tab (here the API with another session of Ada's) sets her offline: user.updated.
    await adaApi('PATCH', '/v1/users/me', { availability: 'offline' });
    await expect.poll(() => status.inputValue()).toBe('offline');
    await status.selectOption('online');
    await waitFor(async () => {
      const u = await db.selectFrom('users').select('availability').where('id', '=', ada.id).executeTakeFirstOrThrow();
      return u.availability === 'online' ? u : undefined;
    }, 'Ada to be online again');
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it("two agents: B viewing and typing shows to A, an @ mention from B reaches A, an assignment moves A's tab count; forgotten after 20 s", {
    timeout: 120_000,
  }, async () => {
    await db.updateTable('notifications').set({ read_at: new Date() }).where('user_id', '=', ada.id).execute();
    const thread = await threadOf('4915100000203', 'Lena Vogel', 'Can I change the size of my jacket?');
    const a = await c.newPage();
    const b = await c.newPage();
    // Ada's page runs on a clock the test moves, so forgetting Bo waits for no wall time; Bo's
    // is held still while he sends, so that his pause in typing (3 s) cannot end it meanwhile.
    await a.page.clock.install();
    await b.page.clock.install();
    await c.signIn(a.page);
    await c.signIn(b.page, bo);
    const aBell = a.page.locator('button.bell');
    const mine = a.page.getByRole('tab', { name: /^Mine/ });
    const mineBefore = await waitFor(async () => /Mine (\d+)/.exec((await mine.textContent()) ?? '')?.[1], 'the Mine count');

    await a.page.getByRole('link', { name: /Lena Vogel/ }).click();
    await a.page.getByRole('heading', { name: 'Lena Vogel' }).waitFor();
    await b.page.getByRole('link', { name: /Lena Vogel/ }).click();
    await b.page.getByRole('heading', { name: 'Lena Vogel' }).waitFor();
    const banner = a.page.locator('.collision');
    await expect.poll(() => banner.textContent(), { timeout: 15_000 }).toBe('Bo Builder is viewing');
    // And Bo sees Ada.
    await expect.poll(() => b.page.locator('.collision').textContent(), { timeout: 15_000 }).toBe('Ada Lovelace is viewing');

    // Bo writes a note mentioning Ada with the @ picker, on the keyboard.
    await b.page.getByLabel('Private note').check();
    const box = b.page.getByRole('textbox', { name: 'Reply' });
    await box.focus();
    await b.page.keyboard.type('@lo');
    await expect.poll(() => banner.textContent()).toBe('Bo Builder is typing…');
    const picker = b.page.getByRole('listbox', { name: 'People to mention' });
    await picker.getByRole('option', { name: /Ada Lovelace/ }).waitFor();
    // Bo is not offered himself.
    expect(await picker.getByRole('option').allTextContents()).toEqual([expect.stringContaining('@Ada Lovelace')]);
    await serious(b.page, 'the @ picker');
    // Typing on at once: the picker's caret placement, a frame later, must not move the words
    // already typed (it once put "the " after the rest of the sentence).
    await b.page.keyboard.press('Enter');
    await b.page.keyboard.type('the customer wants XL, can you check stock?');
    // Enter sends only once the box holds the whole note and the picker is gone.
    await expect.poll(() => box.inputValue()).toBe('@Ada Lovelace the customer wants XL, can you check stock?');
    await expect.poll(() => picker.count()).toBe(0);
    // A moment ahead of his clock (pausing at a time it has passed is refused), well before his pause ends.
    await b.page.clock.pauseAt(await b.page.evaluate<number>('Date.now() + 250'));
    await b.page.keyboard.press('Enter');
    const note = await waitFor(
      () =>
        db
          .selectFrom('messages')
          .selectAll()
          .where('text', '=', '@Ada Lovelace the customer wants XL, can you check stock?')
          .executeTakeFirst(),
      'the note',
    );
    expect(note.kind).toBe('note');
    expect(note.mentions?.map(Number)).toEqual([ada.id]);

    // Ada hears it: the bell, the title, and the note with her name set apart.
    await expect.poll(() => aBell.getAttribute('aria-label')).toBe('Notifications, 1 unread');
    await expect.poll(() => a.page.title()).toBe('(1) Inbox');
    await a.page.locator('.msg-note mark.mention', { hasText: '@Ada Lovelace' }).waitFor();
    // The note went and Bo's box is empty: he is no longer typing, said at once.
    await expect.poll(() => banner.textContent()).toBe('Bo Builder is viewing');
    await b.page.clock.resume();
    await serious(a.page, 'the collision banner');

    // Bo assigns the thread to Ada from the header: her Mine count moves live.
    await b.page.getByLabel('Assignee').selectOption(String(ada.id));
    await waitFor(async () => {
      const t = await db.selectFrom('threads').select('assignee_id').where('id', '=', thread).executeTakeFirstOrThrow();
      return t.assignee_id === ada.id ? t : undefined;
    }, "the thread to be Ada's");
    await expect.poll(() => mine.textContent()).toBe(`Mine ${Number(mineBefore) + 1}`);
    await expect.poll(() => a.page.title()).toBe('(2) Inbox');

    // Bo leaves: after 20 s without a word from him (FORGET_AFTER_MS in
    // src/console/inbox/viewing.ts), Ada's console forgets him.
    await b.context.close();
    expect(await banner.textContent()).toMatch(/^Bo Builder is /);
    await a.page.clock.fastForward(21_000);
    await expect.poll(() => banner.textContent()).toBe('');
    expect(c.errorsOf(a.page)).toEqual([]);
    await a.context.close();
  });

  it("restricted to teams: an agent sees their team's conversation, never another team's, in the list or by its address", {
    timeout: 90_000,
  }, async () => {
    const admin = async (method: 'POST' | 'PUT' | 'PATCH', url: string, payload: object) => {
      const res = await c.ctx.app.inject({ method, url, headers: c.tenant.headers, payload });
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
      return res.json().data;
    };
    const north = await admin('POST', '/v1/teams', { name: 'North' });
    const south = await admin('POST', '/v1/teams', { name: 'South' });
    await admin('PUT', `/v1/teams/${north.id}/members`, { userIds: [bo.id] });
    const ours = await threadOf('4915100000301', 'Nora Nord', 'A question for the north');
    const theirs = await threadOf('4915100000302', 'Sven Sud', 'A question for the south');
    await admin('PATCH', `/v1/threads/${ours}`, { teamId: north.id });
    await admin('PATCH', `/v1/threads/${theirs}`, { teamId: south.id });
    await admin('PATCH', '/v1/workspace', { restrictAgentsToTeams: true });
    try {
      const { context, page } = await c.newPage();
      await c.signIn(page, bo);
      const list = page.getByRole('list', { name: 'Conversation list' });
      await list.getByRole('link', { name: /Nora Nord/ }).waitFor();
      expect(await list.getByRole('link', { name: /Sven Sud/ }).count()).toBe(0);

      // By its address: the service answers 404 and the page shows nothing of it.
      await page.goto(`${c.base}/app/c/${theirs}`);
      await page.getByRole('alert').waitFor();
      expect(await page.getByRole('heading', { name: 'Sven Sud' }).count()).toBe(0);
      expect(await page.content()).not.toContain('A question for the south');
      expect(await list.getByRole('link', { name: /Sven Sud/ }).count()).toBe(0);

      // The page's new socket is ready before the change below: one that is still opening
      // when the change is made would only read the lists as they were (no gap to catch up).
      const ready = new Promise<void>((resolve) =>
        page.on('websocket', (socket) =>
          socket.on('framereceived', (frame) => {
            if (String(frame.payload).includes('"type":"ready"')) resolve();
          }),
        ),
      );
      await page.goto(`${c.base}/app/c/${ours}`);
      await page.getByRole('heading', { name: 'Nora Nord' }).waitFor();
      await page.getByRole('list', { name: 'Messages' }).getByText('A question for the north').waitFor();
      await ready;

      // Taken off North while the page is open: without a reload, the list drops its
      // conversation and the open one says it is out of reach; put on South, its appears.
      await admin('PUT', `/v1/teams/${north.id}/members`, { userIds: [] });
      await page.getByRole('alert').filter({ hasText: 'out of your reach' }).waitFor();
      await waitFor(async () => (await list.getByRole('link', { name: /Nora Nord/ }).count()) === 0, 'North’s row to leave the list');
      // Nothing of it stays on screen: its transcript goes with it.
      await expect.poll(() => page.getByRole('list', { name: 'Messages' }).getByText('A question for the north').count()).toBe(0);
      expect(await page.getByText('Connection lost').count()).toBe(0);
      await page.screenshot({ path: path.join(process.env.CONSOLE_SCREENSHOT_DIR ?? tmpdir(), 'team-left.png') });
      await admin('PUT', `/v1/teams/${south.id}/members`, { userIds: [bo.id] });
      await list.getByRole('link', { name: /Sven Sud/ }).waitFor();
      await admin('PUT', `/v1/teams/${south.id}/members`, { userIds: [] });
      await context.close();

      // The same conversation is there for an admin, who sees every team's.
      const adminPage = await c.newPage();
      await c.signIn(adminPage.page);
      await adminPage.page
        .getByRole('list', { name: 'Conversation list' })
        .getByRole('link', { name: /Sven Sud/ })
        .waitFor();
      await adminPage.context.close();
    } finally {
      await admin('PATCH', '/v1/workspace', { restrictAgentsToTeams: false });
    }
  });
});
