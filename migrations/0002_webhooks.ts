import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Inbound deliveries (the durable buffer) and what workers make of them: contacts, threads,
// messages. Sortable timestamps are timestamptz(3) so keyset cursors (epoch ms) are exact.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE webhook_inbox (
      id uuid PRIMARY KEY,
      integration_key text NOT NULL,
      app_id text,
      event text,
      raw_body text NOT NULL,
      payload_json jsonb,
      status text NOT NULL DEFAULT 'received'
        CHECK (status IN ('received', 'processed', 'failed', 'dead_letter')),
      attempt_count integer NOT NULL DEFAULT 0,
      next_retry_at timestamptz(3),
      last_error text,
      processed_at timestamptz(3),
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
    -- Both indexes are partial so that accepting a delivery (app_id still NULL, status
    -- 'received') writes only the primary key: ingestion is the hot path.
    CREATE INDEX webhook_inbox_app_status_idx ON webhook_inbox (app_id, status, created_at DESC) WHERE app_id IS NOT NULL;
    CREATE INDEX webhook_inbox_trouble_idx ON webhook_inbox (status, created_at DESC) WHERE status IN ('failed', 'dead_letter');

    CREATE TABLE idempotency_keys (
      app_id text NOT NULL,
      key text NOT NULL,
      request text NOT NULL,
      status_code integer NOT NULL,
      response jsonb NOT NULL,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      PRIMARY KEY (app_id, key)
    );

    CREATE TABLE contacts (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
    CREATE INDEX contacts_workspace_idx ON contacts (workspace_id, created_at DESC, id DESC);

    CREATE TABLE contact_handles (
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      integration_key text NOT NULL,
      external_id text NOT NULL,
      contact_id bigint NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
      PRIMARY KEY (workspace_id, integration_key, external_id)
    );
    CREATE INDEX contact_handles_contact_idx ON contact_handles (contact_id);

    CREATE TABLE threads (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      connection_id bigint NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
      contact_id bigint NOT NULL REFERENCES contacts(id) ON DELETE CASCADE,
      status text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'closed')),
      last_message_at timestamptz(3) NOT NULL DEFAULT now(),
      last_message_preview text,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
    -- One open thread per (connection, contact).
    CREATE UNIQUE INDEX threads_open_key ON threads (connection_id, contact_id) WHERE status = 'open';
    CREATE INDEX threads_workspace_idx ON threads (workspace_id, last_message_at DESC, id DESC);

    CREATE TABLE messages (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      thread_id bigint NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
      connection_id bigint NOT NULL REFERENCES connections(id) ON DELETE CASCADE,
      direction text NOT NULL CHECK (direction IN ('inbound', 'outbound')),
      external_id text,
      text text NOT NULL DEFAULT '',
      status text NOT NULL
        CHECK (status IN ('received', 'queued', 'sent', 'delivered', 'read', 'failed')),
      error text,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now(),
      -- The provider's message id is unique per connection: a provider's retry never makes a
      -- second message.
      UNIQUE (connection_id, external_id)
    );
    CREATE INDEX messages_thread_idx ON messages (thread_id, created_at DESC, id DESC);
    CREATE INDEX messages_external_idx ON messages (external_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE messages, threads, contact_handles, contacts, idempotency_keys, webhook_inbox`.execute(db);
}
