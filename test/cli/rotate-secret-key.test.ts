import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { SEALED_AI_KEYS } from '../../src/ai/ai-settings.js';
import { SEALED_TOTP_SECRETS } from '../../src/auth/two-factor.service.js';
import { connectionCredentials } from '../../src/connections/connection-credentials.js';
import { openWebhookSecrets, sealWebhookSecrets } from '../../src/connections/webhook-secrets.js';
import { open, openingKeys, SecretBoxError, seal } from '../../src/crypto/secret-box.js';
import type { Deps } from '../../src/deps.js';
import { rotateSecretKey, SEALED_COLUMNS } from '../../src/operator/rotate-secret-key.js';
import { signingSecrets } from '../../src/webhooks-out/endpoint-secrets.js';
import { SEALED_SSO_SECRETS } from '../../src/workspaces/sso-setting.js';
import { SECRET_KEY_HEX, useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { signedInUser } from '../helpers/threads.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const ctx = await useTestContext({ env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
const db = ctx.deps.db;
const OLD = Buffer.from(SECRET_KEY_HEX, 'hex');
const NEW = randomBytes(32);

/** `inbox rotate-secret-key` against this file's database, as an operator runs it. */
function inbox(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/inbox.js'), 'rotate-secret-key'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: ctx.database.url, LOG_LEVEL: 'warn', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The deps of a process started with `secretKey` as INBOX_SECRET_KEY and `previous` as INBOX_SECRET_KEY_PREVIOUS. */
const withKeys = (secretKey: Buffer, previous?: Buffer): Deps => ({
  ...ctx.deps,
  secretKey,
  config: { ...ctx.deps.config, previousSecretKey: previous },
});

/** Every kind of sealed secret, as each feature reads it with `deps`' keys. */
async function readAll(deps: Deps, ids: { connection: number; endpoint: number; user: number; workspace: number }) {
  const connection = await db.selectFrom('connections').selectAll().where('id', '=', ids.connection).executeTakeFirstOrThrow();
  const endpoint = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', ids.endpoint).executeTakeFirstOrThrow();
  const user = await db.selectFrom('users').selectAll().where('id', '=', ids.user).executeTakeFirstOrThrow();
  const workspace = await db.selectFrom('workspaces').selectAll().where('id', '=', ids.workspace).executeTakeFirstOrThrow();
  const ai = await db.selectFrom('workspace_ai').selectAll().where('workspace_id', '=', ids.workspace).executeTakeFirstOrThrow();
  return {
    credentials: await connectionCredentials(deps, ids.connection),
    webhookSecrets: openWebhookSecrets(openingKeys(deps), ids.connection, connection.webhook_secrets_sealed!),
    signing: signingSecrets(openingKeys(deps), endpoint, new Date()),
    totp: open(openingKeys(deps), user.totp_secret!, SEALED_TOTP_SECRETS.aad(user.id)).toString('utf8'),
    sso: open(openingKeys(deps), workspace.sso_client_secret!, SEALED_SSO_SECRETS.aad(ids.workspace)).toString('utf8'),
    ai: open(openingKeys(deps), ai.api_key_sealed!, SEALED_AI_KEYS.aad(ids.workspace)).toString('utf8'),
  };
}

describe('inbox rotate-secret-key', () => {
  it('seals every kind of secret again under the new key; the old one then opens nothing; a second run changes nothing', async () => {
    // Sealed under the old key by the features themselves.
    const tenant = await makeTenant(ctx.deps);
    const connection = await makeConnection(ctx.deps, tenant.workspace.id, { credentials: { accessToken: 'access-token-1' } });
    await db
      .updateTable('connections')
      .set({ webhook_secrets_sealed: sealWebhookSecrets(OLD, connection.id, { webhookSecret: 'webhook-secret-1' }) })
      .where('id', '=', connection.id)
      .execute();
    const created = await ctx.app.inject({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      headers: tenant.headers,
      payload: { url: 'http://127.0.0.1:9/hook', events: ['*'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const endpointId = created.json().data.id;
    const rotated = await ctx.app.inject({
      method: 'POST',
      url: `/v1/webhook-endpoints/${endpointId}/rotate-secret`,
      headers: tenant.headers,
    });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const admin = await signedInUser(ctx.app, ctx.deps, tenant.workspace.id, ['admin']);
    const setup = await ctx.app.inject({ method: 'POST', url: '/v1/users/me/2fa/setup', headers: admin.headers });
    expect(setup.statusCode, setup.body).toBe(200);
    // A value no key opens (sealed under a key since lost) is reported, never touched.
    const stray = await makeConnection(ctx.deps, tenant.workspace.id);
    const lost = seal(randomBytes(32), '{"accessToken":"x"}', `connection:${stray.id}`);
    await db.updateTable('connections').set({ credentials_sealed: lost }).where('id', '=', stray.id).execute();

    const ws = tenant.workspace.id;
    await db
      .updateTable('workspaces')
      .set({ sso_client_secret: seal(OLD, 'sso-client-secret-1', SEALED_SSO_SECRETS.aad(ws)) })
      .where('id', '=', ws)
      .execute();
    await db
      .insertInto('workspace_ai')
      .values({ workspace_id: ws, api_key_sealed: seal(OLD, 'ai-key-1', SEALED_AI_KEYS.aad(ws)), enabled: false, updated_at: new Date() })
      .execute();
    const ids = { connection: connection.id, endpoint: endpointId, user: admin.user.id, workspace: ws };
    const expected = {
      credentials: { accessToken: 'access-token-1' },
      webhookSecrets: { webhookSecret: 'webhook-secret-1' },
      signing: [rotated.json().data.secret, created.json().data.secret],
      totp: setup.json().data.secret,
      sso: 'sso-client-secret-1',
      ai: 'ai-key-1',
    };
    expect(await readAll(ctx.deps, ids)).toEqual(expected);
    // During the rotation: the new key seals, the previous one still opens what it sealed.
    expect(await readAll(withKeys(NEW, OLD), ids)).toEqual(expected);
    await expect(readAll(withKeys(NEW), ids)).rejects.toBeInstanceOf(SecretBoxError);

    const without = await inbox({ INBOX_SECRET_KEY: NEW.toString('hex') });
    expect(without.code).toBe(64);
    expect(without.stderr).toContain('INBOX_SECRET_KEY_PREVIOUS');
    const run = await inbox({ INBOX_SECRET_KEY: NEW.toString('hex'), INBOX_SECRET_KEY_PREVIOUS: SECRET_KEY_HEX });
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout);
    expect(report.rotated).toBe(false);
    const byColumn = Object.fromEntries(report.columns.map((c: { column: string }) => [c.column, c]));
    expect(byColumn['connections.credentials_sealed']).toMatchObject({ resealed: 1, current: 0, unreadable: [stray.id] });
    for (const column of [
      'connections.webhook_secrets_sealed',
      'webhook_endpoints.previous_secret_sealed',
      'users.totp_secret',
      'workspaces.sso_client_secret',
      'workspace_ai.api_key_sealed',
    ])
      expect(byColumn[column]).toMatchObject({ resealed: 1, current: 0, unreadable: [] });
    expect(byColumn['webhook_endpoints.secret_sealed'].resealed).toBeGreaterThanOrEqual(1);

    // After it: the new key alone opens everything, the old one nothing.
    expect(await readAll(withKeys(NEW), ids)).toEqual(expected);
    await expect(readAll(withKeys(OLD), ids)).rejects.toBeInstanceOf(SecretBoxError);
    expect(
      (await db.selectFrom('connections').select('credentials_sealed').where('id', '=', stray.id).executeTakeFirstOrThrow())
        .credentials_sealed,
    ).toEqual(lost);

    // Stopped and run again (or run twice): what is already under the new key stays as it is.
    const again = await rotateSecretKey(db, { current: NEW, previous: OLD });
    expect(again.every((c) => c.resealed === 0)).toBe(true);
    expect(again.find((c) => c.column === 'users.totp_secret')).toMatchObject({ current: 1 });
  }, 90_000);

  it('covers every sealed column of the schema', async () => {
    // A feature that seals a new secret without listing its column would be skipped by the rotation.
    const { rows } = await sql<{ name: string }>`
      SELECT table_name || '.' || column_name AS name FROM information_schema.columns
      WHERE table_schema = 'public' AND data_type = 'bytea' AND (column_name LIKE '%sealed%' OR column_name LIKE '%secret%')
      ORDER BY 1`.execute(db);
    expect(rows.map((r) => r.name)).toEqual(SEALED_COLUMNS.map((c) => `${c.table}.${c.column}`).sort());
  });
});
