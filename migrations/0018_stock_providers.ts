import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Stock provider webhooks (docs/webhooks.md):
// - A Telegram bot's webhook secret names its connection (Telegram's updates do not say which
//   bot they are for). Only the secret's SHA-256 is kept; one secret per connection.
// - The account a verification itself established (the bot a secret named) is a column of the
//   delivery, read by the normaliser, not a field smuggled into the provider's payload.
// - Mailgun's one-time tokens: each (integration, token) may be accepted once while its
//   timestamp is fresh; kept in Postgres so every api process refuses a replay.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE telegram_webhook_secrets (
      connection_id bigint PRIMARY KEY REFERENCES connections(id) ON DELETE CASCADE,
      secret_hash text NOT NULL UNIQUE,
      created_at timestamptz(3) NOT NULL DEFAULT now()
    );

    ALTER TABLE webhook_inbox ADD COLUMN verified_account text;

    CREATE TABLE webhook_tokens (
      integration_key text NOT NULL,
      token text NOT NULL,
      expires_at timestamptz(3) NOT NULL,
      PRIMARY KEY (integration_key, token)
    );
    CREATE INDEX webhook_tokens_expires_idx ON webhook_tokens (expires_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE webhook_tokens;
    ALTER TABLE webhook_inbox DROP COLUMN verified_account;
    DROP TABLE telegram_webhook_secrets;
  `.execute(db);
}
