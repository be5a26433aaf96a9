import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// A connection's health, as its admin needs it to see that a channel works: when the last
// delivery was applied, and the last thing that went wrong (a delivery that failed to process,
// a send that failed), in words. Written once per processed batch per connection, not per
// message, so the delivery path's cost stays flat.
// A deleted connection keeps its threads (they are the workspace's history), read-only: the row
// stays, marked, and leaves the account free to be connected again, so the account's
// uniqueness holds among live connections only.
// A connection that already had deliveries starts from its last inbound message (its threads'
// last_inbound_at, one pass over threads): left empty, every channel in use read "Last
// delivery: never" after the upgrade until its next delivery.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE connections
      ADD COLUMN last_delivery_at timestamptz(3),
      ADD COLUMN last_error_at timestamptz(3),
      ADD COLUMN last_error text,
      ADD COLUMN deleted_at timestamptz(3);
    ALTER TABLE connections DROP CONSTRAINT connections_integration_key_external_account_id_key;
    CREATE UNIQUE INDEX connections_account_live_key ON connections (integration_key, external_account_id) WHERE deleted_at IS NULL;
    UPDATE connections c SET last_delivery_at = t.at
      FROM (SELECT connection_id, max(last_inbound_at) AS at FROM threads GROUP BY connection_id) t
      WHERE t.connection_id = c.id AND t.at IS NOT NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DELETE FROM connections WHERE deleted_at IS NOT NULL;
    DROP INDEX connections_account_live_key;
    ALTER TABLE connections ADD CONSTRAINT connections_integration_key_external_account_id_key UNIQUE (integration_key, external_account_id);
    ALTER TABLE connections
      DROP COLUMN last_delivery_at,
      DROP COLUMN last_error_at,
      DROP COLUMN last_error,
      DROP COLUMN deleted_at;
  `.execute(db);
}
