import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { connectionCredentials } from '../../src/connections/connection-credentials.js';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

const ctx = await useTestContext();
const tenant = await makeTenant(ctx.deps);
const unique = () => randomBytes(4).toString('hex');

const create = (body: Record<string, unknown>, headers: Record<string, string> = tenant.headers) =>
  ctx.app.inject({ method: 'POST', url: '/v1/connections', headers, payload: body });

async function login(email: string, password: string) {
  const res = await ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email, password } });
  return { authorization: `Bearer ${res.json().access_token}` };
}

async function connectionsOf(workspaceId: number) {
  return ctx.deps.db.selectFrom('connections').select(['id', 'external_account_id']).where('workspace_id', '=', workspaceId).execute();
}

describe('POST /v1/connections (a workspace admin connects a channel account)', () => {
  it('creates it in the caller workspace with write-only credentials (201)', async () => {
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id, { roles: ['admin'] });
    const token = `EAAG-tenant-${unique()}`;
    const account = `acct-${unique()}`;
    const res = await create(
      { integrationKey: 'whatsapp', externalAccountId: account, name: 'Support line', credentials: { accessToken: token } },
      await login(user.email, password),
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toMatchObject({
      integrationKey: 'whatsapp',
      externalAccountId: account,
      name: 'Support line',
      hasCredentials: true,
      managedBy: 'workspace',
    });
    expect(res.body).not.toContain(token);
    expect(await connectionCredentials(ctx.deps, res.json().data.id)).toEqual({ accessToken: token });
    expect((await connectionsOf(tenant.workspace.id)).map((c) => c.external_account_id)).toContain(account);
  });

  it('takes the connection settings on create too: an away message, trimmed (blank = off)', async () => {
    const res = await create({ integrationKey: 'sms', externalAccountId: `+1555${unique()}`, name: 'SMS', awayMessage: ' Back at 9. ' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.awayMessage).toBe('Back at 9.');
    const blank = await create({ integrationKey: 'sms', externalAccountId: `+1555${unique()}`, name: 'SMS', awayMessage: '   ' });
    expect(blank.statusCode, blank.body).toBe(201);
    expect(blank.json().data.awayMessage).toBeNull();
  });

  it('answers 409 for an account already connected, and 422 for bad input, creating nothing', async () => {
    const account = `acct-${unique()}`;
    expect((await create({ integrationKey: 'whatsapp', externalAccountId: account, name: 'A' })).statusCode).toBe(201);
    const before = (await connectionsOf(tenant.workspace.id)).length;
    const again = await create({ integrationKey: 'whatsapp', externalAccountId: account, name: 'B' });
    expect(again.statusCode, again.body).toBe(409);
    for (const body of [
      { integrationKey: 'carrier-pigeon', externalAccountId: `x-${unique()}`, name: 'C' },
      { integrationKey: 'whatsapp', name: 'no account id' },
      {
        integrationKey: 'whatsapp',
        externalAccountId: `x-${unique()}`,
        name: 'D',
        credentials: { accessToken: 'ok', smtpUrl: 'smtp://x' },
      },
      { integrationKey: 'whatsapp', externalAccountId: `x-${unique()}`, name: 'E', workspaceId: 1 },
    ]) {
      const res = await create(body);
      expect(res.statusCode, res.body).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
    expect((await connectionsOf(tenant.workspace.id)).length).toBe(before);
  });

  it('is for workspace admins: an agent 403, a write key 403, nobody and the engage key 401', async () => {
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id, { roles: ['agent'] });
    const writer = await makeTenant(ctx.deps, { scopes: ['write'] });
    for (const [headers, status] of [
      [await login(user.email, password), 403],
      [writer.headers, 403],
      [{}, 401],
      [adminHeaders(), 401],
    ] as const) {
      const res = await create({ integrationKey: 'whatsapp', externalAccountId: `acct-${unique()}`, name: 'X' }, headers);
      expect(res.statusCode, res.body).toBe(status);
    }
    expect(await connectionsOf(writer.workspace.id)).toEqual([]);
  });
});
