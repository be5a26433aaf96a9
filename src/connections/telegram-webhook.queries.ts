import { sql } from 'kysely';
import type { Executor } from '../db/database.js';

/** Sets (replacing) a connection's webhook secret hash. */
export async function setTelegramSecretHash(db: Executor, connectionId: number, secretHash: string) {
  await sql`
    INSERT INTO telegram_webhook_secrets (connection_id, secret_hash) VALUES (${connectionId}, ${secretHash})
    ON CONFLICT (connection_id) DO UPDATE SET secret_hash = excluded.secret_hash, created_at = now()`.execute(db);
}

/** The account (bot id) of the telegram connection whose webhook secret has this hash. */
export async function findAccountBySecretHash(db: Executor, integrationKey: string, secretHash: string) {
  const { rows } = await sql<{ external_account_id: string }>`
    SELECT c.external_account_id
    FROM telegram_webhook_secrets s
    JOIN connections c ON c.id = s.connection_id
    WHERE s.secret_hash = ${secretHash} AND c.integration_key = ${integrationKey} AND c.deleted_at IS NULL`.execute(db);
  return rows[0]?.external_account_id;
}
