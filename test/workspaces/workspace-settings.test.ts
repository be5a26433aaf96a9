import { describe, expect, it } from 'vitest';
import { WORKSPACE_SETTINGS } from '../../src/workspaces/workspace-settings.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { signedInUser } from '../threads/workflow-helpers.js';

const ctx = await useTestContext();

type Method = 'GET' | 'PATCH';
const call = (method: Method, headers: Record<string, string>, payload?: object) =>
  ctx.app.inject({ method, url: '/v1/workspace', headers, ...(payload ? { payload } : {}) });

describe('/v1/workspace', () => {
  it('reads the defaults to anyone of the workspace, a read key included', async () => {
    const tenant = await makeTenant(ctx.deps, { name: 'Acme' });
    const agent = await signedInUser(ctx.app, ctx, tenant.workspace.id, { roles: ['agent'] });
    const readKey = await makeTenant(ctx.deps, { scopes: ['read'] });
    // The Workspace (id, name, appId, createdAt) with its settings.
    const expected = {
      id: tenant.workspace.id,
      name: 'Acme',
      appId: tenant.workspace.appId,
      createdAt: tenant.workspace.createdAt,
      businessHours: null,
      assignOnReply: true,
      restrictAgentsToTeams: false,
      require2fa: false,
      conversationRetentionDays: null,
      sso: null,
      ai: { enabled: false, baseUrl: null, model: null, apiKeySet: false },
    };
    for (const headers of [tenant.headers, agent.headers]) {
      const res = await call('GET', headers);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toEqual(expected);
    }
    expect((await call('GET', readKey.headers)).json().data.id).toBe(readKey.workspace.id);
    expect(Object.keys(WORKSPACE_SETTINGS).sort()).toEqual([
      'assignOnReply',
      'businessHours',
      'conversationRetentionDays',
      'require2fa',
      'restrictAgentsToTeams',
      'sso',
    ]);
  });

  it('lets admins change only the fields given; agents and write keys get 403', async () => {
    const tenant = await makeTenant(ctx.deps, { name: 'Before' });
    const admin = await signedInUser(ctx.app, ctx, tenant.workspace.id, { roles: ['admin'] });
    const agent = await signedInUser(ctx.app, ctx, tenant.workspace.id, { roles: ['agent'] });
    const writeKey = await makeTenant(ctx.deps, { scopes: ['write'] });
    expect((await call('PATCH', agent.headers, { assignOnReply: false })).statusCode).toBe(403);
    expect((await call('PATCH', writeKey.headers, { assignOnReply: false })).statusCode).toBe(403);

    const first = await call('PATCH', admin.headers, { assignOnReply: false });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().data).toEqual({
      id: tenant.workspace.id,
      name: 'Before',
      appId: tenant.workspace.appId,
      createdAt: tenant.workspace.createdAt,
      businessHours: null,
      assignOnReply: false,
      restrictAgentsToTeams: false,
      require2fa: false,
      conversationRetentionDays: null,
      sso: null,
      ai: { enabled: false, baseUrl: null, model: null, apiKeySet: false },
    });
    const second = await call('PATCH', tenant.headers, { name: 'After', restrictAgentsToTeams: true });
    expect(second.json().data).toEqual({
      id: tenant.workspace.id,
      name: 'After',
      appId: tenant.workspace.appId,
      createdAt: tenant.workspace.createdAt,
      businessHours: null,
      assignOnReply: false,
      restrictAgentsToTeams: true,
      require2fa: false,
      conversationRetentionDays: null,
      sso: null,
      ai: { enabled: false, baseUrl: null, model: null, apiKeySet: false },
    });
    expect((await call('GET', agent.headers)).json().data).toEqual(second.json().data);
    // Another workspace keeps its defaults.
    expect((await call('GET', writeKey.headers)).json().data).toMatchObject({ assignOnReply: true, restrictAgentsToTeams: false });
  });

  it('refuses unknown fields, wrong types and an empty patch with 422, changing nothing', async () => {
    const tenant = await makeTenant(ctx.deps);
    for (const payload of [
      { assignOnReply: true, colour: 'red' },
      { restrictAgentsToTeams: 'yes' },
      { notifyByMail: true },
      { assignOnReply: 'yes' },
      {},
      { name: '' },
      { id: 5 },
    ]) {
      const res = await call('PATCH', tenant.headers, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
    expect((await call('GET', tenant.headers)).json().data).toMatchObject({ assignOnReply: true });
  });
});
