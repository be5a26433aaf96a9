import { createHmac } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { type Received, startReceiver } from '../helpers/receiver.js';
import { waitFor } from '../helpers/webhooks.js';

// The service's clock runs `ahead` ms in front of the real one, so a grace period can end
// without waiting for it.
let ahead = 0;
const receiver = await startReceiver();
afterAll(() => receiver.close());
const ctx = await useTestContext({
  workers: true,
  now: () => new Date(Date.now() + ahead),
  env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' },
});

const HOUR = 3_600_000;
const signature = (secret: string, r: Received) =>
  `sha256=${createHmac('sha256', secret)
    .update(`${r.headers['x-service-timestamp']}.${r.raw.toString('utf8')}`)
    .digest('hex')}`;

describe('rotate-secret without graceSeconds', () => {
  it('signs with the old secret too for 24 h, then with the new one alone', async () => {
    ahead = 0;
    const tenant = await makeTenant(ctx.deps);
    const call = (method: 'POST', url: string, payload?: object) =>
      ctx.app.inject({ method, url: `/v1/webhook-endpoints${url}`, headers: tenant.headers, ...(payload ? { payload } : {}) });
    const path = `/grace${tenant.workspace.id}`;
    const created = (await call('POST', '', { url: `${receiver.url}${path}` })).json().data as { id: number; secret: string };
    const rotated = await call('POST', `/${created.id}/rotate-secret`);
    expect(rotated.statusCode, rotated.body).toBe(200);
    const secret = rotated.json().data.secret as string;
    const ping = async (n: number) => {
      expect((await call('POST', `/${created.id}/test`)).statusCode).toBeLessThan(300);
      return waitFor(async () => receiver.received.filter((r) => r.path === path)[n], `ping ${n + 1}`);
    };

    ahead = 24 * HOUR - 60_000;
    const inside = await ping(0);
    expect(inside.headers['x-service-signature']).toBe(signature(secret, inside));
    expect(inside.headers['x-service-signature-previous']).toBe(signature(created.secret, inside));

    ahead = 24 * HOUR + 60_000;
    const after = await ping(1);
    expect(after.headers['x-service-signature']).toBe(signature(secret, after));
    expect(after.headers).not.toHaveProperty('x-service-signature-previous');
  });
});
