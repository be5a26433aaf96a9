import { sql } from 'kysely';
import type { Executor } from '../db/database.js';

/** How long spent or expired credentials and bookkeeping rows are kept before deletion. */
export const RETENTION = {
  authCodesAfterExpiry: '1 hour',
  loginAttempts: '1 day',
  sessionsAfterEnd: '7 days',
  /** Long enough for a user to see in the list that a token expired. */
  personalAccessTokensAfterEnd: '30 days',
  idempotencyKeys: '1 day',
} as const;

export interface Pruned {
  authCodes: number;
  loginAttempts: number;
  sessions: number;
  personalAccessTokens: number;
  idempotencyKeys: number;
}

/** Deletes what no request can use any more; returns how many rows of each went. */
export async function pruneExpired(db: Executor, now: Date): Promise<Pruned> {
  const count = async (q: ReturnType<typeof sql>) => Number((await q.execute(db)).numAffectedRows ?? 0n);
  return {
    authCodes: await count(sql`DELETE FROM auth_codes WHERE expires_at < ${now}::timestamptz - ${RETENTION.authCodesAfterExpiry}::interval`),
    loginAttempts: await count(sql`DELETE FROM login_attempts WHERE created_at < ${now}::timestamptz - ${RETENTION.loginAttempts}::interval`),
    sessions: await count(sql`
      DELETE FROM sessions
      WHERE COALESCE(revoked_at, expires_at) < ${now}::timestamptz - ${RETENTION.sessionsAfterEnd}::interval`),
    personalAccessTokens: await count(sql`
      DELETE FROM personal_access_tokens
      WHERE COALESCE(revoked_at, expires_at) < ${now}::timestamptz - ${RETENTION.personalAccessTokensAfterEnd}::interval`),
    idempotencyKeys: await count(sql`DELETE FROM idempotency_keys WHERE created_at < ${now}::timestamptz - ${RETENTION.idempotencyKeys}::interval`),
  };
}
