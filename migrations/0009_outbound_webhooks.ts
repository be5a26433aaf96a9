import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Outbound webhooks (docs/outbound-webhooks.md): customer endpoints, the events sent to them
// (the exact JSON body, stored once per event), one delivery per (event, endpoint) whose id is
// the receiver's dedupe key, and every attempt of a delivery.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE webhook_endpoints (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      workspace_id int NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      url text NOT NULL,
      description text NOT NULL DEFAULT '',
      events text[] NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      signature_scheme text NOT NULL DEFAULT 'service' CHECK (signature_scheme IN ('service', 'standard')),
      secret_sealed bytea NOT NULL,
      previous_secret_sealed bytea,
      previous_secret_expires_at timestamptz,
      disabled_reason text,
      failing_since timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    COMMENT ON COLUMN webhook_endpoints.secret_sealed IS
      'AES-256-GCM sealed signing secret (0x01 | iv | tag | ciphertext, AAD webhook-endpoint:<id>)';
    COMMENT ON COLUMN webhook_endpoints.failing_since IS
      'first failed attempt since the last success; NULL while the endpoint succeeds';
    CREATE INDEX webhook_endpoints_workspace ON webhook_endpoints (workspace_id, created_at DESC, id DESC);

    CREATE TABLE webhook_events (
      id uuid PRIMARY KEY,
      workspace_id int NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      type text NOT NULL,
      body text NOT NULL,
      created_at timestamptz NOT NULL
    );
    COMMENT ON COLUMN webhook_events.id IS 'UUIDv7; shown as evt_<32 hex>';
    COMMENT ON COLUMN webhook_events.body IS 'the JSON body exactly as every attempt sends it';

    CREATE TABLE webhook_deliveries (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      endpoint_id bigint NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
      event_id uuid NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
      attempt_count int NOT NULL DEFAULT 0,
      job_id uuid,
      next_attempt_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    );
    COMMENT ON COLUMN webhook_deliveries.attempt_count IS 'attempts since the delivery was created or last redelivered';
    COMMENT ON COLUMN webhook_deliveries.job_id IS 'the queued job that makes the next attempt; any other job for this delivery is stale';
    CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
    CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

    CREATE TABLE webhook_attempts (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      delivery_id bigint NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
      attempted_at timestamptz NOT NULL,
      status_code int,
      duration_ms int NOT NULL,
      error text
    );
    CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE webhook_attempts, webhook_deliveries, webhook_events, webhook_endpoints`.execute(db);
}
