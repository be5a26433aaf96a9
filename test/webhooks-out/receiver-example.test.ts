import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';

/** The receiver example of docs/outbound-webhooks.md, exactly as the docs show it. */
const docs = readFileSync(path.resolve(import.meta.dirname, '../../docs/outbound-webhooks.md'), 'utf8');
const example = /<!-- receiver-example:start -->\n```js\n([\s\S]*?)```\n<!-- receiver-example:end -->/.exec(docs)?.[1];

async function freePort(): Promise<number> {
  const s = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return port;
}

const ctx = await useTestContext({ workers: true, env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
const tenant = await makeTenant(ctx.deps);
let child: ChildProcess | undefined;
afterAll(() => child?.kill());

function post(port: number, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('the receiver example in docs/outbound-webhooks.md', () => {
  it('verifies real deliveries, refuses forged and stale ones, and dedupes a redelivery', async () => {
    expect(example, 'the docs carry the example between its markers').toBeDefined();
    expect(example!.trim().split('\n').length).toBeLessThanOrEqual(25);
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'receiver-')), 'receiver.mjs');
    writeFileSync(file, example!);
    const port = await freePort();
    const created = (
      await ctx.app.inject({
        method: 'POST',
        url: '/v1/webhook-endpoints',
        headers: tenant.headers,
        payload: { url: `http://127.0.0.1:${port}/` },
      })
    ).json().data;

    let stdout = '';
    child = spawn(process.execPath, [file], {
      env: { ...process.env, WEBHOOK_SECRET: created.secret, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    await waitFor(async () => stdout.includes('listening'), 'the example to listen');

    const test = (await ctx.app.inject({ method: 'POST', url: `/v1/webhook-endpoints/${created.id}/test`, headers: tenant.headers })).json()
      .data;
    const log = async () =>
      (await ctx.app.inject({ method: 'GET', url: `/v1/webhook-endpoints/${created.id}/deliveries`, headers: tenant.headers })).json()
        .data[0];
    await waitFor(async () => (await log()).status === 'succeeded', 'the example to accept the ping');
    expect((await log()).attempts[0].statusCode).toBe(204);
    await waitFor(async () => stdout.includes(`ping ${test.id}`), 'the example to handle the ping');

    // A redelivery carries the same delivery id: answered, not handled twice.
    await ctx.app.inject({ method: 'POST', url: `/v1/webhook-endpoints/deliveries/${test.id}/redeliver`, headers: tenant.headers });
    await waitFor(async () => (await log()).attempts.length === 2 && (await log()).status === 'succeeded', 'the redelivery');
    expect(stdout.match(/^ping /gm)).toHaveLength(1);

    // A rotation with a grace period: the example still holds the old secret and keeps
    // accepting, through `x-service-signature-previous`.
    const rotate = async (grace: number) =>
      (
        await ctx.app.inject({
          method: 'POST',
          url: `/v1/webhook-endpoints/${created.id}/rotate-secret?graceSeconds=${grace}`,
          headers: tenant.headers,
        })
      ).json().data;
    const rotated = await rotate(3600);
    const during = (
      await ctx.app.inject({ method: 'POST', url: `/v1/webhook-endpoints/${created.id}/test`, headers: tenant.headers })
    ).json().data;
    await waitFor(async () => stdout.includes(`ping ${during.id}`), 'the example to accept a ping signed during the grace');
    // The example prints before the service records its answer: wait for the record.
    const accepted = await waitFor(async () => {
      const d = await log();
      return d.id === during.id && d.attempts.length === 1 ? d : undefined;
    }, 'the attempt during the grace to be recorded');
    expect(accepted.attempts[0].statusCode).toBe(204);
    // Once the old secret is dropped, the example (still on it) refuses.
    await rotate(0);
    await ctx.app.inject({ method: 'POST', url: `/v1/webhook-endpoints/${created.id}/test`, headers: tenant.headers });
    await waitFor(async () => (await log()).attempts.length === 1 && (await log()).id !== during.id, 'the attempt after the grace');
    expect((await log()).attempts[0].statusCode).toBe(401);

    // Forged and stale requests are refused.
    const body = JSON.stringify({ id: 'evt_forged', type: 'message.created', data: {} });
    const now = Math.floor(Date.now() / 1000);
    const sig = (secret: string, ts: number) => `sha256=${createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex')}`;
    const headers = (signature: string, ts: number) => ({
      'content-type': 'application/json',
      'x-service-timestamp': String(ts),
      'x-service-signature': signature,
      'x-service-delivery': '999999',
    });
    expect(await post(port, headers(sig('whsec_not-the-secret', now), now), body)).toBe(401);
    expect(await post(port, headers(sig(created.secret, now - 3600), now - 3600), body)).toBe(401);
    expect(await post(port, headers('', now), body)).toBe(401);
    expect(await post(port, headers(sig(created.secret, now), now), body)).toBe(204);
    // The previous secret's header alone verifies (grace), a forged one does not.
    expect(await post(port, { ...headers('sha256=0', now), 'x-service-signature-previous': sig(created.secret, now) }, body)).toBe(204);
    expect(await post(port, { ...headers('sha256=0', now), 'x-service-signature-previous': sig(`${rotated.secret}x`, now) }, body)).toBe(
      401,
    );
  });
});
