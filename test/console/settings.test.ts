import { randomUUID } from 'node:crypto';
import { AxeBuilder } from '@axe-core/playwright';
import type { Locator, Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { whatsappTextBody } from '../../harness/whatsapp-delivery.js';
import { PHONE_NUMBER_ID, useConsole } from '../helpers/console.js';
import { makeUser } from '../helpers/factories.js';
import { tabTo, typeInto } from '../helpers/keyboard.js';
import { startReceiver } from '../helpers/receiver.js';

/*
 * The admin settings in a real Chromium against the real service (docs/console.md,
 * "Settings"): webhook endpoints with deliveries and redeliver, dead letters with requeue, and
 * every page accessible and reachable from the keyboard.
 */
const c = await useConsole({ env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
const receiver = await startReceiver();
afterAll(() => receiver.close());

const PAGES = ['Connections', 'Webhooks', 'Dead letters', 'Users', 'Teams', 'Canned responses', 'Automation', 'Macros'];

async function seriousViolations(page: Page) {
  const result = await new AxeBuilder({ page }).analyze();
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.help}`);
}

async function settings(page: Page, name: string) {
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name }).click();
  await page.getByRole('heading', { name, level: 2 }).waitFor();
}

describe('admin settings', () => {
  it('creates a webhook endpoint, shows a delivery and redelivers it', { timeout: 90_000 }, async () => {
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.getByRole('link', { name: 'Settings' }).click();
    await settings(page, 'Webhooks');
    const url = `${receiver.url}/hooks/${randomUUID()}`;
    await page.getByLabel('URL').fill(url);
    await page.getByLabel('Description').fill('CRM sync');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = await page.locator('code.secret').textContent();
    expect(secret).toMatch(/\S{16,}/);
    await page.getByRole('list', { name: 'Endpoints' }).getByText(url).waitFor();

    // A message arrives: the endpoint (every event) gets message.created among others.
    await c.deliverWhatsapp({ from: '4917600000001', name: 'Lena Voss', text: 'Hello from the webhook test' });
    const mine = () => receiver.received.filter((r) => r.path.startsWith(new URL(url).pathname) && r.json.type === 'message.created');
    await expect.poll(() => mine().length, { timeout: 15_000 }).toBe(1);
    const deliveryId = mine()[0]!.headers['x-service-delivery'];
    const row = page.locator(`tr[data-delivery-id="${deliveryId}"]`);
    await page.getByRole('button', { name: 'Refresh deliveries' }).click();
    await row.getByRole('cell', { name: 'succeeded' }).waitFor();
    await row.getByRole('cell', { name: '200' }).waitFor();
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.content()).not.toContain(secret!);

    await row.getByRole('button', { name: /^Redeliver/ }).click();
    await expect.poll(() => mine().length, { timeout: 15_000 }).toBe(2);
    expect(mine()[1]!.headers['x-service-delivery']).toBe(deliveryId);
    await page.getByRole('button', { name: 'Refresh deliveries' }).click();
    await row.getByRole('cell', { name: '2', exact: true }).waitFor();
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('requeues a dead letter, which the worker then processes', { timeout: 60_000 }, async () => {
    const id = randomUUID();
    const text = `A message that failed ${id.slice(0, 8)}`;
    const body = whatsappTextBody({ phoneNumberId: PHONE_NUMBER_ID, from: '4917600000002', name: 'Jonas Beck', id: `wamid.${id}`, text });
    await c.ctx.deps.db
      .insertInto('webhook_inbox')
      .values({
        id,
        integration_key: 'whatsapp',
        app_id: c.tenant.workspace.appId,
        raw_body: body,
        payload_json: body,
        event: 'messages',
        status: 'dead_letter',
        last_error: 'connection not found (it has since been added)',
        attempt_count: 8,
      })
      .execute();
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.goto(`${c.base}/app/settings/dead-letters`);
    const row = page.locator(`tr[data-row-id="${id}"]`);
    await row.getByText('connection not found').waitFor();
    await row.getByRole('button', { name: 'Requeue' }).click();
    await page.getByRole('status').getByText(`Delivery ${id} is queued again.`).waitFor();
    await row.waitFor({ state: 'detached' });
    await expect
      .poll(
        async () =>
          (await c.ctx.deps.db.selectFrom('webhook_inbox').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status,
        {
          timeout: 15_000,
        },
      )
      .toBe('processed');
    await page.goto(`${c.base}/app/`);
    await page.getByRole('list', { name: 'Conversation list' }).getByText(text).waitFor();
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('connections: credentials are write-only and replaced, never shown', { timeout: 60_000 }, async () => {
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.goto(`${c.base}/app/settings/connections`);
    const token = `EAAG-${randomUUID()}`;
    await page.getByLabel('Account id').fill(`1065${Date.now()}`);
    await page.getByLabel('Name').fill('Second line');
    await page.getByLabel('Access token').fill(token);
    await page.getByRole('button', { name: 'Connect' }).click();
    const list = page.getByRole('list', { name: 'Connections' });
    await list.getByText('Second line').waitFor();
    await page.getByRole('button', { name: 'Edit Second line' }).click();
    expect(await page.getByLabel('Replace access token').inputValue()).toBe('');
    expect(await page.content()).not.toContain(token);
    const replaced = `EAAG-${randomUUID()}`;
    await page.getByLabel('Replace access token').fill(replaced);
    await page.getByRole('button', { name: 'Save' }).click();
    // The form closes once the service has answered the PATCH.
    await page.getByLabel('Replace access token').waitFor({ state: 'detached' });
    const row = await c.ctx.deps.db.selectFrom('connections').select('id').where('name', '=', 'Second line').executeTakeFirstOrThrow();
    const { connectionCredentials } = await import('../../src/connections/connection-credentials.js');
    expect(await connectionCredentials(c.ctx.deps, Number(row.id))).toEqual({ accessToken: replaced });
    expect(await page.content()).not.toContain(replaced);
    await context.close();
  });

  it('every settings page: no serious axe finding, every control reachable by Tab, nothing wider than a phone', {
    timeout: 90_000,
  }, async () => {
    await c.ctx.app.inject({
      method: 'POST',
      url: '/v1/canned-responses',
      headers: c.tenant.headers,
      payload: { shortCode: 'thanks', content: 'Thank you for waiting.' },
    });
    // Pages with rows: a dead letter in its table, and (below) an endpoint's delivery log open.
    const endpoint = await c.ctx.app.inject({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      headers: c.tenant.headers,
      payload: { url: `${receiver.url}/axe/${randomUUID()}`, description: 'a receiver with a long address to wrap' },
    });
    await c.ctx.app.inject({ method: 'POST', url: `/v1/webhook-endpoints/${endpoint.json().data.id}/test`, headers: c.tenant.headers });
    await c.ctx.deps.db
      .insertInto('webhook_inbox')
      .values({
        id: randomUUID(),
        integration_key: 'whatsapp',
        app_id: c.tenant.workspace.appId,
        raw_body: '{}',
        payload_json: '{}',
        event: null,
        status: 'dead_letter',
        last_error: 'no connection for this account',
        attempt_count: 8,
      })
      .execute();
    for (const viewport of [undefined, { width: 390, height: 844 }]) {
      const { context, page } = await c.newPage(viewport ? { viewport } : {});
      await c.signIn(page);
      await page.goto(`${c.base}/app/settings/connections`);
      for (const name of PAGES) {
        await settings(page, name);
        if (name === 'Webhooks') {
          await page.getByRole('button', { name: 'Deliveries', exact: true }).first().click();
          await page
            .getByRole('table', { name: /^Deliveries to/ })
            .first()
            .waitFor();
        }
        if (name === 'Dead letters') await page.getByRole('button', { name: 'Requeue' }).first().waitFor();
        expect(await seriousViolations(page), `${name} at ${viewport?.width ?? 1280}px`).toEqual([]);
        if (viewport) {
          expect(await page.evaluate<number>('document.documentElement.scrollWidth'), name).toBeLessThanOrEqual(viewport.width);
          // Nor the page inside: only a wide table may scroll, inside its own box.
          const pane = await page.evaluate<number[]>(`(e => [e.scrollWidth, e.clientWidth])(document.querySelector('.settings-page'))`);
          expect(pane[0], `${name}: the settings page scrolls sideways`).toBeLessThanOrEqual(pane[1]!);
          continue;
        }
        // Keyboard: Tab from the top of the page reaches every enabled control of the page.
        const controls = await page
          .locator('.settings-page :is(a, button, input, select, textarea, [tabindex="0"]):not([disabled])')
          .count();
        await page.locator('body').focus();
        const reached = new Set<string>();
        for (let i = 0; i < controls + 30; i += 1) {
          await page.keyboard.press('Tab');
          const key = await page.evaluate<string | null>(`(() => {
            const el = document.activeElement;
            if (!el?.closest('.settings-page')) return null;
            return String([...document.querySelectorAll('.settings-page *')].indexOf(el));
          })()`);
          if (key !== null) reached.add(key);
        }
        expect(reached.size, name).toBe(controls);
      }
      expect(c.errorsOf(page)).toEqual([]);
      await context.close();
    }
  });

  it('teams from the keyboard: create, pick members, route, start a connection in it, restrict agents, delete', {
    timeout: 90_000,
  }, async () => {
    const bo = await makeUser(c.ctx.deps, c.tenant.workspace.id, { name: 'Bo Teammate', roles: ['agent'] });
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.goto(`${c.base}/app/settings/teams`);
    await page.getByRole('heading', { name: 'Teams', level: 2 }).waitFor();
    await typeInto(page, page.getByLabel('Team name'), 'Billing');
    await tabTo(page, page.getByLabel('Assign its new conversations automatically'));
    await page.keyboard.press('Space');
    await tabTo(page, page.getByRole('button', { name: 'Add team' }));
    await page.keyboard.press('Enter');
    const list = page.getByRole('list', { name: 'Teams' });
    await list.getByText('Billing').waitFor();

    await tabTo(page, page.getByRole('button', { name: 'Edit Billing' }));
    await page.keyboard.press('Enter');
    const form = page.getByRole('form', { name: 'Edit Billing' });
    await tabTo(page, form.getByLabel('Team name'));
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('Billing and refunds');
    await tabTo(page, form.getByRole('group', { name: 'Members' }).getByLabel('Bo Teammate'));
    await page.keyboard.press('Space');
    await tabTo(page, form.getByRole('button', { name: 'Save' }));
    await page.keyboard.press('Enter');
    await list.getByText('Members: Bo Teammate').waitFor();
    const team = await c.ctx.deps.db
      .selectFrom('teams')
      .selectAll()
      .where('workspace_id', '=', c.tenant.workspace.id)
      .executeTakeFirstOrThrow();
    expect({ name: team.name, autoAssign: team.auto_assign }).toEqual({ name: 'Billing and refunds', autoAssign: true });
    const members = await c.ctx.deps.db.selectFrom('team_members').select('user_id').where('team_id', '=', team.id).execute();
    expect(members.map((m) => m.user_id)).toEqual([bo.user.id]);

    // The connection's new conversations start in the team; agents see only their teams'.
    await page.getByLabel('Acme WhatsApp').selectOption({ label: 'Billing and refunds' });
    await expect
      .poll(
        async () =>
          (await c.ctx.deps.db.selectFrom('connections').select('team_id').where('id', '=', c.whatsapp.id).executeTakeFirstOrThrow())
            .team_id,
      )
      .toBe(team.id);
    await tabTo(page, page.getByRole('checkbox', { name: /Agents see only their teams/ }));
    await page.keyboard.press('Space');
    const settingsOf = async () =>
      (await c.ctx.deps.db.selectFrom('workspaces').select('settings').where('id', '=', c.tenant.workspace.id).executeTakeFirstOrThrow())
        .settings as Record<string, unknown>;
    await expect.poll(async () => (await settingsOf()).restrictAgentsToTeams).toBe(true);
    await page.getByRole('checkbox', { name: /Agents see only their teams/, checked: true }).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    await tabTo(page, page.getByRole('checkbox', { name: /Agents see only their teams/ }));
    await page.keyboard.press('Space');
    await expect.poll(async () => (await settingsOf()).restrictAgentsToTeams).toBe(false);

    await tabTo(page, page.getByRole('button', { name: 'Delete Billing and refunds' }));
    await page.keyboard.press('Enter');
    await page.getByText('No teams yet.').waitFor();
    const connection = await c.ctx.deps.db
      .selectFrom('connections')
      .select('team_id')
      .where('id', '=', c.whatsapp.id)
      .executeTakeFirstOrThrow();
    expect(connection.team_id).toBeNull();
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('is for admins: an agent sees no Settings link and no settings page', { timeout: 60_000 }, async () => {
    const agent = await makeUser(c.ctx.deps, c.tenant.workspace.id, {
      name: 'Cy Agent',
      email: `cy-${Date.now()}@acme.test`,
      roles: ['agent'],
    });
    const { context, page } = await c.newPage();
    await c.signIn(page, { email: agent.user.email, password: agent.password });
    expect(await page.getByRole('link', { name: 'Settings' }).count()).toBe(0);
    await page.goto(`${c.base}/app/settings/webhooks`);
    await page.getByText('Settings are for workspace admins.').waitFor();
    expect(await page.getByLabel('URL').count()).toBe(0);
    await context.close();
  });

  it('shows a refusal inside the form that caused it, in view, with the focus on it', { timeout: 90_000 }, async () => {
    // Enough rows that the form edited last sits below the fold of the page's top.
    for (let i = 0; i < 12; i += 1) {
      const res = await c.ctx.app.inject({
        method: 'POST',
        url: '/v1/canned-responses',
        headers: c.tenant.headers,
        payload: { shortCode: `reply-${i}`, content: `Reply number ${i}` },
      });
      expect(res.statusCode).toBe(201);
    }
    for (const name of ['Alpha', 'Beta', 'Gamma', 'Delta', 'Epsilon', 'Zeta']) {
      await c.ctx.app.inject({ method: 'POST', url: '/v1/teams', headers: c.tenant.headers, payload: { name } });
    }
    const { context, page } = await c.newPage();
    await c.signIn(page);
    /** The refusal has the focus and lies wholly inside the window (polled: both follow its render). */
    const inView = async (form: Locator) => {
      const alert = form.getByRole('alert');
      const box = await alert.boundingBox();
      const focused = await alert.evaluate((el: { ownerDocument: { activeElement: unknown } }) => el === el.ownerDocument.activeElement);
      return focused && box !== null && box.y >= 0 && box.y + box.height <= 800;
    };

    await page.goto(`${c.base}/app/settings/canned-responses`);
    await tabTo(page, page.getByRole('button', { name: 'Edit /reply-11' }));
    await page.keyboard.press('Enter');
    const canned = page.getByRole('form', { name: 'Edit /reply-11' });
    await tabTo(page, canned.getByLabel('Short code'));
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('reply-0');
    await tabTo(page, canned.getByRole('button', { name: 'Save' }));
    await page.keyboard.press('Enter');
    await canned
      .getByRole('alert')
      .getByText(/already exists/)
      .waitFor();
    await expect.poll(() => inView(canned)).toBe(true);

    await page.goto(`${c.base}/app/settings/teams`);
    await tabTo(page, page.getByRole('button', { name: 'Edit Zeta' }));
    await page.keyboard.press('Enter');
    const team = page.getByRole('form', { name: 'Edit Zeta' });
    await tabTo(page, team.getByLabel(/Business hours/));
    await page.keyboard.type('{"timezone": "Mars/Olympus", "weekly": {}, "holidays": []}');
    await tabTo(page, team.getByRole('button', { name: 'Save' }));
    await page.keyboard.press('Enter');
    await team
      .getByRole('alert')
      .getByText(/Mars\/Olympus/)
      .waitFor();
    // The list read again after the attempt leaves the refusal where it is.
    await page.waitForLoadState('networkidle');
    await expect.poll(() => inView(team)).toBe(true);

    await page.goto(`${c.base}/app/settings/sla`);
    const policy = page.getByRole('form', { name: 'New SLA policy' });
    await typeInto(page, policy.getByLabel('Name'), 'Too fast');
    await tabTo(page, policy.getByLabel(/First response/));
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('PT5S');
    await page.keyboard.press('Enter');
    await policy
      .getByRole('alert')
      .getByText(/at least PT10S/)
      .waitFor();
    await expect.poll(() => inView(policy)).toBe(true);
    expect(await seriousViolations(page)).toEqual([]);
    await context.close();
  });

  it('an inline form takes the focus, Escape cancels it, and the focus goes back to the button that opened it', {
    timeout: 90_000,
  }, async () => {
    await c.ctx.app.inject({ method: 'POST', url: '/v1/teams', headers: c.tenant.headers, payload: { name: 'Returns' } });
    await c.ctx.app.inject({
      method: 'POST',
      url: '/v1/canned-responses',
      headers: c.tenant.headers,
      payload: { shortCode: 'thanks', content: 'Thank you!' },
    });
    const { context, page } = await c.newPage();
    await c.signIn(page);
    const focused = (target: Locator) =>
      target.evaluate((el: { ownerDocument: { activeElement: unknown } }) => el === el.ownerDocument.activeElement);
    /** Opens the form with Enter on `opener`: its first field has the focus; Escape closes it and gives the focus back. */
    const escapeFrom = async (opener: Locator, form: Locator, first: Locator) => {
      await tabTo(page, opener);
      await page.keyboard.press('Enter');
      await form.waitFor();
      await expect.poll(() => focused(first)).toBe(true);
      await page.keyboard.press('Escape');
      await form.waitFor({ state: 'detached' });
      await expect.poll(() => focused(opener)).toBe(true);
    };

    await page.goto(`${c.base}/app/settings/teams`);
    const editTeam = page.getByRole('button', { name: 'Edit Returns' });
    const teamForm = page.getByRole('form', { name: 'Edit Returns' });
    await escapeFrom(editTeam, teamForm, teamForm.getByLabel('Team name'));
    // A save closes it too, and the focus is on the row's Edit button again, renamed.
    await page.keyboard.press('Enter');
    await expect.poll(() => focused(teamForm.getByLabel('Team name'))).toBe(true);
    await page.keyboard.press('End');
    await page.keyboard.type(' and exchanges');
    await tabTo(page, teamForm.getByRole('button', { name: 'Save' }));
    await page.keyboard.press('Enter');
    const renamed = page.getByRole('button', { name: 'Edit Returns and exchanges' });
    await renamed.waitFor();
    await expect.poll(() => focused(renamed)).toBe(true);

    await page.goto(`${c.base}/app/settings/canned-responses`);
    const cannedForm = page.getByRole('form', { name: 'Edit /thanks' });
    await escapeFrom(page.getByRole('button', { name: 'Edit /thanks' }), cannedForm, cannedForm.getByLabel('Short code'));
    expect(await page.getByRole('list', { name: 'Canned responses' }).getByText('/thanks').count()).toBe(1);

    await page.goto(`${c.base}/app/settings/macros`);
    const macroForm = page.getByRole('form', { name: 'New macro' });
    await escapeFrom(page.getByRole('button', { name: 'New macro' }), macroForm, macroForm.getByLabel('Macro name'));

    await page.goto(`${c.base}/app/settings/connections`);
    const connectionForm = page.getByRole('form', { name: 'Edit Acme WhatsApp' });
    await escapeFrom(page.getByRole('button', { name: 'Edit Acme WhatsApp' }), connectionForm, connectionForm.getByLabel('Name'));
    expect(await seriousViolations(page)).toEqual([]);
    expect(c.errorsOf(page)).toEqual([]);
    await context.close();
  });

  it('a refused change stays on the page after the list is read again', { timeout: 60_000 }, async () => {
    const made = await c.ctx.app.inject({
      method: 'POST',
      url: '/v1/macros',
      headers: c.tenant.headers,
      payload: { name: 'Old greeting', actions: [{ type: 'note', text: 'Hello' }] },
    });
    expect(made.statusCode, made.body).toBe(201);
    const { context, page } = await c.newPage();
    await c.signIn(page);
    await page.goto(`${c.base}/app/settings/macros`);
    await tabTo(page, page.getByRole('button', { name: 'Delete Old greeting' }));
    // Someone else deletes it meanwhile: this page's delete is refused (404).
    const gone = await c.ctx.app.inject({ method: 'DELETE', url: `/v1/macros/${made.json().data.id}`, headers: c.tenant.headers });
    expect(gone.statusCode).toBe(200);
    await page.keyboard.press('Enter');
    await tabTo(page, page.getByRole('button', { name: 'Yes, delete' }));
    await page.keyboard.press('Enter');
    // The page reads the list again after the attempt: the row goes, the refusal stays.
    await page.getByText('No macros yet.').waitFor();
    await page.waitForLoadState('networkidle');
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/not found/i);
    await context.close();
  });
});
