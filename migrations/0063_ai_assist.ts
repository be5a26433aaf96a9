import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// AI assist on the workspace's own model (docs/ai.md): where to reach an OpenAI-compatible
// endpoint, its key sealed like connection credentials (AAD `workspace-ai:<id>`), off until an
// admin turns it on. `messages.ai` marks a note the model wrote (a summary).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE workspace_ai (
      workspace_id int PRIMARY KEY REFERENCES workspaces(id) ON DELETE CASCADE,
      base_url text,
      model text,
      api_key_sealed bytea,
      enabled boolean NOT NULL DEFAULT false,
      updated_at timestamptz NOT NULL
    );
    COMMENT ON COLUMN workspace_ai.api_key_sealed IS
      'AES-256-GCM sealed API key (0x01 | iv | tag | ciphertext, AAD workspace-ai:<workspace id>); never read back by the API';
    ALTER TABLE messages ADD COLUMN ai boolean NOT NULL DEFAULT false;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE workspace_ai; ALTER TABLE messages DROP COLUMN ai`.execute(db);
}
