import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// WhatsApp message templates (docs/replies.md, "Templates"):
// - A WhatsApp Cloud connection names its WhatsApp Business Account (WABA), where Meta keeps
//   its templates; the outcome of the last sync is kept on the connection for the admin.
// - The synced list, one row per (connection, name, language), replaced whole by a sync.
// - A template reply keeps the exact `template` object it is sent with: the worker sends
//   that, and `text` holds the rendered body for the transcript.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE connections
      ADD COLUMN business_account_id text,
      ADD COLUMN templates_sync_status text,
      ADD COLUMN templates_sync_at timestamptz(3),
      ADD COLUMN templates_sync_error text;

    CREATE TABLE whatsapp_templates (
      connection_id bigint NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
      name text NOT NULL,
      language text NOT NULL,
      category text NOT NULL,
      status text NOT NULL,
      components jsonb NOT NULL,
      parameter_count integer NOT NULL,
      PRIMARY KEY (connection_id, name, language)
    );

    ALTER TABLE messages ADD COLUMN template jsonb;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE messages DROP COLUMN template;
    DROP TABLE whatsapp_templates;
    ALTER TABLE connections
      DROP COLUMN templates_sync_error,
      DROP COLUMN templates_sync_at,
      DROP COLUMN templates_sync_status,
      DROP COLUMN business_account_id;
  `.execute(db);
}
