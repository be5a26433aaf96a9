import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// A provider may report a reply delivered or read before the service has recorded that reply's
// send: a batch of sends commits its outcomes once its slowest provider has answered (up to the
// 10 s timeout), and a fast provider's receipts can be processed in between. Such a receipt names
// a provider id no message has yet; it waits here, for an hour at most, and is applied when the
// send is recorded (docs/webhooks.md, "Receipts"). `account` is the provider account the
// receipt's delivery named, when it named one: only a message sent from that account takes it.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE early_receipts (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      integration_key text NOT NULL,
      external_message_id text NOT NULL,
      account text,
      status text NOT NULL CHECK (status IN ('sent', 'delivered', 'read', 'failed')),
      error text,
      received_at timestamptz NOT NULL
    );
    COMMENT ON TABLE early_receipts IS 'receipts that arrived before their send was recorded; applied when it is, deleted after an hour';
    CREATE INDEX early_receipts_message ON early_receipts (integration_key, external_message_id);
    CREATE INDEX early_receipts_received ON early_receipts (received_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE early_receipts`.execute(db);
}
