import { createHmac, randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { InboxClientError, verifyWebhook } from '../../packages/client/src/index.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { startReceiver } from '../helpers/receiver.js';
import { waitFor } from '../helpers/webhooks.js';

/**
 * `verifyWebhook()` over the raw bytes, in both schemes of docs/outbound-webhooks.md: first
 * against signatures computed here with node:crypto and the official `standardwebhooks`
 * package, then against real deliveries of the service to a receiver on loopback.
 */
const receiver = await startReceiver();
afterAll(() => receiver.close());
const ctx = await useTestContext({ workers: true, env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
const tenant = await makeTenant(ctx.deps);

const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
const SECRET = newSecret();
const OLD = newSecret();
const now = Math.floor(Date.now() / 1000);
// Bytes a re-serialisation would change: spacing, key order and multi-byte characters.
const BODY = Buffer.from('{"id":"evt_1", "type":"ping","createdAt":"2026-01-01T00:00:00.000Z","workspaceId":3,"data":{"t":"é ✓"}}');

const serviceSig = (secret: string, ts: number, body: Buffer) =>
  `sha256=${createHmac('sha256', secret).update(`${ts}.`).update(body).digest('hex')}`;
const standardSig = (secret: string, id: string, ts: number, body: Buffer) =>
  `v1,${createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
    .update(`${id}.${ts}.`)
    .update(body)
    .digest('base64')}`;

async function refusal(p: Promise<unknown>): Promise<unknown> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InboxClientError);
  return err;
}

describe('scheme service (x-service-signature)', () => {
  const headers = (ts = now, body = BODY, secret = SECRET) => ({
    'x-service-signature': serviceSig(secret, ts, body),
    'x-service-timestamp': String(ts),
    'x-service-delivery': '41',
  });

  it('accepts the raw bytes it was signed over, from Node headers or a Fetch Headers', async () => {
    const verified = await verifyWebhook({ body: new Uint8Array(BODY), headers: headers(), secret: SECRET });
    expect(verified).toMatchObject({ scheme: 'service', deliveryId: '41', timestamp: now, event: { type: 'ping', data: { t: 'é ✓' } } });
    const upper = Object.fromEntries(Object.entries(headers()).map(([k, v]) => [k.toUpperCase(), v]));
    expect((await verifyWebhook({ body: BODY, headers: upper, secret: SECRET })).deliveryId).toBe('41');
    expect((await verifyWebhook({ body: BODY.toString('utf8'), headers: new Headers(headers()), secret: SECRET })).scheme).toBe('service');
  });

  it('refuses a changed byte, a re-serialised body, another secret and a stale timestamp', async () => {
    const changed = Buffer.from(BODY);
    changed[changed.length - 3] = changed[changed.length - 3]! ^ 1;
    expect(await refusal(verifyWebhook({ body: changed, headers: headers(), secret: SECRET }))).toMatchObject({
      code: 'invalid_signature',
      status: 401,
    });
    await refusal(verifyWebhook({ body: JSON.stringify(JSON.parse(BODY.toString())), headers: headers(), secret: SECRET }));
    await refusal(verifyWebhook({ body: BODY, headers: headers(), secret: OLD }));
    await refusal(verifyWebhook({ body: BODY, headers: headers(now - 301), secret: SECRET }));
    expect((await verifyWebhook({ body: BODY, headers: headers(now - 301), secret: SECRET, toleranceSeconds: 600 })).timestamp).toBe(
      now - 301,
    );
    await refusal(verifyWebhook({ body: BODY, headers: { 'x-service-signature': serviceSig(SECRET, now, BODY) }, secret: SECRET }));
  });

  it('accepts the previous secret through x-service-signature-previous while a rotation lasts', async () => {
    const rotated = { ...headers(), 'x-service-signature-previous': serviceSig(OLD, now, BODY) };
    expect((await verifyWebhook({ body: BODY, headers: rotated, secret: OLD })).scheme).toBe('service');
    expect((await verifyWebhook({ body: BODY, headers: rotated, secret: [newSecret(), SECRET] })).scheme).toBe('service');
    await refusal(verifyWebhook({ body: BODY, headers: rotated, secret: newSecret() }));
  });
});

describe('scheme standard (Standard Webhooks)', () => {
  it('accepts what the official package signs, and either secret of a rotation', async () => {
    const signature = new Webhook(SECRET).sign('msg_7', new Date(now * 1000), BODY.toString('utf8'));
    const headers = { 'webhook-id': 'msg_7', 'webhook-timestamp': String(now), 'webhook-signature': signature };
    expect(await verifyWebhook({ body: BODY, headers, secret: SECRET })).toMatchObject({ scheme: 'standard', deliveryId: 'msg_7' });

    const both = { ...headers, 'webhook-signature': `${standardSig(SECRET, 'msg_7', now, BODY)} ${standardSig(OLD, 'msg_7', now, BODY)}` };
    expect((await verifyWebhook({ body: BODY, headers: both, secret: OLD })).event.type).toBe('ping');
    await refusal(verifyWebhook({ body: BODY, headers: both, secret: newSecret() }));
  });

  it('refuses a changed byte, another delivery id and a stale timestamp', async () => {
    const headers = (id = 'msg_7', ts = now) => ({
      'webhook-id': id,
      'webhook-timestamp': String(ts),
      'webhook-signature': standardSig(SECRET, 'msg_7', ts, BODY),
    });
    const changed = Buffer.from(BODY);
    changed[5] = changed[5]! ^ 1;
    await refusal(verifyWebhook({ body: changed, headers: headers(), secret: SECRET }));
    await refusal(verifyWebhook({ body: BODY, headers: headers('msg_8'), secret: SECRET }));
    await refusal(verifyWebhook({ body: BODY, headers: headers('msg_7', now - 400), secret: SECRET }));
    await refusal(verifyWebhook({ body: BODY, headers: {}, secret: SECRET }));
  });
});

describe('real deliveries of the service', () => {
  it('verify in both schemes, over the bytes the receiver got', async () => {
    for (const signatureScheme of ['service', 'standard'] as const) {
      const path = `/${signatureScheme}`;
      const created = (
        await ctx.app.inject({
          method: 'POST',
          url: '/v1/webhook-endpoints',
          headers: tenant.headers,
          payload: { url: `${receiver.url}${path}`, signatureScheme },
        })
      ).json().data as { id: number; secret: string };
      const ping = await ctx.app.inject({ method: 'POST', url: `/v1/webhook-endpoints/${created.id}/test`, headers: tenant.headers });
      const delivery = ping.json().data as { id: number };
      const got = await waitFor(async () => receiver.received.find((r) => r.path === path), `a ${signatureScheme} delivery`);
      const verified = await verifyWebhook({ body: new Uint8Array(got.raw), headers: got.headers, secret: created.secret });
      expect(verified).toMatchObject({ scheme: signatureScheme, deliveryId: String(delivery.id), event: { type: 'ping' } });
      await refusal(verifyWebhook({ body: new Uint8Array(got.raw), headers: got.headers, secret: newSecret() }));
    }
  });
});
