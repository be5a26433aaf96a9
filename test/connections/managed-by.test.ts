import { randomBytes } from 'node:crypto';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { insertPendingAttachments } from '../../src/attachments/fetch-media.queries.js';
import { fetchMedia } from '../../src/attachments/fetch-media.queue.js';
import { MediaClient } from '../../src/attachments/media-download.js';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeOutboundMessage, makeTenant } from '../helpers/factories.js';
import { PNG_1X1 } from '../helpers/multipart.js';
import { waitFor } from '../helpers/webhooks.js';

// The operator's own provider accounts, in INBOX_INTEGRATIONS: only operator-made connections may use them.
const OPERATOR_SID = 'ACoperator0000000000000000000000000';
const OPERATOR_AUTH = 'operator-twilio-auth-token-0123456789';
const OPERATOR_WA_TOKEN = 'EAAG-operator-whatsapp-token-0123456789';

const fake = await startFakeProviders();
afterAll(() => fake.close());
const ctx = await useTestContext({
  workers: true,
  env: {
    INBOX_INTEGRATIONS: JSON.stringify({
      'sms.twilio': { authToken: OPERATOR_AUTH, accountSid: OPERATOR_SID, apiBaseUrl: fake.baseUrls.sms },
      whatsapp: { webhookSecret: 'wa-secret', accessToken: OPERATOR_WA_TOKEN, apiBaseUrl: fake.baseUrls.whatsapp },
    }),
  },
});
beforeEach(() => fake.reset());

const unique = () => randomBytes(4).toString('hex');
let phones = 100;
/** A valid E.164 number of its own for each conversation (415 555 01xx). */
const phone = () => `+14155550${phones++}`;
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const json = (headers: Record<string, string>) => ({ ...headers, 'content-type': 'application/json' });

/** A connection a workspace admin made themselves (POST /v1/connections). */
async function workspaceConnection(headers: Record<string, string>, body: Record<string, unknown>) {
  const res = await ctx.app.inject({ method: 'POST', url: '/v1/connections', headers: json(headers), payload: { name: 'Ours', ...body } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: number; managedBy: string };
}

/** A connection the operator made for the workspace (the engage route). */
async function operatorConnection(workspaceId: number, body: Record<string, unknown>) {
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/v1/engage/workspaces/${workspaceId}/connections`,
    headers: adminHeaders(),
    payload: { name: 'Provisioned', ...body },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data as { id: number; managedBy: string };
}

const start = (headers: Record<string, string>, payload: Record<string, unknown>, extra: Record<string, string> = {}) =>
  ctx.app.inject({ method: 'POST', url: '/v1/conversations', headers: { ...json(headers), ...extra }, payload });

/** The message once the sender is done with it (sent or failed). */
const settled = (id: number) =>
  waitFor(
    () =>
      ctx.deps.db
        .selectFrom('messages')
        .select(['status', 'error'])
        .where('id', '=', id)
        .where('status', 'in', ['sent', 'failed'])
        .executeTakeFirst(),
    `message ${id} settled`,
  );

const twilioSends = () => fake.requests.filter((r) => r.provider === 'sms');

describe('Connection managedBy', () => {
  it('is "operator" for the engage route and "workspace" for POST /v1/connections, on every list', async () => {
    const tenant = await makeTenant(ctx.deps);
    const theirs = await workspaceConnection(tenant.headers, { integrationKey: 'sms.twilio', externalAccountId: `+1555${unique()}` });
    const ours = await operatorConnection(tenant.workspace.id, { integrationKey: 'sms.twilio', externalAccountId: `+1666${unique()}` });
    expect([theirs.managedBy, ours.managedBy]).toEqual(['workspace', 'operator']);
    const listed = (await ctx.app.inject({ method: 'GET', url: '/v1/connections', headers: tenant.headers })).json().data;
    expect(Object.fromEntries(listed.map((c: { id: number; managedBy: string }) => [c.id, c.managedBy]))).toEqual({
      [theirs.id]: 'workspace',
      [ours.id]: 'operator',
    });
    const operatorList = await ctx.app.inject({
      method: 'GET',
      url: `/v1/operator/connections?workspaceId=${tenant.workspace.id}`,
      headers: adminHeaders(),
    });
    expect(
      operatorList
        .json()
        .data.map((c: { managedBy: string }) => c.managedBy)
        .sort(),
    ).toEqual(['operator', 'workspace']);
  });
});

describe("a workspace's connection and the operator's provider accounts", () => {
  it('fails a send at once without credentials of its own: nothing reaches the provider, no retry', async () => {
    const tenant = await makeTenant(ctx.deps);
    const connection = await workspaceConnection(tenant.headers, { integrationKey: 'sms.twilio', externalAccountId: `+1555${unique()}` });
    const res = await start(tenant.headers, { connectionId: connection.id, to: phone(), text: 'on whose account?' });
    expect(res.statusCode, res.body).toBe(202);
    const id = res.json().data.message.id as number;
    // failed, not queued for another attempt: no retry could find credentials either
    expect(await settled(id)).toEqual({ status: 'failed', error: 'connection has no credentials' });
    expect(twilioSends()).toEqual([]);
  });

  it('sends with its own credentials on its own account, while an operator-made one may use the deployment’s', async () => {
    const tenant = await makeTenant(ctx.deps);
    const own = await workspaceConnection(tenant.headers, {
      integrationKey: 'sms.twilio',
      externalAccountId: `+1555${unique()}`,
      credentials: { accountSid: 'ACtenant00000000000000000000000000', accessToken: 'tenant-twilio-token' },
    });
    const provisioned = await operatorConnection(tenant.workspace.id, {
      integrationKey: 'sms.twilio',
      externalAccountId: `+1666${unique()}`,
    });
    for (const [connection, sid, token] of [
      [own, 'ACtenant00000000000000000000000000', 'tenant-twilio-token'],
      [provisioned, OPERATOR_SID, OPERATOR_AUTH],
    ] as const) {
      fake.reset();
      const res = await start(tenant.headers, { connectionId: connection.id, to: phone(), text: 'hello' });
      expect(res.statusCode, res.body).toBe(202);
      expect((await settled(res.json().data.message.id)).status).toBe('sent');
      expect(twilioSends().map((r) => [r.path, r.headers.authorization])).toEqual([
        [`/twilio/2010-04-01/Accounts/${sid}/Messages.json`, basic(sid, token)],
      ]);
    }
  });

  it("downloads media without the operator's token, and syncs no templates with it", async () => {
    const tenant = await makeTenant(ctx.deps);
    const connection = await workspaceConnection(tenant.headers, {
      integrationKey: 'whatsapp',
      externalAccountId: `1065${unique()}`,
      businessAccountId: '102290129340398',
    });
    // A file the operator's token would fetch.
    const served = fake.media.whatsapp({ bytes: PNG_1X1, contentType: 'image/png' }, { token: OPERATOR_WA_TOKEN });
    const message = await makeOutboundMessage(ctx.deps, connection, `wamid.${unique()}`);
    const [attachmentId] = await insertPendingAttachments(
      ctx.deps.db,
      [
        {
          workspaceId: tenant.workspace.id,
          messageId: message.id,
          kind: 'image',
          contentType: undefined,
          filename: undefined,
          source: { from: 'whatsapp_media', mediaId: served.mediaId! },
        },
      ],
      new Date(),
    );
    const client = new MediaClient({
      allowPrivate: true,
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
      timeoutMs: 10_000,
      maxBytes: 1024 * 1024,
    });
    try {
      await fetchMedia(ctx.deps, client, { attachmentId: attachmentId!, attempt: 1 });
    } finally {
      await client.close();
    }
    const row = await ctx.deps.db.selectFrom('attachments').selectAll().where('id', '=', attachmentId!).executeTakeFirstOrThrow();
    expect(row.status).toBe('failed');
    expect(row.error).toMatch(/has no credentials/);
    expect(fake.media.requests).toEqual([]);
    expect(fake.requests).toEqual([]);

    const sync = await ctx.app.inject({ method: 'POST', url: `/v1/connections/${connection.id}/templates/sync`, headers: tenant.headers });
    expect(sync.statusCode, sync.body).toBe(422);
    expect(sync.json().error.message).toMatch(/^connection has no credentials/);
    expect(fake.requests).toEqual([]);
  });
});
