import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// The event log (docs/outbound-webhooks.md, "Event log"): every outbound event is kept, with or
// without an endpoint, and read back in commit order. `txid` is the writing transaction's id
// and `seq` the order of insertion: a reader pages by (txid, seq) and only past transactions
// older than every one still running, so an event committed later can never land behind a
// position a consumer has already passed.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE webhook_events
      ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY,
      ADD COLUMN txid xid8 NOT NULL DEFAULT pg_current_xact_id();
    COMMENT ON COLUMN webhook_events.txid IS 'the transaction that wrote the event: the log is read in (txid, seq) order';
    CREATE INDEX webhook_events_log ON webhook_events (workspace_id, txid, seq);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE webhook_events DROP COLUMN seq, DROP COLUMN txid`.execute(db);
}
