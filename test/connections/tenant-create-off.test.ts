import { describe, expect, it } from 'vitest';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';

// A deployment several organisations share keeps connecting accounts to its operator.
const ctx = await useTestContext({ env: { INBOX_TENANT_CONNECTIONS: 'false' } });
const tenant = await makeTenant(ctx.deps);
const body = { integrationKey: 'whatsapp', externalAccountId: 'acct-shared-1', name: 'Support line' };

describe('INBOX_TENANT_CONNECTIONS=false', () => {
  it('refuses a workspace admin with 403 naming the setting, writing nothing', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: '/v1/connections', headers: tenant.headers, payload: body });
    expect(res.statusCode, res.body).toBe(403);
    expect(res.json().error.message).toContain('INBOX_TENANT_CONNECTIONS=false');
    expect(await ctx.deps.db.selectFrom('connections').select('id').execute()).toEqual([]);
  });

  it('leaves the operator its engage route', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/engage/workspaces/${tenant.workspace.id}/connections`,
      headers: adminHeaders(),
      payload: body,
    });
    expect(res.statusCode, res.body).toBe(201);
  });
});
