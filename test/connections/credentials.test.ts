import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { connectionCredentials } from '../../src/connections/connection-credentials.js';
import { findConnection, updateConnection } from '../../src/connections/connections.queries.js';
import { SecretBoxError } from '../../src/crypto/secret-box.js';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant, makeUser } from '../helpers/factories.js';

const logLines: Record<string, unknown>[] = [];
const ctx = await useTestContext({
  logLines,
  env: { INBOX_INTEGRATIONS: JSON.stringify({ whatsapp_session: { webhookSecret: 'w'.repeat(16) } }) },
});

const tenant = await makeTenant(ctx.deps);
const unique = () => randomBytes(4).toString('hex');

async function engageCreate(workspaceId: number, body: Record<string, unknown>) {
  return ctx.app.inject({
    method: 'POST',
    url: `/v1/engage/workspaces/${workspaceId}/connections`,
    headers: adminHeaders(),
    payload: { externalAccountId: `acct-${unique()}`, name: 'Line', ...body },
  });
}

async function patch(id: number, body: unknown, headers: Record<string, string> = tenant.headers) {
  return ctx.app.inject({ method: 'PATCH', url: `/v1/connections/${id}`, headers, payload: body as object });
}

async function sealedOf(id: number) {
  const row = await ctx.deps.db.selectFrom('connections').select('credentials_sealed').where('id', '=', id).executeTakeFirstOrThrow();
  return row.credentials_sealed;
}

describe('credentials on create (engage)', () => {
  it('stores them sealed and answers hasCredentials, never the values', async () => {
    const token = `EAAG-create-${unique()}`;
    const res = await engageCreate(tenant.workspace.id, { integrationKey: 'whatsapp', credentials: { accessToken: token } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data).toEqual({
      id: expect.any(Number),
      integrationKey: 'whatsapp',
      externalAccountId: expect.any(String),
      name: 'Line',
      hasCredentials: true,
      autoAssign: false,
      businessAccountId: null,
      templatesSync: null,
      managedBy: 'operator',
      teamId: null,
      webhookUrl: expect.stringMatching(/\/webhooks\/whatsapp\/ck_/),
      hasWebhookSecrets: false,
      webhookVerifyToken: expect.stringMatching(/^vt_/),
      lastDeliveryAt: null,
      lastErrorAt: null,
      lastError: null,
      awayMessage: null,
      csat: { enabled: false, question: null },
      createdAt: expect.any(String),
    });
    expect(res.body).not.toContain(token);
    const id = res.json().data.id as number;
    const sealed = await sealedOf(id);
    expect(sealed).toBeInstanceOf(Buffer);
    expect(sealed!.includes(Buffer.from(token))).toBe(false);
    expect(await connectionCredentials(ctx.deps, id)).toEqual({ accessToken: token });
  });

  it('without credentials: hasCredentials false, connectionCredentials null', async () => {
    const res = await engageCreate(tenant.workspace.id, { integrationKey: 'whatsapp' });
    expect(res.json().data.hasCredentials).toBe(false);
    expect(await connectionCredentials(ctx.deps, res.json().data.id)).toBeNull();
    expect(await connectionCredentials(ctx.deps, 2_000_000_000)).toBeNull(); // no such connection
  });

  it('refuses bad credentials with 422 and creates nothing', async () => {
    const account = `acct-${unique()}`;
    for (const [integrationKey, credentials] of [
      ['ai', { accessToken: 't' }],
      ['livechat', { accessToken: 't' }],
      ['sms', { accessToken: 't' }],
      ['whatsapp', { accessToken: 't', password: 'p' }],
    ] as const) {
      const res = await engageCreate(tenant.workspace.id, { integrationKey, externalAccountId: account, credentials });
      expect(res.statusCode, `${integrationKey} ${res.body}`).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
    const rows = await ctx.deps.db.selectFrom('connections').select('id').where('external_account_id', '=', account).execute();
    expect(rows).toEqual([]);
  });
});

describe('PATCH /v1/connections/:id', () => {
  it('sets, replaces, keeps on rename, and clears (null) the credentials', async () => {
    const conn = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms' });
    expect(conn.hasCredentials).toBe(false);

    let res = await patch(conn.id, { credentials: { accountSid: 'AC123', accessToken: 'sms-token-1' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ id: conn.id, integrationKey: 'sms', name: 'Test connection', hasCredentials: true });
    expect(res.body).not.toContain('sms-token-1');
    expect(await connectionCredentials(ctx.deps, conn.id)).toEqual({ accountSid: 'AC123', accessToken: 'sms-token-1' });

    res = await patch(conn.id, { name: 'Renamed' });
    expect(res.json().data).toMatchObject({ name: 'Renamed', hasCredentials: true });
    expect(await connectionCredentials(ctx.deps, conn.id)).toEqual({ accountSid: 'AC123', accessToken: 'sms-token-1' });

    // A new set replaces the old one whole.
    res = await patch(conn.id, { credentials: { accountSid: 'AC456', accessToken: 'sms-token-2' } });
    expect(await connectionCredentials(ctx.deps, conn.id)).toEqual({ accountSid: 'AC456', accessToken: 'sms-token-2' });
    res = await patch(conn.id, { credentials: { accountSid: 'AC456', accessToken: 'sms-token-3' } });
    expect(await connectionCredentials(ctx.deps, conn.id)).toEqual({ accountSid: 'AC456', accessToken: 'sms-token-3' });

    res = await patch(conn.id, { credentials: null });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.hasCredentials).toBe(false);
    expect(await sealedOf(conn.id)).toBeNull();
    expect(await connectionCredentials(ctx.deps, conn.id)).toBeNull();
  });

  it('takes the fields each integration uses', async () => {
    for (const [integrationKey, credentials] of [
      ['whatsapp', { accessToken: 'a' }],
      ['social_one.native', { accessToken: 'a' }],
      ['social_two.native', { accessToken: 'a' }],
      ['aggregator', { accessToken: 'a' }],
      ['whatsapp_session', { accessToken: 'a' }],
      ['sms', { accountSid: 'AC1', accessToken: 'a' }],
      ['email', { smtpUrl: 'smtps://user:pass@smtp.example.test:465' }],
      ['email', { smtpUrl: 'smtp://127.0.0.1:2525' }],
    ] as const) {
      const conn = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey });
      const res = await patch(conn.id, { credentials });
      expect(res.statusCode, `${integrationKey} ${res.body}`).toBe(200);
      expect(await connectionCredentials(ctx.deps, conn.id)).toEqual(credentials);
    }
  });

  it.each([
    ['an unknown field', 'whatsapp', { credentials: { accessToken: 'a', token: 'b' } }, 'body.credentials must not have property "token"'],
    [
      'a field another integration uses',
      'whatsapp',
      { credentials: { accessToken: 'a', accountSid: 'AC1' } },
      'credentials.accountSid is not used by whatsapp connections (fields: accessToken)',
    ],
    [
      'a missing field',
      'sms',
      { credentials: { accessToken: 'a' } },
      'sms credentials need accountSid and accessToken (missing: accountSid)',
    ],
    ['an empty object', 'whatsapp', { credentials: {} }, 'whatsapp credentials need accessToken (missing: accessToken)'],
    ['a wrong type', 'whatsapp', { credentials: { accessToken: 42 } }, 'body.credentials.accessToken must be string'],
    ['credentials that are not an object', 'whatsapp', { credentials: 'token' }, 'body.credentials must be object'],
    [
      'an over-long value',
      'whatsapp',
      { credentials: { accessToken: 'x'.repeat(4097) } },
      'body.credentials.accessToken must NOT have more than 4096 characters',
    ],
    [
      'an empty value',
      'whatsapp',
      { credentials: { accessToken: '' } },
      'body.credentials.accessToken must NOT have fewer than 1 characters',
    ],
    [
      'an smtpUrl that is not smtp(s)',
      'email',
      { credentials: { smtpUrl: 'http://smtp.example.test' } },
      'credentials.smtpUrl must be an smtp:// or smtps:// URL',
    ],
    [
      "a host of its own (apiBaseUrl is the operator's)",
      'aggregator',
      { credentials: { accessToken: 'a', apiBaseUrl: 'http://169.254.169.254/latest' } },
      'body.credentials must not have property "apiBaseUrl"',
    ],
    [
      'credentials for ai',
      'ai',
      { credentials: { accessToken: 'a' } },
      "ai connections take no credentials: they do not send through a provider's API",
    ],
    [
      'credentials for livechat',
      'livechat',
      { credentials: { accessToken: 'a' } },
      "livechat connections take no credentials: they do not send through a provider's API",
    ],
    ['an unknown top-level field', 'whatsapp', { name: 'x', credential: { accessToken: 'a' } }, 'body must not have property "credential"'],
    ['an empty body', 'whatsapp', {}, 'body must NOT have fewer than 1 properties'],
  ])('refuses %s with 422 validation_failed and changes nothing', async (_what, integrationKey, body, message) => {
    const conn = await makeConnection(ctx.deps, tenant.workspace.id, {
      integrationKey,
      credentials: integrationKey === 'whatsapp' ? { accessToken: 'before' } : undefined,
    });
    const res = await patch(conn.id, body);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().error).toEqual({ code: 'validation_failed', message });
    expect(await connectionCredentials(ctx.deps, conn.id)).toEqual(integrationKey === 'whatsapp' ? { accessToken: 'before' } : null);
  });

  it('is for workspace admins: a JWT admin or an admin key; others 401/403 before the body is read', async () => {
    const conn = await makeConnection(ctx.deps, tenant.workspace.id);
    const { user: admin, password } = await makeUser(ctx.deps, tenant.workspace.id, { roles: ['admin'] });
    const { user: agent, password: agentPassword } = await makeUser(ctx.deps, tenant.workspace.id, { roles: ['agent'] });
    const login = async (email: string, pw: string) => ({
      authorization: `Bearer ${(await ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email, password: pw } })).json().access_token}`,
    });

    const asAdmin = await patch(conn.id, { credentials: { accessToken: 'by-jwt-admin' } }, await login(admin.email, password));
    expect(asAdmin.statusCode, asAdmin.body).toBe(200);
    expect(await connectionCredentials(ctx.deps, conn.id)).toEqual({ accessToken: 'by-jwt-admin' });

    const writer = await makeTenant(ctx.deps, { scopes: ['write'] });
    const writerOwn = await makeConnection(ctx.deps, writer.workspace.id);
    const invalid = { credentials: { accessToken: 42 } };
    for (const [who, headers, target, status] of [
      ['a JWT agent', await login(agent.email, agentPassword), conn.id, 403],
      ['a write key', writer.headers, writerOwn.id, 403],
      ['nobody', {}, conn.id, 401],
      ['the engage admin key', adminHeaders(), conn.id, 401],
    ] as const) {
      for (const body of [{ credentials: { accessToken: 'nope' } }, invalid]) {
        const res = await patch(target, body, headers);
        expect(res.statusCode, `${who} ${res.body}`).toBe(status);
      }
    }
    expect(await connectionCredentials(ctx.deps, conn.id)).toEqual({ accessToken: 'by-jwt-admin' });
    expect(await connectionCredentials(ctx.deps, writerOwn.id)).toBeNull();
  });

  it("answers 404 for another workspace's connection and for none, and changes nothing", async () => {
    const other = await makeTenant(ctx.deps);
    const theirs = await makeConnection(ctx.deps, other.workspace.id, { credentials: { accessToken: 'theirs' } });
    for (const id of [theirs.id, 2_000_000_000]) {
      for (const body of [{ credentials: { accessToken: 'mine' } }, { credentials: null }, { name: 'mine' }]) {
        const res = await patch(id, body);
        expect(res.statusCode, res.body).toBe(404);
        expect(res.json().error.code).toBe('not_found');
      }
    }
    expect(await connectionCredentials(ctx.deps, theirs.id)).toEqual({ accessToken: 'theirs' });
    // Both the lookup and the write are scoped to the workspace, each on its own.
    expect(await findConnection(ctx.deps.db, tenant.workspace.id, theirs.id)).toBeUndefined();
    expect(await updateConnection(ctx.deps.db, tenant.workspace.id, theirs.id, { name: 'mine', credentialsSealed: null })).toBeUndefined();
    expect(await connectionCredentials(ctx.deps, theirs.id)).toEqual({ accessToken: 'theirs' });
  });
});

describe('write-only answers', () => {
  it('GET /v1/connections and the operator list say hasCredentials and never carry the values', async () => {
    const t = await makeTenant(ctx.deps);
    const secret = `list-secret-${unique()}`;
    const withCreds = await makeConnection(ctx.deps, t.workspace.id, { credentials: { accessToken: secret } });
    const without = await makeConnection(ctx.deps, t.workspace.id);
    const list = await ctx.app.inject({ method: 'GET', url: '/v1/connections', headers: t.headers });
    expect(list.body).not.toContain(secret);
    expect(Object.fromEntries(list.json().data.map((c: { id: number; hasCredentials: boolean }) => [c.id, c.hasCredentials]))).toEqual({
      [withCreds.id]: true,
      [without.id]: false,
    });
    const ops = await ctx.app.inject({
      method: 'GET',
      url: `/v1/operator/connections?workspaceId=${t.workspace.id}`,
      headers: adminHeaders(),
    });
    expect(ops.statusCode).toBe(200);
    expect(ops.body).not.toContain(secret);
    expect(
      ops
        .json()
        .data.map((c: { hasCredentials: boolean }) => c.hasCredentials)
        .sort(),
    ).toEqual([false, true]);
    for (const c of [...list.json().data, ...ops.json().data]) expect(Object.keys(c)).not.toContain('credentials');
  });
});

describe('connectionCredentials (for the reply sender)', () => {
  it('refuses to open a value copied from another connection (AAD binds it to its row)', async () => {
    const a = await makeConnection(ctx.deps, tenant.workspace.id, { credentials: { accessToken: 'of-a' } });
    const b = await makeConnection(ctx.deps, tenant.workspace.id, { credentials: { accessToken: 'of-b' } });
    await ctx.deps.db
      .updateTable('connections')
      .set({ credentials_sealed: await sealedOf(a.id) })
      .where('id', '=', b.id)
      .execute();
    await expect(connectionCredentials(ctx.deps, b.id)).rejects.toThrow(SecretBoxError);
    expect(await connectionCredentials(ctx.deps, a.id)).toEqual({ accessToken: 'of-a' });
  });

  it('refuses to open under another INBOX_SECRET_KEY', async () => {
    const conn = await makeConnection(ctx.deps, tenant.workspace.id, { credentials: { accessToken: 'keyed' } });
    await expect(connectionCredentials({ ...ctx.deps, secretKey: randomBytes(32) }, conn.id)).rejects.toThrow(SecretBoxError);
  });
});

describe('logs', () => {
  it('never carry credentials: every line written while creating and patching is searched', async () => {
    const token = `log-token-${unique()}`;
    const sid = `AClogsid${unique()}`;
    const smtpPassword = `smtp-pw-${unique()}`;
    const from = logLines.length;
    const created = await engageCreate(tenant.workspace.id, {
      integrationKey: 'sms',
      credentials: { accountSid: sid, accessToken: token },
    });
    expect(created.statusCode).toBe(201);
    const id = created.json().data.id as number;
    expect((await patch(id, { credentials: { accountSid: sid, accessToken: `${token}-2` } })).statusCode).toBe(200);
    expect((await patch(id, { credentials: { accountSid: sid, accessToken: `${token}-3`, extra: 'x' } })).statusCode).toBe(422);
    const email = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'email' });
    expect((await patch(email.id, { credentials: { smtpUrl: `ftp://u:${smtpPassword}@h` } })).statusCode).toBe(422);
    expect((await patch(email.id, { credentials: { smtpUrl: `smtp://u:${smtpPassword}@h` } })).statusCode).toBe(200);
    const written = logLines.slice(from).map((l) => JSON.stringify(l));
    expect(written.length).toBeGreaterThan(0); // requests were logged
    for (const line of written) {
      for (const secret of [token, sid, smtpPassword]) expect(line).not.toContain(secret);
    }
  });
});
