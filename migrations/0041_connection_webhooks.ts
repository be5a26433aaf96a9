import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Each connection gets a webhook URL of its own, /webhooks/<integrationKey>/<connectionKey>,
// verified with its own secrets: a workspace admin connects an account without the operator
// editing INBOX_INTEGRATIONS. The key is public (it is pasted into a provider's console) and
// random, so one workspace cannot guess another's URL. Existing connections get one here;
// gen_random_uuid() is the strong random source every supported Postgres has built in.
// Meta's subscription challenge compares a verify token the admin pastes into Meta's console:
// each Meta connection gets one, shown to its admins, so it is kept readable, not sealed.
// The webhook secrets themselves are sealed like the credentials, bound to their row.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE connections
      ADD COLUMN connection_key text,
      ADD COLUMN webhook_secrets_sealed bytea,
      ADD COLUMN webhook_verify_token text;
    UPDATE connections
      SET connection_key = 'ck_' || substr(replace(gen_random_uuid()::text || gen_random_uuid()::text, '-', ''), 1, 24);
    UPDATE connections
      SET webhook_verify_token = 'vt_' || replace(gen_random_uuid()::text, '-', '')
      WHERE integration_key IN ('whatsapp', 'social_one.native', 'social_two.native');
    ALTER TABLE connections ALTER COLUMN connection_key SET NOT NULL;
    ALTER TABLE connections ADD CONSTRAINT connections_connection_key_key UNIQUE (connection_key);
    COMMENT ON COLUMN connections.webhook_secrets_sealed IS
      'sealed JSON of the connection''s own webhook verification settings (AES-256-GCM under INBOX_SECRET_KEY)';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE connections
      DROP COLUMN connection_key,
      DROP COLUMN webhook_secrets_sealed,
      DROP COLUMN webhook_verify_token;
  `.execute(db);
}
