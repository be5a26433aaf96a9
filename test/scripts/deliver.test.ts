import { spawn } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../src/db/embedded.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';

/**
 * `npm run deliver`, the README's way to get a test conversation in: it signs with the secrets
 * the service is configured with, so the service accepts and processes what it posts, and it
 * says so when the secret it signed with is not the service's.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const integrations = { whatsapp: { webhookSecret: 'wa-secret-for-deliver' }, 'sms.twilio': { authToken: 'twilio-token-for-deliver' } };
const ctx = await useTestContext({
  workers: true,
  env: { INBOX_PUBLIC_URL: base, INBOX_INTEGRATIONS: JSON.stringify(integrations) },
});
await ctx.app.listen({ port, host: '127.0.0.1' });
const tenant = await makeTenant(ctx.deps);
await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'whatsapp', externalAccountId: '106540352242922' });
await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms.twilio', externalAccountId: '+15557122661' });

function deliver(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    // cwd is the repository, as `npm run` runs it; its environment names the service's settings.
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/deliver.ts', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, out }));
  });
}
const serviceEnv = { INBOX_PUBLIC_URL: base, INBOX_INTEGRATIONS: JSON.stringify(integrations) };

async function threadOf(text: string) {
  return waitFor(
    () =>
      ctx.deps.db
        .selectFrom('messages')
        .innerJoin('threads', 'threads.id', 'messages.thread_id')
        .select(['threads.id', 'threads.workspace_id'])
        .where('messages.text', '=', text)
        .executeTakeFirst(),
    `a message "${text}"`,
  );
}

describe('npm run deliver', () => {
  it('posts a signed WhatsApp message that becomes a thread of the connected line', async () => {
    const run = await deliver(
      ['whatsapp', '--account', '106540352242922', '--from', '16505551234', '--name', 'Sheena', '--text', 'Hello from deliver'],
      serviceEnv,
    );
    expect(run.out).toContain('200 {"status":"queued"}');
    expect(run.code).toBe(0);
    expect((await threadOf('Hello from deliver')).workspace_id).toBe(tenant.workspace.id);
  });

  it('signs a Twilio message over INBOX_PUBLIC_URL as Twilio does', async () => {
    const run = await deliver(
      ['sms.twilio', '--account', '+15557122661', '--from', '+15017122661', '--text', 'Texted from deliver'],
      serviceEnv,
    );
    expect(run.out).toContain('200');
    expect(run.code).toBe(0);
    expect((await threadOf('Texted from deliver')).workspace_id).toBe(tenant.workspace.id);
  });

  it('exits 1 with the refusal when it signs with a secret the service does not hold', async () => {
    const wrong = { ...serviceEnv, INBOX_INTEGRATIONS: JSON.stringify({ 'sms.twilio': { authToken: 'not-the-service-token' } }) };
    const run = await deliver(['sms.twilio', '--account', '+15557122661', '--from', '+15017122661', '--text', 'Never stored'], wrong);
    expect(run.out).toMatch(/^401 /m);
    expect(run.code).toBe(1);
  });

  it('says which setting is missing instead of posting a delivery the service would refuse', async () => {
    const run = await deliver(['whatsapp', '--account', '1', '--from', '2'], { INBOX_PUBLIC_URL: base });
    expect(run.code).toBe(64);
    expect(run.out).toContain('INBOX_INTEGRATIONS.whatsapp.webhookSecret is not set');
  });
});
