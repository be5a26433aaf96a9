import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Exports (docs/privacy.md, "Export"): a zip of a contact's or a whole workspace's data, built
// by a job into the attachment store and deleted with its row 24 hours after it was asked for.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE exports (
      id uuid PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      contact_id bigint,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'ready', 'failed')),
      storage_key text,
      size bigint,
      error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      finished_at timestamptz,
      expires_at timestamptz NOT NULL
    );
    CREATE INDEX exports_expires_idx ON exports (expires_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE exports`.execute(db);
}
