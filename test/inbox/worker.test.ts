import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { WEBHOOK_QUEUE } from '../../src/inbox/inbox.queue.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeOutboundMessage, makeTenant } from '../helpers/factories.js';
import { fixture, sign, waitFor } from '../helpers/webhooks.js';

const SECRET = 'worker-test-secret';
const ctx = await useTestContext({
  workers: true,
  env: { INBOX_INTEGRATIONS: JSON.stringify({ whatsapp: { webhookSecret: SECRET }, sms: { webhookSecret: SECRET }, 'social_one.native': { appSecret: SECRET } }) },
});
const tenant = await makeTenant(ctx.deps);
const whatsapp = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'whatsapp', externalAccountId: '106540352242922' });

async function deliver(key: string, body: string, headers: Record<string, string>): Promise<string> {
  const before = new Set((await ctx.deps.db.selectFrom('webhook_inbox').select('id').execute()).map((r) => r.id));
  const res = await ctx.app.inject({ method: 'POST', url: `/webhooks/${key}`, headers: { 'content-type': 'application/json', ...headers }, payload: body });
  expect(res.statusCode, res.body).toBe(200);
  const rows = await ctx.deps.db.selectFrom('webhook_inbox').select('id').execute();
  return rows.map((r) => r.id).find((id) => !before.has(id))!;
}

const deliverWhatsapp = (body: string) => deliver('whatsapp', body, { 'x-hub-signature-256': `sha256=${sign(SECRET, body)}` });

/** Waits until the worker has moved the row out of `received`. */
async function settled(id: string) {
  return waitFor(async () => {
    const row = await ctx.deps.db.selectFrom('webhook_inbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    return row.status === 'received' ? undefined : row;
  }, `delivery ${id} to be processed`);
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
  payload.entry[0].changes[0].value.statuses = [{ id: messageId, status, timestamp: '1750263773', recipient_id: '16505551234', ...(errors ? { errors } : {}) }];
  return JSON.stringify(payload);
}

describe('worker: received → processed', () => {
  it('turns a WhatsApp text into a contact, a thread and a message, and marks the row processed', async () => {
    const id = await deliverWhatsapp(fixture('whatsapp', 'text-message.json'));
    const row = await settled(id);
    expect(row).toMatchObject({ status: 'processed', app_id: tenant.workspace.appId, attempt_count: 1, last_error: null, next_retry_at: null });
    expect(row.processed_at).toBeInstanceOf(Date);
    const message = await ctx.deps.db.selectFrom('messages').selectAll().where('external_id', '=', 'wamid.HBgLMTY1MDM4Nzk0MzkVAgASGBQzQTRBNjU5OUFFRTAzODEwMTQ0RgA=').executeTakeFirstOrThrow();
    expect(message).toMatchObject({ direction: 'inbound', status: 'received', text: 'Does it come in another color?', connection_id: whatsapp.id, workspace_id: tenant.workspace.id });
    const thread = await ctx.deps.db.selectFrom('threads').selectAll().where('id', '=', message.thread_id).executeTakeFirstOrThrow();
    expect(thread).toMatchObject({ connection_id: whatsapp.id, last_message_preview: 'Does it come in another color?', status: 'open' });
    const handle = await ctx.deps.db.selectFrom('contact_handles').selectAll().where('contact_id', '=', thread.contact_id).executeTakeFirstOrThrow();
    expect(handle).toMatchObject({ integration_key: 'whatsapp', external_id: '16505551234' });
    const contact = await ctx.deps.db.selectFrom('contacts').selectAll().where('id', '=', thread.contact_id).executeTakeFirstOrThrow();
    expect(contact.name).toBe('Sheena Nelson');
  });

  it("yields one message for a provider's duplicate delivery, and reuses the contact's open thread", async () => {
    const first = whatsappText('wamid.dup-1', '447700900001', 'first');
    const a = await deliverWhatsapp(first);
    const b = await deliverWhatsapp(first);
    await settled(a);
    await settled(b);
    const second = await deliverWhatsapp(whatsappText('wamid.dup-2', '447700900001', 'second'));
    await settled(second);
    const messages = await ctx.deps.db.selectFrom('messages').selectAll().where('external_id', 'in', ['wamid.dup-1', 'wamid.dup-2']).execute();
    expect(messages).toHaveLength(2);
    expect(new Set(messages.map((m) => m.thread_id)).size).toBe(1);
    const thread = await ctx.deps.db.selectFrom('threads').selectAll().where('id', '=', messages[0]!.thread_id).executeTakeFirstOrThrow();
    expect(thread.last_message_preview).toBe('second');
  });

  it('reconciles receipts: read implies delivered, a status never moves backwards, failed keeps the error', async () => {
    await makeOutboundMessage(ctx.deps, whatsapp, 'wamid.out-a', 'sent');
    await makeOutboundMessage(ctx.deps, whatsapp, 'wamid.out-b', 'sent');
    const statusOf = async (externalId: string) =>
      (await ctx.deps.db.selectFrom('messages').select(['status', 'error']).where('external_id', '=', externalId).executeTakeFirstOrThrow());

    await settled(await deliverWhatsapp(whatsappStatus('wamid.out-a', 'read')));
    expect((await statusOf('wamid.out-a')).status).toBe('read');
    await settled(await deliverWhatsapp(whatsappStatus('wamid.out-a', 'delivered')));
    expect((await statusOf('wamid.out-a')).status).toBe('read');
    await settled(await deliverWhatsapp(whatsappStatus('wamid.out-a', 'failed', [{ code: 131026, title: 'Message undeliverable' }])));
    expect(await statusOf('wamid.out-a')).toEqual({ status: 'read', error: null });

    await settled(await deliverWhatsapp(whatsappStatus('wamid.out-b', 'failed', [{ code: 131047, title: 'Re-engagement message', message: 'More than 24 hours' }])));
    expect(await statusOf('wamid.out-b')).toEqual({ status: 'failed', error: '131047: Re-engagement message: More than 24 hours' });
    await settled(await deliverWhatsapp(whatsappStatus('wamid.out-b', 'delivered')));
    expect((await statusOf('wamid.out-b')).status).toBe('failed');
  });

  it('processes a status for an unknown message as nothing to do', async () => {
    const row = await settled(await deliverWhatsapp(whatsappStatus('wamid.never-sent', 'delivered')));
    expect(row.status).toBe('processed');
  });

  it('applies an unsigned but correlatable SMS receipt to the message the sender knew, claiming no account', async () => {
    const sms = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms', externalAccountId: '+14155550100' });
    await makeOutboundMessage(ctx.deps, sms, 'SMOUTBOUND00000000000000000000001', 'sent');
    const body = fixture('sms', 'delivered.json');
    const id = await deliver('sms', body, {});
    const row = await settled(id);
    expect(row.status).toBe('processed');
    const message = await ctx.deps.db.selectFrom('messages').select('status').where('external_id', '=', 'SMOUTBOUND00000000000000000000001').executeTakeFirstOrThrow();
    expect(message.status).toBe('delivered');
    // unsigned and uncorrelatable: refused
    const res = await ctx.app.inject({ method: 'POST', url: '/webhooks/sms', headers: { 'content-type': 'application/json' }, payload: body.replace('00000000000000000000001', '99999999999999999999999') });
    expect(res.statusCode).toBe(401);
  });
});

describe('worker start', () => {
  it('schedules maintenance every ten minutes', async () => {
    const { rows } = await sql<{ name: string; cron: string }>`SELECT name, cron FROM pgboss.schedule`.execute(ctx.deps.db);
    expect(rows).toContainEqual({ name: 'maintenance', cron: '*/10 * * * *' });
  });
});

describe('worker: failures', () => {
  it('fails a delivery for an unknown account with a lastError, keeps the app of what resolved, and schedules a retry in 60 s', async () => {
    const payload = JSON.parse(whatsappText('wamid.mixed-1', '447700900002', 'known account'));
    const second = JSON.parse(whatsappText('wamid.mixed-2', '447700900002', 'unknown account', '999000999'));
    payload.entry.push(second.entry[0]);
    const id = await deliverWhatsapp(JSON.stringify(payload));
    const row = await settled(id);
    expect(row).toMatchObject({ status: 'failed', attempt_count: 1, app_id: tenant.workspace.appId, processed_at: null });
    expect(row.last_error).toBe('no connection for whatsapp account "999000999": connect it, then requeue');
    expect(row.next_retry_at!.getTime() - row.updated_at.getTime()).toBe(60_000);
    // nothing of the delivery was applied: its events apply together or not at all
    expect(await ctx.deps.db.selectFrom('messages').select('id').where('external_id', 'in', ['wamid.mixed-1', 'wamid.mixed-2']).execute()).toEqual([]);
    const { rows: jobs } = await sql<{ start_after: Date }>`
      SELECT start_after FROM pgboss.job WHERE name = ${WEBHOOK_QUEUE} AND data->>'id' = ${id} AND state = 'created'`.execute(ctx.deps.db);
    expect(jobs).toHaveLength(1);
    expect(Math.abs(jobs[0]!.start_after.getTime() - row.next_retry_at!.getTime())).toBeLessThan(1000);
  });

  it('fails a payload the normaliser cannot read with a lastError that says why', async () => {
    const id = await deliverWhatsapp(JSON.stringify({ object: 'whatsapp_business_account', entry: [{ changes: [{ field: 'messages', value: { metadata: {} } }] }] }));
    const row = await settled(id);
    expect(row.status).toBe('failed');
    expect(row.last_error).toBe('cannot read whatsapp payload: entry[0].changes[0].value.metadata.phone_number_id is missing');
  });
});

describe('metrics', () => {
  it('counts deliveries accepted and rejected per integration, processing outcomes, latency and dead letters', async () => {
    await ctx.app.inject({ method: 'POST', url: '/webhooks/whatsapp', headers: { 'content-type': 'application/json', 'x-hub-signature-256': 'sha256=bad' }, payload: '{}' });
    await sql`INSERT INTO webhook_inbox (id, integration_key, raw_body, status) VALUES (gen_random_uuid(), 'sms', '{}', 'dead_letter')`.execute(ctx.deps.db);
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
