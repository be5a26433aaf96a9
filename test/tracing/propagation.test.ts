import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { uuid7 } from '../../src/crypto/uuid7.js';
import { startTracing, stopTracing } from '../../src/tracing/tracing.js';
import { webhookQueue } from '../../src/webhooks-in/inbox.queue.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { type ReceivedSpan, SPAN_KIND, startOtlpReceiver } from '../helpers/otlp.js';
import { fixture, sign, waitFor } from '../helpers/webhooks.js';

const SECRET = 'tracing-webhook-secret';
const ACCOUNT = '106540352242922';
const receiver = await startOtlpReceiver();
const fake = await startFakeProviders();
afterAll(() => Promise.all([receiver.close(), fake.close()]));
const traced = await startTracing({ endpoint: receiver.url, role: 'all', version: 'test' });
afterAll(() => stopTracing());
const ctx = await useTestContext({
  workers: true,
  env: { INBOX_INTEGRATIONS: JSON.stringify({ whatsapp: { webhookSecret: SECRET, apiBaseUrl: fake.baseUrls.whatsapp } }) },
});

let tenantHeaders: Record<string, string> = {};

async function spansWhere(pick: (s: ReceivedSpan) => boolean, what: string): Promise<ReceivedSpan> {
  return waitFor(async () => {
    await traced.flush();
    return receiver.spans.find(pick);
  }, what);
}

describe('the trace context from a webhook to the provider call', () => {
  it('carries one trace from the delivery through the worker and the away reply’s send to the provider', async () => {
    const tenant = await makeTenant(ctx.deps);
    tenantHeaders = tenant.headers;
    const connection = await makeConnection(ctx.deps, tenant.workspace.id, {
      integrationKey: 'whatsapp',
      externalAccountId: ACCOUNT,
      credentials: { accessToken: 'EAAG-tracing-token-0123456789' },
    });
    // Open one minute, on a day three days off: every thread opens outside the hours and is
    // answered with the away message.
    const days = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
    const weekly = Object.fromEntries(days.map((d) => [d, [] as string[][]]));
    weekly[days[(new Date().getUTCDay() + 3) % 7]!] = [['09:00', '09:01']];
    const closed = { timezone: 'UTC', weekly, holidays: [] };
    for (const [url, payload] of [
      ['/v1/workspace', { businessHours: closed }],
      [`/v1/connections/${connection.id}`, { awayMessage: 'We answer on weekdays.' }],
    ] as const) {
      const res = await ctx.app.inject({ method: 'PATCH', url, headers: tenant.headers, payload });
      expect(res.statusCode, res.body).toBe(200);
    }

    const payload = JSON.parse(fixture('whatsapp', 'text-message.json'));
    const message = payload.entry[0].changes[0].value.messages[0];
    message.id = 'wamid.traced-1';
    message.timestamp = String(Math.floor(Date.now() / 1000));
    const body = JSON.stringify(payload);
    const traceId = randomBytes(16).toString('hex');
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/webhooks/whatsapp',
      headers: {
        'content-type': 'application/json',
        'x-hub-signature-256': `sha256=${sign(SECRET, body)}`,
        traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`,
      },
      payload: body,
    });
    expect(res.statusCode).toBe(200);

    const call = await waitFor(async () => fake.requests.find((r) => r.path.endsWith(`/${ACCOUNT}/messages`)), 'the away reply’s send');
    expect((call.parsed as { text?: { body?: string } }).text?.body).toBe('We answer on weekdays.');

    const request = await spansWhere((s) => s.traceId === traceId && s.kind === SPAN_KIND.server, 'the webhook request');
    expect(request.name).toBe('POST /webhooks/:integrationKey');
    const processing = await spansWhere((s) => s.name === 'process deliveries' && s.traceId === traceId, 'the processing span');
    expect(processing.parentSpanId).toBe(request.spanId);
    const send = await spansWhere((s) => s.name === 'send whatsapp' && s.traceId === traceId, 'the send span');
    expect(send.parentSpanId).toBe(processing.spanId);
    const provider = await spansWhere(
      (s) => s.parentSpanId === send.spanId && s.attributes['http.request.method'] !== undefined,
      'the provider call',
    );
    expect(provider.kind).toBe(SPAN_KIND.client);
    expect(provider.traceId).toBe(traceId);
    expect(provider.name).toBe('POST');
    // The provider itself was handed the trace.
    expect(call.headers.traceparent).toBe(`00-${traceId}-${provider.spanId}-01`);
  });

  it('carries a reply request’s trace to its send and the provider call', async () => {
    const { thread_id: threadId } = await ctx.deps.db
      .selectFrom('messages')
      .select('thread_id')
      .where('external_id', '=', 'wamid.traced-1')
      .executeTakeFirstOrThrow();
    const traceId = randomBytes(16).toString('hex');
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${threadId}/messages`,
      headers: { ...tenantHeaders, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` },
      payload: { text: 'A person answers.' },
    });
    expect(res.statusCode, res.body).toBe(202);
    const call = await waitFor(
      async () => fake.requests.find((r) => (r.parsed as { text?: { body?: string } }).text?.body === 'A person answers.'),
      'the reply’s send',
    );
    const request = await spansWhere((s) => s.traceId === traceId && s.kind === SPAN_KIND.server, 'the reply request');
    const send = await spansWhere((s) => s.name === 'send whatsapp' && s.traceId === traceId, 'the send span');
    expect(send.parentSpanId).toBe(request.spanId);
    const provider = await spansWhere(
      (s) => s.parentSpanId === send.spanId && s.attributes['http.request.method'] !== undefined,
      'the provider call',
    );
    expect(call.headers.traceparent).toBe(`00-${traceId}-${provider.spanId}-01`);
  });

  it('links a batch of deliveries from several requests to each of their traces', async () => {
    const origins = [0, 1].map(() => ({ traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex') }));
    const ids = [uuid7(), uuid7()];
    const traces = Object.fromEntries(ids.map((id, i) => [id, `00-${origins[i]!.traceId}-${origins[i]!.spanId}-01`]));
    // Deliveries with no rows: the batch does nothing, but is processed (and traced) as any.
    await webhookQueue.worker!.handle(ctx.deps, [{ id: uuid7(), data: { ids, traces } }], {});
    const batch = await spansWhere((s) => s.name === 'process deliveries' && s.links.length === 2, 'the batch span');
    expect(batch.parentSpanId).toBeUndefined();
    expect(batch.links.sort((a, b) => a.traceId.localeCompare(b.traceId))).toEqual(
      origins.sort((a, b) => a.traceId.localeCompare(b.traceId)),
    );
  });
});
