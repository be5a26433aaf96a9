import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Attachments (docs/attachments.md): files on messages, in from providers and out with replies.
// An inbound attachment is written `pending` with its message and the `source` a fetch-media
// job downloads it from; an upload is `stored` at once and has no message until a reply uses
// it. With the `postgres` storage the bytes live in attachment_chunks (≤ 1 MB a row), so any
// number of processes share them and a download streams chunk by chunk.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE attachments (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      message_id bigint REFERENCES messages(id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('image', 'audio', 'video', 'sticker', 'file')),
      content_type text NOT NULL DEFAULT 'application/octet-stream',
      filename text,
      size bigint,
      status text NOT NULL CHECK (status IN ('pending', 'stored', 'failed')),
      error text,
      storage_key text,
      source jsonb,
      attempt_count integer NOT NULL DEFAULT 0,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
    CREATE INDEX attachments_message_idx ON attachments (message_id) WHERE message_id IS NOT NULL;
    CREATE INDEX attachments_unused_idx ON attachments (created_at) WHERE message_id IS NULL;

    CREATE TABLE attachment_chunks (
      storage_key text NOT NULL,
      seq integer NOT NULL,
      data bytea NOT NULL,
      PRIMARY KEY (storage_key, seq)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE attachment_chunks, attachments`.execute(db);
}
