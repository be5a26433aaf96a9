import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { pruneExpired } from '../../src/maintenance/maintenance.queries.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

const ctx = await useTestContext();

describe('maintenance', () => {
  it('prunes expired auth codes, old login attempts, long-ended sessions and tokens, old idempotency keys and receipts, and nothing live', async () => {
    const tenant = await makeTenant(ctx.deps);
    const { user } = await makeUser(ctx.deps, tenant.workspace.id);
    const now = new Date('2026-11-22T12:00:00Z');
    await sql`INSERT INTO auth_codes (code_hash, user_id, expires_at) VALUES ('old', ${user.id}, ${now}::timestamptz - interval '2 hours'), ('live', ${user.id}, ${now}::timestamptz + interval '1 minute')`.execute(
      ctx.deps.db,
    );
    await sql`INSERT INTO login_attempts (email, ip, created_at) VALUES ('a@x', '1.1.1.1', ${now}::timestamptz - interval '2 days'), ('b@x', '1.1.1.1', ${now}::timestamptz - interval '1 hour')`.execute(
      ctx.deps.db,
    );
    await sql`INSERT INTO sessions (id, user_id, expires_at, revoked_at) VALUES
      (gen_random_uuid(), ${user.id}, ${now}::timestamptz - interval '8 days', NULL),
      (gen_random_uuid(), ${user.id}, ${now}::timestamptz + interval '1 day', ${now}::timestamptz - interval '8 days'),
      (gen_random_uuid(), ${user.id}, ${now}::timestamptz + interval '1 day', NULL),
      (gen_random_uuid(), ${user.id}, ${now}::timestamptz - interval '1 day', NULL)`.execute(ctx.deps.db);
    await sql`INSERT INTO personal_access_tokens (user_id, name, token_hash, token_prefix, expires_at, revoked_at) VALUES
      (${user.id}, 'expired long ago', 'h1', 'p', ${now}::timestamptz - interval '31 days', NULL),
      (${user.id}, 'deleted long ago', 'h2', 'p', ${now}::timestamptz + interval '1 day', ${now}::timestamptz - interval '31 days'),
      (${user.id}, 'expired lately', 'h3', 'p', ${now}::timestamptz - interval '1 day', NULL),
      (${user.id}, 'live', 'h4', 'p', ${now}::timestamptz + interval '1 day', NULL)`.execute(ctx.deps.db);
    await sql`INSERT INTO idempotency_keys (app_id, key, request, status_code, response, created_at) VALUES
      (${tenant.workspace.appId}, 'old', 'r', 200, '{}', ${now}::timestamptz - interval '2 days'),
      (${tenant.workspace.appId}, 'new', 'r', 200, '{}', ${now}::timestamptz)`.execute(ctx.deps.db);
    await sql`INSERT INTO early_receipts (integration_key, external_message_id, status, received_at) VALUES
      ('whatsapp', 'wamid.old', 'read', ${now}::timestamptz - interval '61 minutes'),
      ('whatsapp', 'wamid.new', 'read', ${now}::timestamptz - interval '59 minutes')`.execute(ctx.deps.db);

    expect(await pruneExpired(ctx.deps.db, now)).toEqual({
      authCodes: 1,
      loginAttempts: 1,
      sessions: 2,
      personalAccessTokens: 2,
      idempotencyKeys: 1,
      livechatVisitors: 0,
      earlyReceipts: 1,
    });
    expect(await pruneExpired(ctx.deps.db, now)).toEqual({
      authCodes: 0,
      loginAttempts: 0,
      sessions: 0,
      personalAccessTokens: 0,
      idempotencyKeys: 0,
      livechatVisitors: 0,
      earlyReceipts: 0,
    });
    const left = await sql<{ t: string; n: number }>`
      SELECT 'codes' AS t, count(*)::int AS n FROM auth_codes UNION ALL SELECT 'attempts', count(*)::int FROM login_attempts
      UNION ALL SELECT 'sessions', count(*)::int FROM sessions UNION ALL SELECT 'keys', count(*)::int FROM idempotency_keys
      UNION ALL SELECT 'tokens', count(*)::int FROM personal_access_tokens UNION ALL SELECT 'receipts', count(*)::int FROM early_receipts`.execute(
      ctx.deps.db,
    );
    expect(Object.fromEntries(left.rows.map((r) => [r.t, r.n]))).toEqual({
      codes: 1,
      attempts: 1,
      sessions: 2,
      keys: 1,
      tokens: 2,
      receipts: 1,
    });
  });
});
