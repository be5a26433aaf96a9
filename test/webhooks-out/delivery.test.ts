import { createHmac } from 'node:crypto';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { OUTBOUND_QUEUE } from '../../src/webhooks-out/outbound.enqueue.js';
import { writeOutbox } from '../../src/webhooks-out/outbox.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { makeWidget, startVisitor, visitorSays } from '../helpers/livechat.js';
import { type Received, startReceiver } from '../helpers/receiver.js';
import { deliverSigned, fixture, waitFor } from '../helpers/webhooks.js';

const WA_SECRET = 'outbound-whatsapp-secret';
const PHONE_ID = '106540352242922';
const fake = await startFakeProviders();
const receiver = await startReceiver();
afterAll(() => Promise.all([fake.close(), receiver.close()]));
const ctx = await useTestContext({
  workers: true,
  env: {
    INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
    INBOX_INTEGRATIONS: JSON.stringify({
      whatsapp: { webhookSecret: WA_SECRET, apiBaseUrl: fake.baseUrls.whatsapp, accessToken: 'EAAG-outbound' },
    }),
  },
});

beforeEach(() => {
  receiver.received.length = 0;
  receiver.behave({ status: 200 });
});

/** A workspace with a WhatsApp number and one endpoint at `path` on the receiver. */
async function workspace(endpoint: object = {}, path = `/w${Math.random().toString(36).slice(2)}`) {
  const tenant = await makeTenant(ctx.deps);
  await makeConnection(ctx.deps, tenant.workspace.id, {
    integrationKey: 'whatsapp',
    externalAccountId: `${PHONE_ID}${tenant.workspace.id}`,
  });
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/v1/webhook-endpoints',
    headers: tenant.headers,
    payload: { url: `${receiver.url}${path}`, ...endpoint },
  });
  expect(res.statusCode).toBe(201);
  const created = res.json().data as { id: number; secret: string };
  return { tenant, endpoint: created, path, phoneId: `${PHONE_ID}${tenant.workspace.id}` };
}
type Workspace = Awaited<ReturnType<typeof workspace>>;

/** A signed inbound WhatsApp text from `from` to the workspace's number. */
async function inbound(w: Workspace, from: string, messageId: string) {
  const payload = JSON.parse(fixture('whatsapp', 'text-message.json'));
  const value = payload.entry[0].changes[0].value;
  value.metadata.phone_number_id = w.phoneId;
  value.contacts[0].wa_id = from;
  value.messages[0].from = from;
  value.messages[0].id = messageId;
  // Written just now, so an agent may still reply (WhatsApp's 24-hour window).
  value.messages[0].timestamp = String(Math.floor(Date.now() / 1000));
  const res = await deliverSigned(ctx, 'whatsapp', payload);
  expect(res.statusCode).toBe(200);
}

const at = (path: string) => receiver.received.filter((r) => r.path === path);
const deliveries = async (w: Workspace, query = '') =>
  (
    await ctx.app.inject({ method: 'GET', url: `/v1/webhook-endpoints/${w.endpoint.id}/deliveries${query}`, headers: w.tenant.headers })
  ).json().data as {
    id: number;
    eventId: string;
    eventType: string;
    status: string;
    nextAttemptAt: string | null;
    attempts: { statusCode: number | null; error: string | null; attemptedAt: string }[];
  }[];
const ping = (w: Workspace) =>
  ctx.app.inject({ method: 'POST', url: `/v1/webhook-endpoints/${w.endpoint.id}/test`, headers: w.tenant.headers });

/** The receiver's side of the service scheme, from the raw bytes: the one `sha256=`, checked in constant time. */
function serviceSignatureValid(secret: string, r: Received): boolean {
  const ts = r.headers['x-service-timestamp'] as string;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${ts}.`).update(r.raw).digest('hex')}`);
  const got = Buffer.from(String(r.headers['x-service-signature']));
  return (
    got.length === expected.length &&
    createHmac('sha256', 'k').update(got).digest().equals(createHmac('sha256', 'k').update(expected).digest())
  );
}

describe('outbound webhooks', () => {
  it('signs with the service scheme over "<timestamp>.<raw body>" and names the event and delivery', async () => {
    const w = await workspace();
    expect((await ping(w)).statusCode).toBe(202);
    const [r] = await waitFor(async () => (at(w.path).length > 0 ? at(w.path) : undefined), 'the ping');
    expect(serviceSignatureValid(w.endpoint.secret, r!)).toBe(true);
    expect(serviceSignatureValid(`${w.endpoint.secret}x`, r!)).toBe(false);
    expect(String(r!.headers['x-service-signature'])).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(r!.headers).not.toHaveProperty('x-service-signature-previous');
    expect(Math.abs(Number(r!.headers['x-service-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
    expect(r!.headers['x-service-event']).toBe('ping');
    expect(r!.headers['content-type']).toBe('application/json');
    expect(r!.headers['user-agent']).toMatch(/^inbox-webhooks\/\d+\.\d+\.\d+/);
    expect(r!.json).toMatchObject({ type: 'ping', workspaceId: w.tenant.workspace.id });
    expect(r!.json.id).toMatch(/^evt_[0-9a-f]{32}$/);
    const [d] = await waitFor(
      async () => ((await deliveries(w))[0]?.status === 'succeeded' ? deliveries(w) : undefined),
      'the delivery to succeed',
    );
    expect(r!.headers['x-service-delivery']).toBe(String(d!.id));
    expect(d).toMatchObject({ eventId: r!.json.id, eventType: 'ping', nextAttemptAt: null, attempts: [{ statusCode: 200, error: null }] });
  });

  it('signs with Standard Webhooks, verified by the official package', async () => {
    const w = await workspace({ signatureScheme: 'standard' });
    await ping(w);
    const [r] = await waitFor(async () => (at(w.path).length > 0 ? at(w.path) : undefined), 'the ping');
    const headers = {
      'webhook-id': r!.headers['webhook-id'] as string,
      'webhook-timestamp': r!.headers['webhook-timestamp'] as string,
      'webhook-signature': r!.headers['webhook-signature'] as string,
    };
    expect(new Webhook(w.endpoint.secret).verify(r!.raw.toString('utf8'), headers)).toMatchObject({ type: 'ping' });
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(r!.raw.toString('utf8'), headers)).toThrow();
    expect(r!.headers).not.toHaveProperty('x-service-signature');
  });

  it('sends contact.created, thread.created, message.created and thread.updated for an inbound message, with the API’s own resources', async () => {
    const w = await workspace();
    await inbound(w, '15550001', 'wamid.out-1');
    await waitFor(async () => at(w.path).length >= 4, 'four events');
    const byType = Object.fromEntries(at(w.path).map((r) => [r.json.type, r.json.data]));
    expect(Object.keys(byType).sort()).toEqual(['contact.created', 'message.created', 'thread.created', 'thread.updated']);
    const threads = (await ctx.app.inject({ method: 'GET', url: '/v1/threads', headers: w.tenant.headers })).json().data;
    const messages = (
      await ctx.app.inject({ method: 'GET', url: `/v1/threads/${threads[0].id}/messages`, headers: w.tenant.headers })
    ).json().data;
    const contacts = (await ctx.app.inject({ method: 'GET', url: '/v1/contacts', headers: w.tenant.headers })).json().data;
    expect(byType['message.created']).toEqual(messages[0]);
    expect(byType['thread.created']).toEqual({
      ...threads[0],
      lastMessageAt: byType['thread.created']!.lastMessageAt,
      lastMessagePreview: byType['thread.created']!.lastMessagePreview,
    });
    expect(byType['contact.created']).toEqual(contacts[0]);
    expect(byType['thread.updated']).toEqual(threads[0]);

    // The same contact again: one more message and its thread's update, no new thread or contact.
    await inbound(w, '15550001', 'wamid.out-2');
    await waitFor(async () => at(w.path).length >= 6, 'the second message');
    expect(
      at(w.path)
        .slice(4)
        .map((r) => r.json.type)
        .sort(),
    ).toEqual(['message.created', 'thread.updated']);
    // A provider's retry of the first message makes no event.
    await inbound(w, '15550001', 'wamid.out-1');
    await ping(w);
    await waitFor(async () => at(w.path).some((r) => r.json.type === 'ping'), 'the ping after the retry');
    expect(at(w.path).filter((r) => r.json.type === 'message.created')).toHaveLength(2);
  });

  it('sends a live chat visitor’s conversation and messages like any channel’s', async () => {
    const w = await workspace();
    const widget = await makeWidget(ctx.deps, w.tenant.workspace.id);
    const visitor = await startVisitor(ctx.app, widget.key, { name: 'Ada' });
    expect((await visitorSays(ctx.app, widget.key, visitor.token, 'is anyone there?')).statusCode).toBe(201);
    await waitFor(async () => at(w.path).some((r) => r.json.type === 'message.created'), 'the visitor’s message');
    const types = at(w.path).map((r) => r.json.type);
    expect(types).toEqual(expect.arrayContaining(['contact.created', 'thread.created', 'message.created']));
    expect(at(w.path).find((r) => r.json.type === 'thread.created')!.json.data).toMatchObject({
      id: visitor.threadId,
      integrationKey: 'livechat',
    });
    expect(at(w.path).find((r) => r.json.type === 'message.created')!.json.data).toMatchObject({
      threadId: visitor.threadId,
      direction: 'inbound',
      text: 'is anyone there?',
    });
  });

  it('sends only the events an endpoint subscribes to', async () => {
    const w = await workspace({ events: ['thread.created'] });
    await inbound(w, '15550002', 'wamid.filter-1');
    await waitFor(async () => at(w.path).length >= 1, 'thread.created');
    // A ping goes whatever the filter; once it is in, anything else would have been too.
    await ping(w);
    await waitFor(async () => at(w.path).some((r) => r.json.type === 'ping'), 'the ping');
    expect(
      at(w.path)
        .map((r) => r.json.type)
        .sort(),
    ).toEqual(['ping', 'thread.created']);
  });

  it('sends message.created for a reply and message.updated as the worker sends it and receipts arrive', async () => {
    const w = await workspace({ events: ['message.created', 'message.updated'] });
    await inbound(w, '15550003', 'wamid.reply-in');
    await waitFor(async () => at(w.path).length >= 1, 'the inbound message.created');
    const thread = (await ctx.app.inject({ method: 'GET', url: '/v1/threads', headers: w.tenant.headers })).json().data[0];
    const reply = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${thread.id}/messages`,
      headers: w.tenant.headers,
      payload: { text: 'hello from the agent' },
    });
    expect(reply.statusCode).toBe(202);
    const id = reply.json().data.id;
    const updated = await waitFor(
      async () => at(w.path).find((r) => r.json.type === 'message.updated' && r.json.data.id === id),
      'message.updated',
    );
    expect(updated.json.data).toMatchObject({ id, direction: 'outbound', status: 'sent', text: 'hello from the agent' });
    expect(at(w.path).find((r) => r.json.type === 'message.created' && r.json.data.id === id)!.json.data).toMatchObject({
      status: 'queued',
      direction: 'outbound',
    });
  });

  it('sends webhook_inbox.dead_lettered, without the body, when a delivery of the workspace is given up on', async () => {
    const w = await workspace({ events: ['webhook_inbox.dead_lettered'] });
    // One known account and one unknown: the row belongs to the workspace and fails.
    const payload = JSON.parse(fixture('whatsapp', 'text-message.json'));
    payload.entry[0].changes[0].value.metadata.phone_number_id = w.phoneId;
    const stranger = structuredClone(payload.entry[0]);
    stranger.changes[0].value.metadata.phone_number_id = '999000111';
    payload.entry.push(stranger);
    const body = JSON.stringify(payload);
    await deliverSigned(ctx, 'whatsapp', body);
    const row = await waitFor(
      () =>
        ctx.deps.db.selectFrom('webhook_inbox').selectAll().where('raw_body', '=', body).where('status', '=', 'failed').executeTakeFirst(),
      'the failed row',
    );
    // Its eighth and last attempt: seven failures behind it, and its retry job moved to now.
    await ctx.deps.db.updateTable('webhook_inbox').set({ attempt_count: 7 }).where('id', '=', row.id).execute();
    await sql`UPDATE pgboss.job SET start_after = now() WHERE state = 'created' AND data::text LIKE ${`%${row.id}%`}`.execute(ctx.deps.db);
    // Workers listening for new jobs poll for due ones only every 30 s: a new delivery wakes them now.
    await inbound(w, '15550010', 'wamid.wake-the-worker');
    const r = await waitFor(async () => at(w.path)[0], 'webhook_inbox.dead_lettered');
    expect(r.json.type).toBe('webhook_inbox.dead_lettered');
    expect(r.json.data).toMatchObject({ id: row.id, status: 'dead_letter', attemptCount: 8, integrationKey: 'whatsapp' });
    expect(r.json.data).not.toHaveProperty('rawBody');
    // The customer's message text lives only in the body, which the event does not carry.
    expect(r.raw.toString()).not.toContain(payload.entry[0].changes[0].value.messages[0].text.body);
  });

  it('sends nothing for a rolled-back change', async () => {
    const w = await workspace();
    const before = await ctx.deps.db.selectFrom('webhook_deliveries').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
    await expect(
      ctx.deps.db.transaction().execute(async (trx) => {
        await writeOutbox(
          ctx.deps.boss,
          trx,
          [{ type: 'message.created', workspaceId: w.tenant.workspace.id, data: { id: -1, text: 'never happened' } }],
          new Date(),
        );
        throw new Error('the change fails after its event was written');
      }),
    ).rejects.toThrow('the change fails');
    const after = await ctx.deps.db.selectFrom('webhook_deliveries').select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
    await ping(w);
    await waitFor(async () => at(w.path).length > 0, 'the ping');
    await waitFor(async () => (await deliveries(w))[0]?.status === 'succeeded', 'the ping to settle');
    expect(at(w.path).map((r) => r.json.type)).toEqual(['ping']);
  });

  it('retries a receiver that is down on the docs/webhooks.md, "States, retries and dead letters" schedule, and delivers once, with the same delivery id, when it is back', async () => {
    const down = await startReceiver();
    const tenant = await makeTenant(ctx.deps);
    const endpoint = (
      await ctx.app.inject({ method: 'POST', url: '/v1/webhook-endpoints', headers: tenant.headers, payload: { url: `${down.url}/hook` } })
    ).json().data;
    const w = { tenant, endpoint, path: '/hook', phoneId: '' };
    await down.stop();
    await ping(w);
    const [failed] = await waitFor(
      async () => ((await deliveries(w))[0]?.attempts.length === 1 ? deliveries(w) : undefined),
      'the first attempt',
    );
    expect(failed!.status).toBe('pending');
    expect(failed!.attempts[0]!.statusCode).toBeNull();
    expect(failed!.attempts[0]!.error).toMatch(/ECONNREFUSED/);
    expect(new Date(failed!.nextAttemptAt!).getTime() - new Date(failed!.attempts[0]!.attemptedAt).getTime()).toBeGreaterThanOrEqual(
      59_000,
    );

    await down.start();
    // The next attempt is due in a minute; the test moves its job to now instead of waiting.
    await sql`UPDATE pgboss.job SET start_after = now() WHERE name = ${OUTBOUND_QUEUE} AND state = 'created' AND data->'deliveryIds' @> ${JSON.stringify([failed!.id])}::jsonb`.execute(
      ctx.deps.db,
    );
    const [done] = await waitFor(
      async () => ((await deliveries(w))[0]?.status === 'succeeded' ? deliveries(w) : undefined),
      'the retry to succeed',
    );
    expect(done!.attempts.map((a) => a.statusCode)).toEqual([null, 200]);
    expect(down.received).toHaveLength(1);
    expect(down.received[0]!.headers['x-service-delivery']).toBe(String(failed!.id));
    await down.close();
  });

  it('disables an endpoint that answers 410 Gone at once; new events skip it; enabling it again works', async () => {
    const w = await workspace();
    receiver.behave((r) => (r.path === w.path ? { status: 410, body: 'this hook was removed' } : { status: 200 }));
    await ping(w);
    await waitFor(async () => (await deliveries(w))[0]?.status === 'failed', 'the ping to fail');
    const [d] = await deliveries(w);
    expect(d!.attempts).toEqual([expect.objectContaining({ statusCode: 410, error: 'HTTP 410: this hook was removed' })]);
    const endpoint = (
      await ctx.app.inject({ method: 'GET', url: `/v1/webhook-endpoints/${w.endpoint.id}`, headers: w.tenant.headers })
    ).json().data;
    expect(endpoint).toMatchObject({ enabled: false, disabledReason: 'the endpoint answered 410 Gone' });
    const metrics = (await ctx.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/inbox_outbound_webhook_endpoints_disabled_total\{reason="gone"\} [1-9]/);
    expect(metrics).toMatch(/inbox_outbound_webhook_deliveries_total\{outcome="failed"\} [1-9]/);
    expect(metrics).toMatch(/inbox_outbound_webhook_attempt_duration_seconds_count [1-9]/);

    await inbound(w, '15550009', 'wamid.after-410');
    await waitFor(
      () => ctx.deps.db.selectFrom('messages').select('id').where('external_id', '=', 'wamid.after-410').executeTakeFirst(),
      'the message',
    );
    expect(await deliveries(w)).toHaveLength(1);
    const redeliver = await ctx.app.inject({
      method: 'POST',
      url: `/v1/webhook-endpoints/deliveries/${(await deliveries(w, '?status=failed'))[0]!.id}/redeliver`,
      headers: w.tenant.headers,
    });
    expect(redeliver.statusCode).toBe(202); // a ping may be sent to a disabled endpoint

    receiver.behave({ status: 200 });
    await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/webhook-endpoints/${w.endpoint.id}`,
      headers: w.tenant.headers,
      payload: { enabled: true },
    });
    await inbound(w, '15550009', 'wamid.after-enable');
    await waitFor(
      async () => at(w.path).some((r) => r.json.type === 'message.created' && r.json.data.externalId === 'wamid.after-enable'),
      'delivery after re-enabling',
    );
  });

  it('never follows a redirect: the attempt fails with the 3xx and the location is not called', async () => {
    const w = await workspace();
    const elsewhere = `${w.path}-moved`;
    receiver.behave((r) => (r.path === w.path ? { status: 307, headers: { location: `${receiver.url}${elsewhere}` } } : { status: 200 }));
    await ping(w);
    const [d] = await waitFor(
      async () => ((await deliveries(w))[0]?.attempts.length === 1 ? deliveries(w) : undefined),
      'the first attempt',
    );
    expect(d!.status).toBe('pending');
    expect(d!.attempts[0]).toMatchObject({ statusCode: 307, error: expect.stringContaining('not followed') });
    expect(at(w.path)).toHaveLength(1);
    expect(at(elsewhere)).toHaveLength(0);
  });

  it("records a failing answer with a NUL in it, and every other endpoint's outcomes after it", async () => {
    const bad = await workspace();
    const good = await workspace();
    receiver.behave((r) => (r.path === bad.path ? { status: 500, body: 'broken \u0000 answer' } : { status: 200 }));
    await ping(bad);
    const [d] = await waitFor(
      async () => ((await deliveries(bad))[0]?.attempts.length === 1 ? deliveries(bad) : undefined),
      'the failed attempt to be recorded',
    );
    expect(d!.attempts[0]).toMatchObject({ statusCode: 500, error: 'HTTP 500: broken \ufffd answer' });
    await ping(good);
    await waitFor(async () => (await deliveries(good))[0]?.status === 'succeeded', "the other endpoint's ping to be recorded");
  });

  it('disables an endpoint with no success for 5 days when it fails again, with the reason', async () => {
    const w = await workspace();
    receiver.behave((r) => (r.path === w.path ? { status: 500 } : { status: 200 }));
    await ctx.deps.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: new Date(Date.now() - 5 * 24 * 3600 * 1000 - 60_000) })
      .where('id', '=', w.endpoint.id)
      .execute();
    await ping(w);
    await waitFor(async () => (await deliveries(w))[0]?.attempts.length === 1, 'the attempt');
    const endpoint = (
      await ctx.app.inject({ method: 'GET', url: `/v1/webhook-endpoints/${w.endpoint.id}`, headers: w.tenant.headers })
    ).json().data;
    expect(endpoint).toMatchObject({ enabled: false, disabledReason: 'no successful delivery for 5 days' });

    // A streak that began four days ago is not yet enough; a success ends it.
    const v = await workspace();
    await ctx.deps.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: new Date(Date.now() - 4 * 24 * 3600 * 1000) })
      .where('id', '=', v.endpoint.id)
      .execute();
    await ping(v);
    await waitFor(async () => (await deliveries(v))[0]?.status === 'succeeded', 'the success');
    const row = await ctx.deps.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', v.endpoint.id).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ enabled: true, failing_since: null });
  });

  it('keeps the 5-day streak when `enabled: true` is said again, and the reason when `enabled: false` is; only enabling resets them', async () => {
    const w = await workspace();
    const endpointUrl = `/v1/webhook-endpoints/${w.endpoint.id}`;
    const patch = (payload: object) => ctx.app.inject({ method: 'PATCH', url: endpointUrl, headers: w.tenant.headers, payload });
    const shown = async () => (await ctx.app.inject({ method: 'GET', url: endpointUrl, headers: w.tenant.headers })).json().data;
    receiver.behave((r) => (r.path === w.path ? { status: 500 } : { status: 200 }));
    await ctx.deps.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: new Date(Date.now() - 5 * 24 * 3600 * 1000 - 60_000) })
      .where('id', '=', w.endpoint.id)
      .execute();
    // A client that sends its whole configuration, `enabled: true` included, to an enabled endpoint.
    expect((await patch({ enabled: true, description: 'CRM', events: ['*'] })).statusCode).toBe(200);
    await ping(w);
    await waitFor(async () => (await deliveries(w))[0]?.attempts.length === 1, 'the attempt');
    expect(await shown()).toMatchObject({ enabled: false, disabledReason: 'no successful delivery for 5 days' });

    expect((await patch({ enabled: false, description: 'CRM' })).json().data.disabledReason).toBe('no successful delivery for 5 days');
    expect((await patch({ enabled: true })).json().data).toMatchObject({ enabled: true, disabledReason: null });
    const row = await ctx.deps.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', w.endpoint.id).executeTakeFirstOrThrow();
    expect(row.failing_since).toBeNull();
  });

  it('signs with both secrets during the grace period after a rotation: service keeps one signature per header', async () => {
    for (const scheme of ['service', 'standard'] as const) {
      const w = await workspace({ signatureScheme: scheme });
      const rotated = (
        await ctx.app.inject({
          method: 'POST',
          url: `/v1/webhook-endpoints/${w.endpoint.id}/rotate-secret?graceSeconds=3600`,
          headers: w.tenant.headers,
        })
      ).json().data;
      await ping(w);
      const r = await waitFor(async () => at(w.path)[0], 'the ping');
      if (scheme === 'service') {
        // The main header stays exactly one `sha256=<hex>`, made with the new secret; the old
        // secret's signature is only in `x-service-signature-previous`.
        expect(String(r.headers['x-service-signature'])).toMatch(/^sha256=[0-9a-f]{64}$/);
        expect(String(r.headers['x-service-signature-previous'])).toMatch(/^sha256=[0-9a-f]{64}$/);
        expect(serviceSignatureValid(rotated.secret, r)).toBe(true);
        expect(serviceSignatureValid(w.endpoint.secret, r)).toBe(false);
        const previous = { ...r, headers: { ...r.headers, 'x-service-signature': r.headers['x-service-signature-previous'] } };
        expect(serviceSignatureValid(w.endpoint.secret, previous)).toBe(true);
        expect(serviceSignatureValid(rotated.secret, previous)).toBe(false);
      } else {
        const headers = {
          'webhook-id': r.headers['webhook-id'] as string,
          'webhook-timestamp': r.headers['webhook-timestamp'] as string,
          'webhook-signature': r.headers['webhook-signature'] as string,
        };
        expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
        expect(new Webhook(rotated.secret).verify(r.raw.toString(), headers)).toMatchObject({ type: 'ping' });
        expect(new Webhook(w.endpoint.secret).verify(r.raw.toString(), headers)).toMatchObject({ type: 'ping' });
        // `v1,<new> v1,<old>`: the new secret's signature comes first.
        const [first, second] = headers['webhook-signature'].split(' ');
        const only = (signature: string) => ({ ...headers, 'webhook-signature': signature });
        expect(new Webhook(rotated.secret).verify(r.raw.toString(), only(first!))).toMatchObject({ type: 'ping' });
        expect(new Webhook(w.endpoint.secret).verify(r.raw.toString(), only(second!))).toMatchObject({ type: 'ping' });
      }
      // Without a grace period the old secret stops at once.
      const again = (
        await ctx.app.inject({
          method: 'POST',
          url: `/v1/webhook-endpoints/${w.endpoint.id}/rotate-secret?graceSeconds=0`,
          headers: w.tenant.headers,
        })
      ).json().data;
      await ping(w);
      const r2 = await waitFor(async () => at(w.path)[1], 'the second ping');
      const header = String(r2.headers[scheme === 'service' ? 'x-service-signature' : 'webhook-signature']);
      expect(header.split(' ')).toHaveLength(1);
      expect(r2.headers).not.toHaveProperty('x-service-signature-previous');
      if (scheme === 'service') expect(serviceSignatureValid(again.secret, r2)).toBe(true);
    }
  });

  it('redelivers with the same delivery id and keeps every attempt in the log', async () => {
    const w = await workspace();
    await ping(w);
    await waitFor(async () => (await deliveries(w))[0]?.status === 'succeeded', 'the first delivery');
    const [d] = await deliveries(w);
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/webhook-endpoints/deliveries/${d!.id}/redeliver`,
      headers: w.tenant.headers,
    });
    expect(res.statusCode).toBe(202);
    expect(res.json().data).toMatchObject({ id: d!.id, status: 'pending' });
    await waitFor(
      async () => (await deliveries(w))[0]?.attempts.length === 2 && (await deliveries(w))[0]?.status === 'succeeded',
      'the redelivery',
    );
    expect(at(w.path).map((r) => r.headers['x-service-delivery'])).toEqual([String(d!.id), String(d!.id)]);
    expect(at(w.path)[0]!.raw.equals(at(w.path)[1]!.raw)).toBe(true);
    const other = await makeTenant(ctx.deps);
    expect(
      (await ctx.app.inject({ method: 'POST', url: `/v1/webhook-endpoints/deliveries/${d!.id}/redeliver`, headers: other.headers }))
        .statusCode,
    ).toBe(404);
  });
});
