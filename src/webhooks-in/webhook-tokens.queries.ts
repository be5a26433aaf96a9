import { sql } from 'kysely';
import type { Executor } from '../db/database.js';

/**
 * Claims a provider's one-time token (Mailgun's `token`) until `expiresAt`: true when no
 * unexpired claim of it exists, false for a replay. Expired claims are deleted on the way (the
 * index on expires_at keeps that cheap), so the table holds only tokens of the last minutes.
 */
export async function claimWebhookToken(db: Executor, integrationKey: string, token: string, expiresAt: Date, now: Date) {
  await sql`DELETE FROM webhook_tokens WHERE expires_at < ${now}`.execute(db);
  const { rows } = await sql<{ token: string }>`
    INSERT INTO webhook_tokens (integration_key, token, expires_at) VALUES (${integrationKey}, ${token}, ${expiresAt})
    ON CONFLICT (integration_key, token) DO NOTHING
    RETURNING token`.execute(db);
  return rows.length === 1;
}

/** Gives claimed tokens back: their delivery was not stored, and the provider will send it again. */
export async function releaseWebhookTokens(db: Executor, claims: { integrationKey: string; token: string }[]) {
  if (claims.length === 0) return;
  await sql`
    DELETE FROM webhook_tokens t
    USING unnest(${claims.map((c) => c.integrationKey)}::text[], ${claims.map((c) => c.token)}::text[]) AS v(integration_key, token)
    WHERE t.integration_key = v.integration_key AND t.token = v.token`.execute(db);
}
