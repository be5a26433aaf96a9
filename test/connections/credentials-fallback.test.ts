import { afterAll, describe, expect, it } from 'vitest';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';
import { inbound } from '../threads/workflow-helpers.js';

// A deployment with one Twilio account: INBOX_INTEGRATIONS.sms.accountSid is the fallback of
// the connections the operator makes (docs/connections.md, "Which credentials a reply uses").
const SID = 'AC0123456789abcdef0123456789abcdef';
const fake = await startFakeProviders();
afterAll(() => fake.close());
const ctx = await useTestContext({
  workers: true,
  env: { INBOX_INTEGRATIONS: JSON.stringify({ sms: { webhookSecret: 'x', apiBaseUrl: fake.baseUrls.sms, accountSid: SID } }) },
});
const tenant = await makeTenant(ctx.deps);

const patch = (id: number, body: unknown) =>
  ctx.app.inject({ method: 'PATCH', url: `/v1/connections/${id}`, headers: tenant.headers, payload: body as object });

describe('sms credentials without accountSid', () => {
  it("an operator's connection takes {accessToken} alone and replies on the deployment's account SID", async () => {
    const sms = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms', externalAccountId: '+14155550100' });
    const res = await patch(sms.id, { credentials: { accessToken: 'own-token' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.hasCredentials).toBe(true);

    const created = await ctx.app.inject({
      method: 'POST',
      url: `/v1/engage/workspaces/${tenant.workspace.id}/connections`,
      headers: adminHeaders(),
      payload: {
        integrationKey: 'sms',
        externalAccountId: '+14155550101',
        name: 'Second line',
        credentials: { accessToken: 'other-token' },
      },
    });
    expect(created.statusCode, created.body).toBe(201);

    const threadId = await inbound(ctx, { integrationKey: 'sms', externalAccountId: '+14155550100' }, '+16505550001', 'sms-in-1');
    const reply = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${threadId}/messages`,
      headers: tenant.headers,
      payload: { text: 'On our way' },
    });
    expect(reply.statusCode, reply.body).toBe(202);
    const sent = await waitFor(async () => {
      const m = await ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', reply.json().data.id).executeTakeFirstOrThrow();
      return m.status !== 'queued' ? m : undefined;
    }, 'the reply to leave queued');
    expect(sent.status, sent.error ?? '').toBe('sent');
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.path).toBe(`/twilio/2010-04-01/Accounts/${SID}/Messages.json`);
    expect(fake.requests[0]!.headers.authorization).toBe(`Basic ${Buffer.from(`${SID}:own-token`).toString('base64')}`);
  });

  it("a workspace's own connection never borrows it, and empty credentials still name what is missing (422)", async () => {
    const own = await ctx.app.inject({
      method: 'POST',
      url: '/v1/connections',
      headers: tenant.headers,
      payload: { integrationKey: 'sms', externalAccountId: '+14155550102', name: 'Own line', credentials: { accessToken: 'a' } },
    });
    expect(own.statusCode, own.body).toBe(422);
    expect(own.json().error.message).toBe('sms credentials need accountSid and accessToken (missing: accountSid)');

    const sms = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms', externalAccountId: '+14155550103' });
    const empty = await patch(sms.id, { credentials: {} });
    expect(empty.statusCode, empty.body).toBe(422);
    expect(empty.json().error.message).toBe('sms credentials need accountSid and accessToken (missing: accountSid, accessToken)');
  });
});
