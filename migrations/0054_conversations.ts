import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Conversations for reports (docs/reports.md): one row per stretch of a thread from its opening
// to its resolution, written as it happens by the change that opens, first answers or resolves
// it. A thread has at most one open row (resolved_at null). The messages of the open stretch are
// counted on the thread itself, in the statements that already write it for each message, and
// copied to the row when it is resolved: the delivery path gets no statement more.
// Threads not resolved when this runs get an open row from their creation, so their first
// answer and resolution are recorded; history before it is not reconstructed.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE threads
      ADD COLUMN conversation_messages_in integer NOT NULL DEFAULT 0,
      ADD COLUMN conversation_messages_out integer NOT NULL DEFAULT 0;

    CREATE TABLE conversations (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      thread_id bigint NOT NULL REFERENCES threads(id) ON DELETE CASCADE,
      connection_id bigint NOT NULL,
      reopened boolean NOT NULL DEFAULT false,
      opened_at timestamptz(3) NOT NULL,
      first_response_at timestamptz(3),
      first_response_seconds integer,
      first_response_business_seconds integer,
      resolved_at timestamptz(3),
      resolution_seconds integer,
      resolution_business_seconds integer,
      assignee_id integer,
      team_id integer,
      labels text[] NOT NULL DEFAULT '{}',
      priority text NOT NULL DEFAULT 'normal',
      messages_in integer,
      messages_out integer,
      sla_breaches integer NOT NULL DEFAULT 0
    );
    CREATE UNIQUE INDEX conversations_open_idx ON conversations (thread_id) WHERE resolved_at IS NULL;
    CREATE INDEX conversations_thread_idx ON conversations (thread_id, opened_at);
    CREATE INDEX conversations_opened_idx ON conversations (workspace_id, opened_at, id);
    CREATE INDEX conversations_resolved_idx ON conversations (workspace_id, resolved_at) WHERE resolved_at IS NOT NULL;
    CREATE INDEX conversations_first_response_idx ON conversations (workspace_id, first_response_at) WHERE first_response_at IS NOT NULL;

    INSERT INTO conversations (workspace_id, thread_id, connection_id, opened_at)
    SELECT workspace_id, id, connection_id, created_at FROM threads WHERE status <> 'resolved';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE conversations;
    ALTER TABLE threads DROP COLUMN conversation_messages_out, DROP COLUMN conversation_messages_in;
  `.execute(db);
}
