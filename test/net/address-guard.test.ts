import { afterAll, describe, expect, it } from 'vitest';
import { type ResolveHost, refusedRange } from '../../src/net/address-guard.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { startReceiver } from '../helpers/receiver.js';
import { waitFor } from '../helpers/webhooks.js';

describe('which addresses a webhook may reach', () => {
  it('refuses loopback, private, link-local, CGNAT, multicast, unique-local, reserved and IPv4-mapped or -compatible forms of them', () => {
    const refused = [
      '127.0.0.1',
      '127.255.0.9',
      '10.0.0.1',
      '172.16.5.4',
      '172.31.255.255',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '100.127.255.254',
      '224.0.0.1',
      '239.255.255.250',
      '0.0.0.0',
      '255.255.255.255',
      '192.0.2.10',
      '198.18.0.1',
      '240.0.0.1',
      '::1',
      '::',
      'fc00::1',
      'fd12:3456::1',
      'fe80::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '::ffff:169.254.169.254',
      '::7f00:1',
      '::a9fe:a9fe',
      '::808:808',
      '64:ff9b::a00:1',
      '2001:db8::1',
    ];
    for (const a of refused) expect(refusedRange(a), a).toBeDefined();
    for (const a of [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.216.34',
      '172.32.0.1',
      '100.128.0.1',
      '2606:4700:4700::1111',
      '2a00:1450:4001:80b::200e',
      '::ffff:8.8.8.8',
    ]) {
      expect(refusedRange(a), a).toBeUndefined();
    }
  });
});

const receiver = await startReceiver();
afterAll(() => receiver.close());
// A resolver the test controls: names the guard must judge by what they resolve to.
const resolveHost: ResolveHost = async (hostname) => {
  if (hostname === 'hooks.internal.test') return [{ address: '127.0.0.1', family: 4 }];
  if (hostname === 'mixed.test')
    return [
      { address: '93.184.216.34', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};
const ctx = await useTestContext({ workers: true, resolveHost });
const tenant = await makeTenant(ctx.deps);

// Two receivers on one port: 127.0.0.2 stands for the public address a name first shows,
// 127.0.0.1 for the internal one it switches to. The guard is lifted in this second app (both
// are loopback); what is tested is that the socket goes to the address the lookup returned
// and checked, with no second resolution in between.
const outside = await startReceiver({ host: '127.0.0.2' });
const inside = await startReceiver({ host: '127.0.0.1', port: outside.port });
afterAll(() => Promise.all([outside.close(), inside.close()]));
let calls = 0;
const rebinding: ResolveHost = async () => (calls++ === 0 ? [{ address: '127.0.0.2', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);
const lifted = await useTestContext({ workers: true, resolveHost: rebinding, env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
const liftedTenant = await makeTenant(lifted.deps);

describe('outbound webhooks behind the guard', () => {
  async function attemptTo(url: string) {
    const created = await ctx.app.inject({ method: 'POST', url: '/v1/webhook-endpoints', headers: tenant.headers, payload: { url } });
    expect(created.statusCode).toBe(201);
    const id = created.json().data.id;
    await ctx.app.inject({ method: 'POST', url: `/v1/webhook-endpoints/${id}/test`, headers: tenant.headers });
    const [d] = await waitFor(async () => {
      const list = (await ctx.app.inject({ method: 'GET', url: `/v1/webhook-endpoints/${id}/deliveries`, headers: tenant.headers })).json()
        .data;
      return list[0]?.attempts.length > 0 ? list : undefined;
    }, `an attempt to ${url}`);
    return d.attempts[0] as { statusCode: number | null; error: string };
  }

  it('fails an attempt to a name that resolves to a private address, with a clear error, and sends nothing', async () => {
    const attempt = await attemptTo(`http://hooks.internal.test:${receiver.port}/hook`);
    expect(attempt.statusCode).toBeNull();
    // What the name resolved to is never shown: it would map the deployment's network.
    expect(attempt.error).toBe('refused: hooks.internal.test resolves to a loopback address');
    expect(receiver.received).toHaveLength(0);
  });

  it('requires every address of a name to be public, not just the first', async () => {
    const attempt = await attemptTo(`http://mixed.test:${receiver.port}/hook`);
    expect(attempt.error).toBe('refused: mixed.test resolves to a loopback address');
    expect(receiver.received).toHaveLength(0);
  });

  it('checks a literal address at the attempt too (stored while private addresses were allowed)', async () => {
    const created = await ctx.app.inject({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      headers: tenant.headers,
      payload: { url: 'https://hooks.example.com/' },
    });
    const id = created.json().data.id;
    await ctx.deps.db
      .updateTable('webhook_endpoints')
      .set({ url: `http://127.0.0.1:${receiver.port}/hook` })
      .where('id', '=', id)
      .execute();
    await ctx.app.inject({ method: 'POST', url: `/v1/webhook-endpoints/${id}/test`, headers: tenant.headers });
    const attempt = await waitFor(async () => {
      const list = (await ctx.app.inject({ method: 'GET', url: `/v1/webhook-endpoints/${id}/deliveries`, headers: tenant.headers })).json()
        .data;
      return list[0]?.attempts[0];
    }, 'the attempt');
    expect(attempt.error).toBe('refused: 127.0.0.1 is a loopback address');
    expect(receiver.received).toHaveLength(0);
  });
});

describe('DNS rebinding', () => {
  it('connects to the address that was resolved and checked, resolving once per connection', async () => {
    const created = await lifted.app.inject({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      headers: liftedTenant.headers,
      payload: { url: `http://rebind.test:${outside.port}/hook` },
    });
    await lifted.app.inject({ method: 'POST', url: `/v1/webhook-endpoints/${created.json().data.id}/test`, headers: liftedTenant.headers });
    await waitFor(async () => outside.received.length === 1, 'the delivery');
    expect(calls).toBe(1);
    expect(inside.received).toHaveLength(0);
    expect(outside.received[0]!.headers.host).toBe(`rebind.test:${outside.port}`);
  });
});
