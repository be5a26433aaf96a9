import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// How a delivery was accepted becomes a column instead of a mark inside its payload: until
// now an SMS report accepted unsigned (because it named a message already sent) carried
// `"__unsigned": true` in payload_json. Such rows move to verification = 'correlated' and
// lose the mark. From now on payload_json is never written: a payload is always the raw body
// as its integration parses it; only rows written before keep one.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE webhook_inbox
      ADD COLUMN verification text NOT NULL DEFAULT 'signed'
      CONSTRAINT webhook_inbox_verification_check CHECK (verification IN ('signed', 'report_secret', 'correlated', 'skipped'));
    UPDATE webhook_inbox SET verification = 'correlated', payload_json = payload_json - '__unsigned'
    WHERE payload_json ? '__unsigned';
    COMMENT ON COLUMN webhook_inbox.payload_json IS
      'Written only by versions before 0007; NULL means: parse raw_body with the integration''s parser. Read through deliveryPayload(), never alone.';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    UPDATE webhook_inbox SET payload_json = COALESCE(payload_json, '{}'::jsonb) || '{"__unsigned": true}'::jsonb WHERE verification = 'correlated';
    ALTER TABLE webhook_inbox DROP COLUMN verification;
  `.execute(db);
}
