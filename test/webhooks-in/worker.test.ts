import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { uuid7 } from '../../src/crypto/uuid7.js';
import { WEBHOOK_QUEUE } from '../../src/webhooks-in/inbox.enqueue.js';
import { PROCESS_BATCH } from '../../src/webhooks-in/inbox.queue.js';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeConnection, makeOutboundMessage, makeTenant } from '../helpers/factories.js';
import { fixture, sign, waitFor } from '../helpers/webhooks.js';

const SECRET = 'worker-test-secret';
const ctx = await useTestContext({
  workers: true,
  env: {
    INBOX_INTEGRATIONS: JSON.stringify({
      whatsapp: { webhookSecret: SECRET },
      sms: { webhookSecret: SECRET },
      'social_one.native': { appSecret: SECRET },
      'social_two.native': { appSecret: SECRET },
      email: { webhookSecret: SECRET },
      aggregator: { webhookSecret: SECRET },
    }),
  },
});
const tenant = await makeTenant(ctx.deps);
const whatsapp = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'whatsapp', externalAccountId: '106540352242922' });

async function deliver(key: string, body: string, headers: Record<string, string>): Promise<string> {
  const before = new Set((await ctx.deps.db.selectFrom('webhook_inbox').select('id').execute()).map((r) => r.id));
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/webhooks/${key}`,
    headers: { 'content-type': 'application/json', ...headers },
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(200);
  const rows = await ctx.deps.db.selectFrom('webhook_inbox').select('id').execute();
  return rows.map((r) => r.id).find((id) => !before.has(id))!;
}

const other = await makeTenant(ctx.deps);
const otherWhatsapp = await makeConnection(ctx.deps, other.workspace.id, { integrationKey: 'whatsapp', externalAccountId: '207000000002' });
const secondLine = await makeConnection(ctx.deps, tenant.workspace.id, {
  integrationKey: 'whatsapp',
  externalAccountId: '106540352242923',
});

const deliverWhatsapp = (body: string) => deliver('whatsapp', body, { 'x-hub-signature-256': `sha256=${sign(SECRET, body)}` });

/** Waits until the worker has moved the row out of `received`. */
async function settled(id: string) {
  return waitFor(async () => {
    const row = await ctx.deps.db.selectFrom('webhook_inbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    return row.status === 'received' ? undefined : row;
  }, `delivery ${id} to be processed`);
}

/** The status of the message a provider knows by `externalId`. */
async function statusOf(externalId: string) {
  const row = await ctx.deps.db.selectFrom('messages').select('status').where('external_id', '=', externalId).executeTakeFirstOrThrow();
  return row.status;
}

function whatsappText(messageId: string, from: string, text: string, phoneNumberId = '106540352242922') {
  const payload = JSON.parse(fixture('whatsapp', 'text-message.json'));
  const value = payload.entry[0].changes[0].value;
  value.metadata.phone_number_id = phoneNumberId;
  value.contacts[0].wa_id = from;
  value.messages[0] = { ...value.messages[0], id: messageId, from, text: { body: text } };
  return JSON.stringify(payload);
}

function whatsappStatus(messageId: string, status: string, errors?: object[]) {
  const payload = JSON.parse(fixture('whatsapp', 'statuses.json'));
  payload.entry[0].changes[0].value.statuses = [
    { id: messageId, status, timestamp: '1750263773', recipient_id: '16505551234', ...(errors ? { errors } : {}) },
  ];
  return JSON.stringify(payload);
}

describe('worker: received → processed', () => {
  it('turns a WhatsApp text into a contact, a thread and a message, and marks the row processed', async () => {
    const id = await deliverWhatsapp(fixture('whatsapp', 'text-message.json'));
    const row = await settled(id);
    expect(row).toMatchObject({
      status: 'processed',
      app_id: tenant.workspace.appId,
      attempt_count: 1,
      last_error: null,
      next_retry_at: null,
    });
    expect(row.processed_at).toBeInstanceOf(Date);
    const message = await ctx.deps.db
      .selectFrom('messages')
      .selectAll()
      .where('external_id', '=', 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=')
      .executeTakeFirstOrThrow();
    expect(message).toMatchObject({
      direction: 'inbound',
      status: 'received',
      text: 'Does it come in another color?',
      connection_id: whatsapp.id,
      workspace_id: tenant.workspace.id,
    });
    const thread = await ctx.deps.db.selectFrom('threads').selectAll().where('id', '=', message.thread_id).executeTakeFirstOrThrow();
    expect(thread).toMatchObject({ connection_id: whatsapp.id, last_message_preview: 'Does it come in another color?', status: 'open' });
    const handle = await ctx.deps.db
      .selectFrom('contact_handles')
      .selectAll()
      .where('contact_id', '=', thread.contact_id)
      .executeTakeFirstOrThrow();
    expect(handle).toMatchObject({ integration_key: 'whatsapp', external_id: '16505551234' });
    const contact = await ctx.deps.db.selectFrom('contacts').selectAll().where('id', '=', thread.contact_id).executeTakeFirstOrThrow();
    expect(contact.name).toBe('Sheena Nelson');
  });

  it("has the worker's search indexer parse a processed message's words after its batch", async () => {
    const id = await deliverWhatsapp(whatsappText('wamid.indexed', '16505550199', 'the capybara parcel'));
    expect((await settled(id)).status).toBe('processed');
    const vector = await waitFor(async () => {
      const { rows } = await sql<{ v: string | null }>`
        SELECT search_vector::text AS v FROM messages WHERE external_id = ${'wamid.indexed'}`.execute(ctx.deps.db);
      return rows[0]?.v;
    }, 'the message indexed for search');
    expect(vector).toContain("'capybara'");
  });

  it("yields one message for a provider's duplicate delivery, and reuses the contact's open thread", async () => {
    const first = whatsappText('wamid.dup-1', '447700900001', 'first');
    const a = await deliverWhatsapp(first);
    const b = await deliverWhatsapp(first);
    await settled(a);
    await settled(b);
    const second = await deliverWhatsapp(whatsappText('wamid.dup-2', '447700900001', 'second'));
    await settled(second);
    const messages = await ctx.deps.db
      .selectFrom('messages')
      .selectAll()
      .where('external_id', 'in', ['wamid.dup-1', 'wamid.dup-2'])
      .execute();
    expect(messages).toHaveLength(2);
    expect(new Set(messages.map((m) => m.thread_id)).size).toBe(1);
    const thread = await ctx.deps.db.selectFrom('threads').selectAll().where('id', '=', messages[0]!.thread_id).executeTakeFirstOrThrow();
    expect(thread.last_message_preview).toBe('second');
  });

  it("cuts a thread's preview at 140 characters without splitting an emoji in two", async () => {
    // The emoji's two UTF-16 halves sit at units 139 and 140: a cut there would leave one half.
    const first = await settled(await deliverWhatsapp(whatsappText('wamid.emoji-1', '447700900077', `${'a'.repeat(139)}😀 new`)));
    const again = await settled(await deliverWhatsapp(whatsappText('wamid.emoji-2', '447700900077', `${'b'.repeat(139)}😀 again`)));
    expect([first.status, again.status]).toEqual(['processed', 'processed']);
    const message = await ctx.deps.db
      .selectFrom('messages')
      .select('thread_id')
      .where('external_id', '=', 'wamid.emoji-1')
      .executeTakeFirstOrThrow();
    const thread = await ctx.deps.db
      .selectFrom('threads')
      .select('last_message_preview')
      .where('id', '=', message.thread_id)
      .executeTakeFirstOrThrow();
    expect(thread.last_message_preview).toBe(`${'b'.repeat(139)}😀`);
  });

  it('reconciles receipts: read implies delivered, a status never moves backwards, failed keeps the error', async () => {
    await makeOutboundMessage(ctx.deps, whatsapp, 'wamid.out-a', 'sent');
    await makeOutboundMessage(ctx.deps, whatsapp, 'wamid.out-b', 'sent');
    const statusOf = async (externalId: string) =>
      await ctx.deps.db.selectFrom('messages').select(['status', 'error']).where('external_id', '=', externalId).executeTakeFirstOrThrow();

    await settled(await deliverWhatsapp(whatsappStatus('wamid.out-a', 'read')));
    expect((await statusOf('wamid.out-a')).status).toBe('read');
    await settled(await deliverWhatsapp(whatsappStatus('wamid.out-a', 'delivered')));
    expect((await statusOf('wamid.out-a')).status).toBe('read');
    await settled(await deliverWhatsapp(whatsappStatus('wamid.out-a', 'failed', [{ code: 131026, title: 'Message undeliverable' }])));
    expect(await statusOf('wamid.out-a')).toEqual({ status: 'read', error: null });

    await settled(
      await deliverWhatsapp(
        whatsappStatus('wamid.out-b', 'failed', [{ code: 131047, title: 'Re-engagement message', message: 'More than 24 hours' }]),
      ),
    );
    expect(await statusOf('wamid.out-b')).toEqual({ status: 'failed', error: '131047: Re-engagement message: More than 24 hours' });
    await settled(await deliverWhatsapp(whatsappStatus('wamid.out-b', 'delivered')));
    expect((await statusOf('wamid.out-b')).status).toBe('failed');
  });

  it("keeps at most 1,000 characters of a provider's error, so a long one neither bloats the row nor breaks the realtime event", async () => {
    await makeOutboundMessage(ctx.deps, whatsapp, 'wamid.out-long', 'sent');
    await makeOutboundMessage(ctx.deps, whatsapp, 'wamid.out-huge', 'sent');
    const long = await settled(
      await deliverWhatsapp(whatsappStatus('wamid.out-long', 'failed', [{ code: 1, title: 'T', message: 'e'.repeat(5000) }])),
    );
    expect(long.status).toBe('processed');
    const message = await ctx.deps.db
      .selectFrom('messages')
      .select(['status', 'error'])
      .where('external_id', '=', 'wamid.out-long')
      .executeTakeFirstOrThrow();
    expect(message.status).toBe('failed');
    expect(message.error).toBe(`1: T: ${'e'.repeat(994)}`);
    expect(message.error).toHaveLength(1000);
    // 9,000 characters would not fit in the message.updated NOTIFY (8000 bytes) uncut.
    const huge = await settled(
      await deliverWhatsapp(whatsappStatus('wamid.out-huge', 'failed', [{ code: 2, title: 'T', message: 'h'.repeat(9000) }])),
    );
    expect(huge).toMatchObject({ status: 'processed', last_error: null });
    const hugeMessage = await ctx.deps.db
      .selectFrom('messages')
      .select('error')
      .where('external_id', '=', 'wamid.out-huge')
      .executeTakeFirstOrThrow();
    expect(hugeMessage.error).toHaveLength(1000);
  });

  it('processes a status for an unknown message as nothing to do', async () => {
    const row = await settled(await deliverWhatsapp(whatsappStatus('wamid.never-sent', 'delivered')));
    expect(row.status).toBe('processed');
  });

  it("takes WhatsApp's deleted and warning statuses as no news, and still applies the messages beside them", async () => {
    await makeOutboundMessage(ctx.deps, whatsapp, 'wamid.out-deleted', 'delivered');
    const payload = JSON.parse(whatsappText('wamid.beside-deleted', '16505550142', 'still here'));
    payload.entry[0].changes[0].value.statuses = [
      { id: 'wamid.out-deleted', status: 'deleted', timestamp: '1750263773', recipient_id: '16505551234' },
      { id: 'wamid.out-deleted', status: 'warning', timestamp: '1750263774', recipient_id: '16505551234' },
    ];
    const row = await settled(await deliverWhatsapp(JSON.stringify(payload)));
    expect(row).toMatchObject({ status: 'processed', last_error: null });
    expect(await statusOf('wamid.out-deleted')).toBe('delivered');
    const beside = await ctx.deps.db
      .selectFrom('messages')
      .select('text')
      .where('external_id', '=', 'wamid.beside-deleted')
      .executeTakeFirstOrThrow();
    expect(beside.text).toBe('still here');
  });

  it('keeps an Instagram message it cannot show as [unsupported], and adds nothing for an unsent message', async () => {
    const account = '17841400000001';
    await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'social_two.native', externalAccountId: account });
    const event = (message: object) => ({ sender: { id: '9000001' }, recipient: { id: account }, timestamp: 1763630100000, message });
    const body = JSON.stringify({
      object: 'instagram',
      entry: [
        {
          id: account,
          time: 1763630100000,
          messaging: [event({ mid: 'ig-unsupported-1', is_unsupported: true }), event({ mid: 'ig-unsent-1', is_deleted: true })],
        },
      ],
    });
    const row = await settled(await deliver('social_two.native', body, { 'x-hub-signature-256': `sha256=${sign(SECRET, body)}` }));
    expect(row).toMatchObject({ status: 'processed', last_error: null });
    const messages = await ctx.deps.db
      .selectFrom('messages')
      .select(['external_id', 'text'])
      .where('external_id', 'in', ['ig-unsupported-1', 'ig-unsent-1'])
      .execute();
    expect(messages).toEqual([{ external_id: 'ig-unsupported-1', text: '[unsupported]' }]);
  });

  it("moves an Instagram message to read by a seen receipt naming it; Messenger's watermark changes nothing", async () => {
    const account = '17841400000002';
    const instagram = await makeConnection(ctx.deps, tenant.workspace.id, {
      integrationKey: 'social_two.native',
      externalAccountId: account,
    });
    await makeOutboundMessage(ctx.deps, instagram, 'ig-out-seen-1', 'sent');
    const body = JSON.stringify({
      object: 'instagram',
      entry: [
        {
          id: account,
          time: 1763630100000,
          messaging: [
            { sender: { id: '9000002' }, recipient: { id: account }, timestamp: 1763630100000, read: { mid: 'ig-out-seen-1' } },
            { sender: { id: '9000002' }, recipient: { id: account }, timestamp: 1763630100000, read: { watermark: 1763630100000 } },
          ],
        },
      ],
    });
    const row = await settled(await deliver('social_two.native', body, { 'x-hub-signature-256': `sha256=${sign(SECRET, body)}` }));
    expect(row).toMatchObject({ status: 'processed', last_error: null });
    expect(await statusOf('ig-out-seen-1')).toBe('read');
  });

  it("ignores a mail relay's other events (deferred, click) and applies the receipts beside them", async () => {
    const mail = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'email', externalAccountId: 'support@worker.test' });
    await makeOutboundMessage(ctx.deps, mail, '<out-deferred@worker.test>', 'sent');
    const events = [
      { type: 'deferred', messageId: '<out-deferred@worker.test>', account: 'support@worker.test', reason: '421 try again later' },
      { type: 'click', url: 'https://example.org' },
      { type: 'delivered', messageId: '<out-deferred@worker.test>', account: 'support@worker.test' },
    ];
    const body = JSON.stringify({ events });
    const row = await settled(await deliver('email', body, { 'x-vendor-auth': SECRET }));
    expect(row).toMatchObject({ status: 'processed', last_error: null });
    expect(await statusOf('<out-deferred@worker.test>')).toBe('delivered');
  });

  it('takes an aggregator status it does not map (queued) as no news, and applies the events beside it', async () => {
    const aggregator = await makeConnection(ctx.deps, tenant.workspace.id, {
      integrationKey: 'aggregator',
      externalAccountId: 'agg-worker-1',
    });
    await makeOutboundMessage(ctx.deps, aggregator, 'agg-out-queued', 'sent');
    const status = (value: string) => ({
      event: 'message.status',
      accountId: 'agg-worker-1',
      data: { id: 'agg-out-queued', status: value },
    });
    const body = JSON.stringify({ events: [status('queued'), status('delivered')] });
    const row = await settled(await deliver('aggregator', body, { 'x-aggregator-signature': sign(SECRET, body) }));
    expect(row).toMatchObject({ status: 'processed', last_error: null });
    expect(await statusOf('agg-out-queued')).toBe('delivered');
  });

  it('applies an unsigned but correlatable SMS receipt to the message the sender knew, claiming no account', async () => {
    const sms = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms', externalAccountId: '+14155550100' });
    await makeOutboundMessage(ctx.deps, sms, 'SMOUTBOUND00000000000000000000001', 'sent');
    const body = fixture('sms', 'delivered.json');
    const id = await deliver('sms', body, {});
    const row = await settled(id);
    // how it was accepted is a column of its own; the provider's payload is left as it came
    expect(row).toMatchObject({ status: 'processed', verification: 'correlated', payload_json: null });
    expect(await statusOf('SMOUTBOUND00000000000000000000001')).toBe('delivered');
    // unsigned and uncorrelatable: refused
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/webhooks/sms',
      headers: { 'content-type': 'application/json' },
      payload: body.replace('00000000000000000000001', '99999999999999999999999'),
    });
    expect(res.statusCode).toBe(401);
  });
});

describe('worker: a delivery naming accounts of several workspaces', () => {
  /** One WhatsApp body whose entries name each of `accounts`, one message each. */
  function spanning(prefix: string, accounts: string[]) {
    const payload = JSON.parse(whatsappText(`${prefix}-0`, '447700900010', 'to 0', accounts[0]));
    for (const [i, account] of accounts.slice(1).entries()) {
      payload.entry.push(JSON.parse(whatsappText(`${prefix}-${i + 1}`, '447700900010', `to ${i + 1}`, account)).entry[0]);
    }
    return JSON.stringify(payload);
  }
  const get = (url: string, headers: Record<string, string>) => ctx.app.inject({ method: 'GET', url, headers });
  const requeue = (id: string, headers: Record<string, string>) =>
    ctx.app.inject({ method: 'POST', url: `/v1/admin/webhook-inbox/${id}/requeue`, headers });
  const operatorRequeue = (id: string) =>
    ctx.app.inject({ method: 'POST', url: `/v1/operator/webhook-inbox/${id}/requeue`, headers: adminHeaders() });
  const ids = (res: { json(): { data: { id: string }[] } }) => res.json().data.map((r) => r.id);

  it("applies each workspace's events, attributes the row to no app, and shows it to the operator only", async () => {
    const id = await deliverWhatsapp(spanning('wamid.span', ['106540352242922', '207000000002']));
    const row = await settled(id);
    expect(row).toMatchObject({ status: 'processed', app_id: null });
    const messages = await ctx.deps.db
      .selectFrom('messages')
      .select(['external_id', 'workspace_id', 'connection_id'])
      .where('external_id', 'like', 'wamid.span-%')
      .orderBy('external_id')
      .execute();
    expect(messages).toEqual([
      { external_id: 'wamid.span-0', workspace_id: tenant.workspace.id, connection_id: whatsapp.id },
      { external_id: 'wamid.span-1', workspace_id: other.workspace.id, connection_id: otherWhatsapp.id },
    ]);
    for (const t of [tenant, other]) {
      expect(ids(await get('/v1/admin/webhook-inbox?status=processed&limit=500', t.headers))).not.toContain(id);
      expect((await get(`/v1/admin/webhook-inbox/${id}`, t.headers)).statusCode).toBe(404);
    }
    expect(ids(await get('/v1/operator/webhook-inbox?status=processed&limit=200', adminHeaders()))).toContain(id);
    expect((await get(`/v1/operator/webhook-inbox/${id}`, adminHeaders())).json().data).toMatchObject({
      id,
      appId: null,
      rawBody: expect.stringContaining('wamid.span-1'),
    });
  });

  it('lets only the operator requeue such a row once it failed, and then applies it', async () => {
    const id = await deliverWhatsapp(spanning('wamid.spanfail', ['106540352242922', '207000000002', '207000000003']));
    expect(await settled(id)).toMatchObject({ status: 'failed', app_id: null });
    for (const t of [tenant, other]) {
      expect(ids(await get('/v1/admin/webhook-inbox?status=failed&limit=500', t.headers))).not.toContain(id);
      const res = await requeue(id, t.headers);
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
    expect(ids(await get('/v1/operator/webhook-inbox?status=failed&limit=200', adminHeaders()))).toContain(id);
    await makeConnection(ctx.deps, other.workspace.id, { integrationKey: 'whatsapp', externalAccountId: '207000000003' });
    const res = await operatorRequeue(id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ id, status: 'failed' });
    const row = await waitFor(async () => {
      const r = await ctx.deps.db.selectFrom('webhook_inbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      return r.status === 'processed' ? r : undefined;
    }, 'the requeued delivery to be processed');
    expect(row.app_id).toBeNull();
    const applied = await ctx.deps.db
      .selectFrom('messages')
      .select('workspace_id')
      .where('external_id', 'like', 'wamid.spanfail-%')
      .execute();
    expect(applied.map((m) => m.workspace_id).sort()).toEqual([tenant.workspace.id, other.workspace.id, other.workspace.id].sort());
  });

  it('takes away an attribution stored before the delivery was known to span several apps', async () => {
    // A row an older rule gave to the first app that resolved.
    const id = uuid7();
    await ctx.deps.db
      .insertInto('webhook_inbox')
      .values({
        id,
        integration_key: 'whatsapp',
        app_id: tenant.workspace.appId,
        event: null,
        raw_body: spanning('wamid.legacy', ['106540352242922', '207000000002']),
        payload_json: null,
        status: 'failed',
        attempt_count: 1,
      })
      .execute();
    expect((await operatorRequeue(id)).statusCode).toBe(200);
    const row = await waitFor(async () => {
      const r = await ctx.deps.db.selectFrom('webhook_inbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      return r.status === 'processed' ? r : undefined;
    }, 'the legacy row to be processed');
    expect(row.app_id).toBeNull();
    expect((await get(`/v1/admin/webhook-inbox/${id}`, tenant.headers)).statusCode).toBe(404);
  });

  it("gives a delivery mixing one app's account with an account nobody connected to that app, so its admin can requeue it", async () => {
    const id = await deliverWhatsapp(spanning('wamid.halfknown', ['207000000099', '106540352242922']));
    expect(await settled(id)).toMatchObject({
      status: 'failed',
      app_id: tenant.workspace.appId,
      last_error: expect.stringContaining('207000000099'),
    });
    expect(ids(await get('/v1/admin/webhook-inbox?status=failed&limit=500', tenant.headers))).toContain(id);
    expect(ids(await get('/v1/admin/webhook-inbox?status=failed&limit=500', other.headers))).not.toContain(id);
    await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'whatsapp', externalAccountId: '207000000099' });
    expect((await requeue(id, tenant.headers)).statusCode).toBe(200);
    const row = await waitFor(async () => {
      const r = await ctx.deps.db.selectFrom('webhook_inbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      return r.status === 'processed' ? r : undefined;
    }, 'the requeued delivery to be processed');
    expect(row.app_id).toBe(tenant.workspace.appId);
  });

  it('still attributes a body whose accounts all belong to one app to that app', async () => {
    const id = await deliverWhatsapp(spanning('wamid.oneapp', ['106540352242922', '106540352242923']));
    expect(await settled(id)).toMatchObject({ status: 'processed', app_id: tenant.workspace.appId });
    const messages = await ctx.deps.db
      .selectFrom('messages')
      .select('connection_id')
      .where('external_id', 'like', 'wamid.oneapp-%')
      .orderBy('external_id')
      .execute();
    expect(messages.map((m) => m.connection_id)).toEqual([whatsapp.id, secondLine.id]);
    expect(ids(await get('/v1/admin/webhook-inbox?status=processed&limit=500', tenant.headers))).toContain(id);
  });
});

describe('worker start', () => {
  it('schedules maintenance every ten minutes', async () => {
    const { rows } = await sql<{ name: string; cron: string }>`SELECT name, cron FROM pgboss.schedule`.execute(ctx.deps.db);
    expect(rows).toContainEqual({ name: 'maintenance', cron: '*/10 * * * *' });
  });
});

describe('worker: jobs', () => {
  /** Stores received rows the way ingestion does, without queueing them. */
  async function storeReceived(bodies: string[]): Promise<string[]> {
    const ids = bodies.map(() => uuid7());
    await ctx.deps.db
      .insertInto('webhook_inbox')
      .values(
        bodies.map((raw_body, i) => ({
          id: ids[i]!,
          integration_key: 'whatsapp',
          event: 'messages',
          raw_body,
          verification: 'signed',
          status: 'received',
        })),
      )
      .execute();
    return ids;
  }

  it('applies every delivery of a job that carries more than one transaction holds', async () => {
    const count = PROCESS_BATCH + 7;
    const ids = await storeReceived(
      Array.from({ length: count }, (_, i) => whatsappText(`wamid.batch-job-${i}`, `4477009${String(i).padStart(5, '0')}`, `batch ${i}`)),
    );
    await ctx.deps.boss.send(WEBHOOK_QUEUE, { ids });
    await waitFor(async () => {
      const { rows } = await sql<{
        n: number;
      }>`SELECT count(*)::int AS n FROM webhook_inbox WHERE id = ANY(${ids}::uuid[]) AND status = 'processed'`.execute(ctx.deps.db);
      return rows[0]!.n === count || undefined;
    }, `${count} deliveries of one job to be processed`);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM messages WHERE external_id LIKE 'wamid.batch-job-%'`.execute(
      ctx.deps.db,
    );
    expect(rows[0]!.n).toBe(count);
  });

  it('still processes a job queued before jobs carried batches ({ id })', async () => {
    const [id] = await storeReceived([whatsappText('wamid.single-shape', '447700900077', 'queued by an older version')]);
    await ctx.deps.boss.send(WEBHOOK_QUEUE, { id });
    expect((await settled(id!)).status).toBe('processed');
  });
});

describe('worker: failures', () => {
  it('fails a delivery for an unknown account with a lastError, keeps the app of what resolved, and schedules a retry in 60 s', async () => {
    const payload = JSON.parse(whatsappText('wamid.mixed-1', '447700900002', 'known account'));
    const second = JSON.parse(whatsappText('wamid.mixed-2', '447700900002', 'unknown account', '999000999'));
    payload.entry.push(second.entry[0]);
    const id = await deliverWhatsapp(JSON.stringify(payload));
    const row = await settled(id);
    // The one app that resolved keeps it (set as soon as its connection resolves), so
    // its admin can requeue it once the other account is connected.
    expect(row).toMatchObject({ status: 'failed', attempt_count: 1, app_id: tenant.workspace.appId, processed_at: null });
    expect(row.last_error).toBe('no connection for whatsapp account "999000999": connect it, then requeue');
    expect(row.next_retry_at!.getTime() - row.updated_at.getTime()).toBe(60_000);
    // nothing of the delivery was applied: its events apply together or not at all
    expect(
      await ctx.deps.db.selectFrom('messages').select('id').where('external_id', 'in', ['wamid.mixed-1', 'wamid.mixed-2']).execute(),
    ).toEqual([]);
    const { rows: jobs } = await sql<{ start_after: Date }>`
      SELECT start_after FROM pgboss.job WHERE name = ${WEBHOOK_QUEUE} AND data->'ids' ? ${id} AND state = 'created'`.execute(ctx.deps.db);
    expect(jobs).toHaveLength(1);
    expect(Math.abs(jobs[0]!.start_after.getTime() - row.next_retry_at!.getTime())).toBeLessThan(1000);
  });

  it('fails a payload the normaliser cannot read with a lastError that says why', async () => {
    const id = await deliverWhatsapp(
      JSON.stringify({ object: 'whatsapp_business_account', entry: [{ changes: [{ field: 'messages', value: { metadata: {} } }] }] }),
    );
    const row = await settled(id);
    expect(row.status).toBe('failed');
    expect(row.last_error).toBe('cannot read whatsapp payload: entry[0].changes[0].value.metadata.phone_number_id is missing');
  });
});

describe('metrics', () => {
  it('counts deliveries accepted and rejected per integration, processing outcomes, latency and dead letters', async () => {
    await ctx.app.inject({
      method: 'POST',
      url: '/webhooks/whatsapp',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': 'sha256=bad' },
      payload: '{}',
    });
    await sql`INSERT INTO webhook_inbox (id, integration_key, raw_body, status) VALUES (gen_random_uuid(), 'sms', '{}', 'dead_letter')`.execute(
      ctx.deps.db,
    );
    const text = (await ctx.app.inject({ method: 'GET', url: '/metrics' })).body;
    const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? NaN);
    expect(value(/inbox_webhook_deliveries_total\{integration="whatsapp",outcome="accepted"\} (\d+)/)).toBeGreaterThan(5);
    expect(value(/inbox_webhook_deliveries_total\{integration="whatsapp",outcome="rejected"\} (\d+)/)).toBe(1);
    expect(value(/inbox_webhook_processing_total\{outcome="processed"\} (\d+)/)).toBeGreaterThan(5);
    expect(value(/inbox_webhook_processing_total\{outcome="failed"\} (\d+)/)).toBeGreaterThanOrEqual(2);
    expect(value(/inbox_webhook_retries_scheduled_total (\d+)/)).toBeGreaterThanOrEqual(2);
    expect(value(/inbox_webhook_processing_latency_seconds_count (\d+)/)).toBeGreaterThan(5);
    expect(value(/inbox_webhook_dead_letters (\d+)/)).toBe(1);
  });
});
