import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// The event log (docs/outbound-webhooks.md, "Event log"): every outbound event is kept, with or
// without an endpoint, and read back in commit order. `txid` is the writing transaction's id
// and `seq` the order of insertion: a reader pages by (txid, seq) and only past transactions
// older than every one still running, so an event committed later can never land behind a
// position a consumer has already passed.
//
// The events already stored are numbered oldest first: by `created_at`, then by where they lie
// in the table (a change's events are inserted together, in their order, and share one
// created_at; their UUIDv7 ids are random within the millisecond). An identity column added
// to a filled table numbers its rows in the order the rewrite reads them, the heap's, which
// retention's deletes and the pages they free had shuffled across days: the log served the
// events of before the upgrade out of order. Filling `seq` and `txid` in one UPDATE writes each
// row once, as the rewrite of a column with a volatile default did.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE webhook_events ADD COLUMN seq bigint, ADD COLUMN txid xid8;
    UPDATE webhook_events e SET seq = o.n, txid = pg_current_xact_id()
      FROM (SELECT id, row_number() OVER (ORDER BY created_at, ctid) AS n FROM webhook_events) o
      WHERE e.id = o.id;
    ALTER TABLE webhook_events
      ALTER COLUMN seq SET NOT NULL,
      ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY,
      ALTER COLUMN txid SET NOT NULL,
      ALTER COLUMN txid SET DEFAULT pg_current_xact_id();
    SELECT setval(pg_get_serial_sequence('webhook_events', 'seq'), max(seq)) FROM webhook_events HAVING count(*) > 0;
    COMMENT ON COLUMN webhook_events.txid IS 'the transaction that wrote the event: the log is read in (txid, seq) order';
    CREATE INDEX webhook_events_log ON webhook_events (workspace_id, txid, seq);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE webhook_events DROP COLUMN seq, DROP COLUMN txid`.execute(db);
}
