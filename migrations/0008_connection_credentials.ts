import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// A connection's provider credentials (access token, account SID, SMTP URL…), sealed with
// AES-256-GCM under INBOX_SECRET_KEY by the service: version byte, IV, tag, ciphertext, with
// `connection:<id>` as associated data. NULL: none set (the integration's settings apply).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE connections ADD COLUMN credentials_sealed bytea;
    COMMENT ON COLUMN connections.credentials_sealed IS
      'AES-256-GCM sealed JSON credentials (0x01 | iv | tag | ciphertext, AAD connection:<id>); NULL = none';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE connections DROP COLUMN credentials_sealed`.execute(db);
}
