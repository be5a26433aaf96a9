import { afterAll, describe, expect, it } from 'vitest';
import { deliverEvents } from '../../src/webhooks-out/outbox.js';
import { SECRET_REASON } from '../../src/webhooks-out/settle.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { startReceiver } from '../helpers/receiver.js';
import { waitFor } from '../helpers/webhooks.js';

const receiver = await startReceiver();
afterAll(() => receiver.close());
const ctx = await useTestContext({ workers: true, env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
const tenant = await makeTenant(ctx.deps);

async function endpoint(path: string) {
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/v1/webhook-endpoints',
    headers: tenant.headers,
    payload: { url: `${receiver.url}${path}` },
  });
  return res.json().data.id as number;
}

const deliveryOf = (endpointId: number) =>
  ctx.deps.db.selectFrom('webhook_deliveries').select(['id', 'status']).where('endpoint_id', '=', endpointId).executeTakeFirst();

describe('an endpoint signing secret that does not open', () => {
  it('fails its delivery with a clear error and disables the endpoint with that reason; the process and other endpoints go on', async () => {
    const broken = await endpoint('/broken');
    const healthy = await endpoint('/healthy');
    // Sealed under another key, or altered: GCM cannot open it (before the fix, the lane's
    // rejection went unhandled and ended the process; vitest fails the file on it).
    await ctx.deps.db
      .updateTable('webhook_endpoints')
      .set({ secret_sealed: Buffer.from(`01${'ab'.repeat(40)}`, 'hex') })
      .where('id', '=', broken)
      .execute();
    const event = { type: 'ping' as const, workspaceId: tenant.workspace.id, data: { n: 1 } };
    await ctx.deps.db
      .transaction()
      .execute((trx) => deliverEvents(ctx.deps.boss, trx, [{ event, endpointIds: [broken, healthy] }], new Date()));

    const failed = await waitFor(async () => {
      const d = await deliveryOf(broken);
      return d?.status === 'failed' ? d : undefined;
    }, 'the broken endpoint’s delivery to fail');
    await waitFor(async () => (await deliveryOf(healthy))?.status === 'succeeded', 'the healthy endpoint’s delivery');
    expect(receiver.received.map((r) => r.path)).toEqual(['/healthy']);

    const attempts = await ctx.deps.db
      .selectFrom('webhook_attempts')
      .select(['status_code', 'error'])
      .where('delivery_id', '=', failed.id)
      .execute();
    expect(attempts).toEqual([{ status_code: null, error: `not sent: ${SECRET_REASON}` }]);
    const shown = (await ctx.app.inject({ method: 'GET', url: `/v1/webhook-endpoints/${broken}`, headers: tenant.headers })).json().data;
    expect(shown).toMatchObject({ enabled: false, disabledReason: SECRET_REASON });
    const metrics = (await ctx.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/inbox_outbound_webhook_endpoints_disabled_total\{reason="secret"\} [1-9]/);

    // The way back: a new secret, enabled again, and the next delivery is signed and sent.
    expect(
      (await ctx.app.inject({ method: 'POST', url: `/v1/webhook-endpoints/${broken}/rotate-secret`, headers: tenant.headers })).statusCode,
    ).toBe(200);
    expect(
      (
        await ctx.app.inject({
          method: 'PATCH',
          url: `/v1/webhook-endpoints/${broken}`,
          headers: tenant.headers,
          payload: { enabled: true },
        })
      ).statusCode,
    ).toBe(200);
    expect(
      (await ctx.app.inject({ method: 'POST', url: `/v1/webhook-endpoints/${broken}/test`, headers: tenant.headers })).statusCode,
    ).toBe(202);
    await waitFor(async () => receiver.received.some((r) => r.path === '/broken'), 'a delivery after rotation');
  });
});
