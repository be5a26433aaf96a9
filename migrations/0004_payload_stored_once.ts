import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// From this version on, a delivery whose payload is just its raw body parsed stores the body
// once (raw_body) and leaves payload_json NULL; readers derive the payload from raw_body.
// Rows written before keep their payload_json, which gives the same value. Nothing to move.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    COMMENT ON COLUMN webhook_inbox.payload_json IS
      'The payload only when verification changed it; NULL means: parse raw_body with the integration''s parser (JSON unless the integration reads forms). Read through deliveryPayload(), never alone.'
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`COMMENT ON COLUMN webhook_inbox.payload_json IS NULL`.execute(db);
}
