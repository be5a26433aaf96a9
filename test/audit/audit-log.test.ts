import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { pruneAuditLog } from '../../src/audit/audit.queries.js';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

const ctx = await useTestContext();
const tenant = await makeTenant(ctx.deps);
const admin = await makeUser(ctx.deps, tenant.workspace.id, { roles: ['admin'], name: 'Ada Admin' });

const login = (email: string, password: string) =>
  ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email, password, remember: false } });
const adminToken = (await login(admin.user.email, admin.password)).json().access_token as string;
const asAdmin = { authorization: `Bearer ${adminToken}` };
const call = (method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, headers: Record<string, string>, payload?: object) =>
  ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

interface Entry {
  id: number;
  at: string;
  actor: { type: string; id: number | null; name: string | null };
  action: string;
  target: { type: string; id: number | string } | null;
  ip: string | null;
  changes: Record<string, { old: unknown; new: unknown }> | null;
}
async function entries(query = '', headers: Record<string, string> = asAdmin): Promise<Entry[]> {
  const res = await call('GET', `/v1/audit-log${query}`, headers);
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as Entry[];
}
const everything = async () => JSON.stringify((await sql`SELECT * FROM audit_log`.execute(ctx.deps.db)).rows);

describe('what the audit log records', () => {
  it('sign-ins, failed and succeeded, with the address', async () => {
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id, { name: 'Sam Signin' });
    expect((await login(user.email, 'not the password')).statusCode).toBe(401);
    expect((await login(user.email, password)).statusCode).toBe(200);
    const mine = await entries(`?actorId=${user.id}`);
    expect(mine.map((e) => e.action)).toEqual(['sign_in.succeeded', 'sign_in.failed']);
    expect(mine[0]).toMatchObject({
      actor: { type: 'user', id: user.id, name: 'Sam Signin' },
      target: { type: 'user', id: user.id },
    });
    expect(mine[0]!.ip).toBe('127.0.0.1');
    expect(JSON.stringify(mine)).not.toContain(password);
  });

  it('users created and changed (old and new values), API keys and tokens, never a secret', async () => {
    const created = await call('POST', '/v1/users', asAdmin, {
      name: 'Nia New',
      email: 'nia@acme.test',
      password: 'nia-secret-password',
      roles: ['agent'],
    });
    expect(created.statusCode, created.body).toBe(201);
    const niaId = created.json().data.id as number;
    await call('PATCH', `/v1/users/${niaId}`, asAdmin, { roles: ['admin'] });
    await call('PATCH', `/v1/users/${niaId}`, asAdmin, { active: false });
    const key = await call('POST', '/v1/api-keys', asAdmin, { name: 'deploy', scopes: ['read'] });
    const keyId = key.json().data.id as number;
    const rotated = await call('POST', `/v1/api-keys/${keyId}/rotate`, asAdmin);
    expect((await call('DELETE', `/v1/api-keys/${keyId}`, asAdmin)).statusCode).toBe(200);
    const pat = await call('POST', '/v1/personal-access-tokens', asAdmin, { name: 'laptop' });
    expect(pat.statusCode, pat.body).toBe(201);

    const mine = await entries(`?actorId=${admin.user.id}&limit=100`);
    const byAction = (a: string) => mine.filter((e) => e.action === a);
    expect(byAction('user.created')[0]).toMatchObject({
      target: { type: 'user', id: niaId },
      changes: { name: { old: null, new: 'Nia New' }, roles: { old: null, new: ['agent'] }, password: { old: null, new: '[set]' } },
    });
    expect(byAction('user.updated')[0]!.changes).toEqual({ roles: { old: ['agent'], new: ['admin'] } });
    expect(byAction('user.deactivated')[0]!.changes).toEqual({ active: { old: true, new: false } });
    expect(byAction('api_key.created')[0]).toMatchObject({ changes: { name: { new: 'deploy' }, key: { new: '[set]' } } });
    expect(byAction('api_key.rotated')).toHaveLength(1);
    expect(byAction('api_key.revoked')[0]!.target).toEqual({ type: 'api_key', id: keyId });
    expect(byAction('personal_access_token.created')[0]!.changes!.token).toEqual({ old: null, new: '[set]' });

    // No secret anywhere in the table, in any form.
    const table = await everything();
    for (const secret of ['nia-secret-password', key.json().data.key, rotated.json().data.key, pat.json().data.token, admin.password])
      expect(table).not.toContain(secret);
  });

  it('workspace settings and two-factor changes, and API keys as actors', async () => {
    await call('PATCH', '/v1/workspace', tenant.headers, { assignOnReply: false });
    const [entry] = await entries('?action=workspace.settings_changed');
    expect(entry).toMatchObject({ actor: { type: 'api_key', name: 'test key' }, changes: { assignOnReply: { old: true, new: false } } });
    const ai = { enabled: true, baseUrl: 'https://llm.example.com/v1', model: 'm', apiKey: 'sk-very-secret-model-key' };
    expect((await call('PATCH', '/v1/workspace', asAdmin, { ai })).statusCode).toBe(200);
    expect((await entries('?action=workspace.settings_changed'))[0]!.changes!.ai).toEqual({
      old: { enabled: false, baseUrl: null, model: null, apiKey: null },
      new: { enabled: true, baseUrl: 'https://llm.example.com/v1', model: 'm', apiKey: '[set]' },
    });
    expect(await everything()).not.toContain('sk-very-secret-model-key');
    // The same setting again changes nothing, and the entry says so.
    expect((await call('PATCH', '/v1/workspace', asAdmin, { ai: { enabled: true } })).statusCode).toBe(200);
    expect((await entries('?action=workspace.settings_changed'))[0]!.changes).toBeNull();
    await call('POST', `/v1/users/${admin.user.id}/2fa/reset`, tenant.headers);
    expect((await entries('?action=user.two_factor_reset'))[0]!.target).toEqual({ type: 'user', id: admin.user.id });
  });

  it('teams and webhook endpoints, the endpoint secret as [set]', async () => {
    const team = await call('POST', '/v1/teams', asAdmin, { name: 'Billing' });
    expect(team.statusCode, team.body).toBe(201);
    const teamId = team.json().data.id as number;
    await call('PATCH', `/v1/teams/${teamId}`, asAdmin, { name: 'Billing EU' });
    await call('PUT', `/v1/teams/${teamId}/members`, asAdmin, { userIds: [admin.user.id] });
    expect((await call('DELETE', `/v1/teams/${teamId}`, asAdmin)).statusCode).toBe(200);
    const endpoint = await call('POST', '/v1/webhook-endpoints', asAdmin, { url: 'https://hooks.example.com/inbox' });
    expect(endpoint.statusCode, endpoint.body).toBe(201);
    const endpointId = endpoint.json().data.id as number;
    const rotated = await call('POST', `/v1/webhook-endpoints/${endpointId}/rotate-secret`, asAdmin);
    await call('PATCH', `/v1/webhook-endpoints/${endpointId}`, asAdmin, { enabled: false });
    const actions = (await entries('?limit=100')).map((e) => e.action);
    for (const a of ['team.created', 'team.updated', 'team.members_changed', 'team.deleted', 'webhook_endpoint.created'])
      expect(actions).toContain(a);
    expect((await entries('?action=team.updated'))[0]!.changes).toEqual({ name: { old: 'Billing', new: 'Billing EU' } });
    expect((await entries('?action=team.members_changed'))[0]!.changes).toEqual({ userIds: { old: [], new: [admin.user.id] } });
    expect((await entries('?action=webhook_endpoint.created'))[0]!.changes!.secret).toEqual({ old: null, new: '[set]' });
    expect((await entries('?action=webhook_endpoint.secret_rotated'))[0]!.changes!.secret).toEqual({ old: '[set]', new: '[set]' });
    expect((await entries('?action=webhook_endpoint.updated'))[0]!.changes!.enabled).toEqual({ old: true, new: false });
    const table = await everything();
    expect(table).not.toContain(endpoint.json().data.secret);
    expect(table).not.toContain(rotated.json().data.secret);
  });

  it('SLA policies and macros, with what changed', async () => {
    const policy = await call('POST', '/v1/sla-policies', asAdmin, {
      name: 'Urgent',
      firstResponse: 'PT1H',
      conditions: { priorities: ['urgent'] },
    });
    expect(policy.statusCode, policy.body).toBe(201);
    const policyId = policy.json().data.id as number;
    expect((await call('PATCH', `/v1/sla-policies/${policyId}`, asAdmin, { firstResponse: 'PT30M' })).statusCode).toBe(200);
    expect((await call('DELETE', `/v1/sla-policies/${policyId}`, asAdmin)).statusCode).toBe(200);
    const [created] = await entries('?action=sla_policy.created');
    expect(created).toMatchObject({ actor: { type: 'user', id: admin.user.id }, target: { type: 'sla_policy', id: policyId } });
    expect(created!.changes).toMatchObject({ name: { old: null, new: 'Urgent' }, firstResponse: { old: null, new: 'PT1H' } });
    expect((await entries('?action=sla_policy.updated'))[0]!.changes).toEqual({ firstResponse: { old: 'PT1H', new: 'PT30M' } });
    expect((await entries('?action=sla_policy.deleted'))[0]!.target).toEqual({ type: 'sla_policy', id: policyId });
    // A refused change is no change: nothing is written for it.
    expect((await call('POST', '/v1/sla-policies', asAdmin, { name: 'No target' })).statusCode).toBe(422);
    expect(await entries('?action=sla_policy.created')).toHaveLength(1);

    const macro = await call('POST', '/v1/macros', asAdmin, { name: 'Close', actions: [{ type: 'add_labels', labels: ['done'] }] });
    expect(macro.statusCode, macro.body).toBe(201);
    const macroId = macro.json().data.id as number;
    expect((await call('PATCH', `/v1/macros/${macroId}`, asAdmin, { name: 'Close it' })).statusCode).toBe(200);
    expect((await call('DELETE', `/v1/macros/${macroId}`, asAdmin)).statusCode).toBe(200);
    for (const action of ['macro.created', 'macro.updated', 'macro.deleted'])
      expect((await entries(`?action=${action}`)).map((e) => e.target)).toEqual([{ type: 'macro', id: macroId }]);
    expect((await entries('?action=macro.created'))[0]!.changes).toEqual({
      name: { old: null, new: 'Close' },
      actions: { old: null, new: [{ type: 'add_labels', labels: ['done'] }] },
      shared: { old: null, new: true },
    });
    expect((await entries('?action=macro.updated'))[0]!.changes).toEqual({ name: { old: 'Close', new: 'Close it' } });
  });

  it('connections created, changed and deleted, their credentials as [set]', async () => {
    const created = await call('POST', '/v1/connections', asAdmin, {
      integrationKey: 'sms',
      externalAccountId: '+15550001111',
      name: 'Support line',
      credentials: { accountSid: 'AC-audit', accessToken: 'sms-audit-token-1' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id as number;
    const renamed = await call('PATCH', `/v1/connections/${id}`, asAdmin, {
      name: 'Sales line',
      credentials: { accountSid: 'AC-audit', accessToken: 'sms-audit-token-2' },
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
    // Webhook secrets likewise: set before, set after; removed, set before and null after.
    expect(
      (await call('PATCH', `/v1/connections/${id}`, asAdmin, { webhookSecrets: { webhookSecret: 'sms-hook-secret-audit-1' } })).statusCode,
    ).toBe(200);
    expect(
      (await call('PATCH', `/v1/connections/${id}`, asAdmin, { webhookSecrets: { webhookSecret: 'sms-hook-secret-audit-2' } })).statusCode,
    ).toBe(200);
    expect((await call('PATCH', `/v1/connections/${id}`, asAdmin, { webhookSecrets: null })).statusCode).toBe(200);
    expect((await entries('?action=connection.updated')).slice(0, 3).map((e) => e.changes)).toEqual([
      { webhookSecrets: { old: '[set]', new: null } },
      { webhookSecrets: { old: '[set]', new: '[set]' } },
      { webhookSecrets: { old: null, new: '[set]' } },
    ]);
    expect(await everything()).not.toContain('sms-hook-secret-audit');
    expect((await call('DELETE', `/v1/connections/${id}`, asAdmin)).statusCode).toBe(200);
    const target = { type: 'connection', id };
    const [made] = await entries('?action=connection.created');
    expect(made).toMatchObject({ actor: { type: 'user', id: admin.user.id }, target });
    expect(made!.changes).toMatchObject({
      integrationKey: { old: null, new: 'sms' },
      name: { old: null, new: 'Support line' },
      credentials: { old: null, new: '[set]' },
    });
    const [changed] = (await entries('?action=connection.updated')).slice(3);
    expect(changed).toMatchObject({ target });
    expect(changed!.changes).toEqual({ name: { old: 'Support line', new: 'Sales line' }, credentials: { old: '[set]', new: '[set]' } });
    expect((await entries('?action=connection.deleted'))[0]).toMatchObject({ actor: { type: 'user', id: admin.user.id }, target });
    // A connection the operator makes for the workspace is the operator's entry.
    const engaged = await call('POST', `/v1/engage/workspaces/${tenant.workspace.id}/connections`, adminHeaders(), {
      integrationKey: 'sms',
      externalAccountId: '+15550002222',
      name: 'Operator line',
    });
    expect(engaged.statusCode, engaged.body).toBe(201);
    expect((await entries('?action=connection.created'))[0]).toMatchObject({
      actor: { type: 'operator' },
      target: { type: 'connection', id: engaged.json().data.id },
    });
    const table = await everything();
    expect(table).not.toContain('sms-audit-token-1');
    expect(table).not.toContain('sms-audit-token-2');
  });

  it('password changes and resets, never the password', async () => {
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id, { name: 'Pat Password' });
    const token = (await login(user.email, password)).json().access_token as string;
    const newPassword = 'a fresh and long password';
    const changed = await call(
      'POST',
      '/v1/users/me/password',
      { authorization: `Bearer ${token}` },
      { currentPassword: password, newPassword },
    );
    expect(changed.statusCode, changed.body).toBe(200);
    const refused = await call(
      'POST',
      '/v1/users/me/password',
      { authorization: `Bearer ${token}` },
      {
        currentPassword: 'not the password',
        newPassword: 'another long password',
      },
    );
    expect(refused.statusCode).toBe(403);
    const mine = await entries(`?actorId=${user.id}&action=user.password_changed`);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ actor: { type: 'user', id: user.id }, target: { type: 'user', id: user.id }, changes: null });
    expect(await everything()).not.toContain(newPassword);
  });

  it('nothing for a change that did not happen: the entry is in its transaction', async () => {
    const before = (await entries('?action=user.created&limit=100')).length;
    const dup = await call('POST', '/v1/users', asAdmin, { name: 'Dup', email: admin.user.email, password: 'long enough password' });
    expect(dup.statusCode).toBe(409);
    expect((await entries('?action=user.created&limit=100')).length).toBe(before);
  });
});

describe('GET /v1/audit-log', () => {
  it('is for admins of the workspace only, and shows no other workspace', async () => {
    const agent = await makeUser(ctx.deps, tenant.workspace.id);
    const agentToken = (await login(agent.user.email, agent.password)).json().access_token as string;
    expect((await call('GET', '/v1/audit-log', { authorization: `Bearer ${agentToken}` })).statusCode).toBe(403);
    const other = await makeTenant(ctx.deps);
    await makeUser(ctx.deps, other.workspace.id).then((u) => login(u.user.email, u.password));
    expect(await entries('', other.headers)).toHaveLength(1);
    const ours = await entries('?limit=100');
    expect(ours.every((e) => e.actor.id === null || e.actor.type !== 'user' || e.actor.name !== null)).toBe(true);
    expect(JSON.stringify(ours)).not.toContain(`"workspace_id":${other.workspace.id}`);
  });

  it('walks cursor pages newest first and filters by action, actor and time', async () => {
    const all = await entries('?limit=100');
    const walked: number[] = [];
    let cursor: string | undefined;
    do {
      const res = await call('GET', `/v1/audit-log?limit=2${cursor ? `&cursor=${cursor}` : ''}`, asAdmin);
      walked.push(...(res.json().data as Entry[]).map((e) => e.id));
      cursor = res.json().meta.nextCursor;
    } while (cursor);
    expect(walked).toEqual(all.map((e) => e.id));
    expect([...walked].sort((a, b) => b - a)).toEqual(walked);
    const middle = all[Math.floor(all.length / 2)]!;
    const from = await entries(`?from=${encodeURIComponent(middle.at)}&limit=100`);
    expect(from.every((e) => e.at >= middle.at)).toBe(true);
    const to = await entries(`?to=${encodeURIComponent(middle.at)}&limit=100`);
    expect(to.every((e) => e.at < middle.at)).toBe(true);
    expect(from.length + to.length).toBe(all.length);
    expect((await entries('?action=sign_in.failed')).every((e) => e.action === 'sign_in.failed')).toBe(true);
    expect((await call('GET', '/v1/audit-log?from=yesterday', asAdmin)).statusCode).toBe(422);
    // A leap second passes the date-time format but is no Date: 422 naming the bound, never a 500.
    for (const [url, field] of [
      ['/v1/audit-log?from=2026-12-31T23:59:60Z', 'from'],
      ['/v1/audit-log?to=2026-12-31T23:59:60Z', 'to'],
    ] as const) {
      const leap = await call('GET', url, asAdmin);
      expect(leap.statusCode, leap.body).toBe(422);
      expect(leap.json().error).toMatchObject({ code: 'validation_failed', message: expect.stringContaining(field) });
    }
    const operatorLeap = await call('GET', '/v1/operator/audit-log?to=2026-06-30T23:59:60Z', adminHeaders());
    expect(operatorLeap.statusCode, operatorLeap.body).toBe(422);
    // The filters as written, `?actorId=&action=&from=&to=`, with nothing in them: no filter.
    expect(await entries('?actorId=&action=&from=&to=&limit=100')).toEqual(await entries('?limit=100'));
  });

  it('refuses an actorId no id can be (beyond 2^53, 1e309) with a 422 on both lists, never a 500', async () => {
    for (const value of ['99999999999999999999', '1e309', '9007199254740993'])
      for (const [url, headers] of [
        [`/v1/audit-log?actorId=${value}`, asAdmin],
        [`/v1/operator/audit-log?actorId=${value}`, adminHeaders()],
      ] as const) {
        const res = await call('GET', url, headers);
        expect(res.statusCode, `${url}: ${res.body}`).toBe(422);
        expect(res.json().error).toMatchObject({ code: 'validation_failed', message: expect.stringContaining('actorId') });
      }
    expect(await entries('?actorId=2147483648')).toEqual([]);
  });
});

describe('GET /v1/operator/audit-log', () => {
  it("lists the operator's own actions and needs the operator", async () => {
    const made = await call('POST', '/v1/engage/workspaces', adminHeaders(), { name: 'Provisioned' });
    expect(made.statusCode, made.body).toBe(201);
    const res = await call('GET', '/v1/operator/audit-log', adminHeaders());
    expect(res.statusCode, res.body).toBe(200);
    const list = res.json().data as Entry[];
    expect(list.every((e) => e.actor.type === 'operator')).toBe(true);
    expect(list[0]).toMatchObject({ action: 'workspace.created', actor: { type: 'operator', id: null, name: 'operator' } });
    expect((await call('GET', '/v1/operator/audit-log', asAdmin)).statusCode).toBe(403);
  });

  it('is an operator list: offset pages with page, limit, total and hasMore, newest first', async () => {
    for (const name of ['Paged 1', 'Paged 2', 'Paged 3'])
      expect((await call('POST', '/v1/engage/workspaces', adminHeaders(), { name })).statusCode).toBe(201);
    const page = async (query: string) => {
      const res = await call('GET', `/v1/operator/audit-log${query}`, adminHeaders());
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { data: Entry[]; meta: { page: number; limit: number; total: number; hasMore: boolean } };
    };
    const all = await page('?action=workspace.created&limit=1000');
    const total = all.data.length;
    expect(total).toBeGreaterThanOrEqual(3);
    expect(all.meta).toMatchObject({ page: 1, limit: 200, total, hasMore: false });
    expect(all.data.map((e) => e.id)).toEqual([...all.data.map((e) => e.id)].sort((a, b) => b - a));

    const first = await page('?action=workspace.created&limit=2');
    expect(first.meta).toMatchObject({ page: 1, limit: 2, total, hasMore: true });
    const second = await page('?action=workspace.created&limit=2&page=2');
    expect(second.meta).toMatchObject({ page: 2, limit: 2, total, hasMore: total > 4 });
    expect([...first.data, ...second.data].map((e) => e.id)).toEqual(all.data.slice(0, 4).map((e) => e.id));
    expect((await page('')).meta).toMatchObject({ page: 1, limit: 50 });
  });
});

describe('append-only', () => {
  it('refuses UPDATE, DELETE and TRUNCATE in the database itself', async () => {
    const [first] = await entries();
    for (const statement of [
      sql`UPDATE audit_log SET action = 'forged' WHERE id = ${first!.id}`,
      sql`DELETE FROM audit_log WHERE id = ${first!.id}`,
      sql`TRUNCATE audit_log`,
    ]) {
      await expect(statement.execute(ctx.deps.db)).rejects.toThrow(/append-only/);
    }
    expect((await entries())[0]).toEqual(first);
  });

  it('lets retention delete entries older than INBOX_AUDIT_RETENTION_DAYS, and nothing younger', async () => {
    expect(ctx.deps.config.auditRetentionDays).toBe(365);
    const old = new Date(Date.now() - 400 * 86_400_000);
    await sql`INSERT INTO audit_log (workspace_id, at, actor_type, action) VALUES (${tenant.workspace.id}, ${old}, 'system', 'ancient')`.execute(
      ctx.deps.db,
    );
    const count = async () => Number((await sql<{ n: string }>`SELECT count(*) AS n FROM audit_log`.execute(ctx.deps.db)).rows[0]!.n);
    const before = await count();
    // A retention transaction that names fewer days than an entry's age still cannot delete a young one.
    await expect(
      ctx.deps.db.transaction().execute(async (trx) => {
        await sql`SELECT set_config('inbox.audit_retention_days', '365', true)`.execute(trx);
        await sql`DELETE FROM audit_log WHERE action <> 'ancient'`.execute(trx);
      }),
    ).rejects.toThrow(/append-only/);
    const pruned = await pruneAuditLog(ctx.deps.db, ctx.deps.config.auditRetentionDays, new Date());
    expect(pruned).toEqual({ deleted: 1, more: false });
    expect(await count()).toBe(before - 1);
  });
});
