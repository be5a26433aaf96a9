import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Macros (docs/automation.md): actions an agent runs on a thread at once. `shared: false` is
// seen by its author only; a macro an API key wrote has no author.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE macros (
      id serial PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      actions jsonb NOT NULL,
      shared boolean NOT NULL DEFAULT true,
      author_id integer REFERENCES users(id) ON DELETE SET NULL,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
    CREATE INDEX macros_workspace_idx ON macros (workspace_id, name, id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE macros`.execute(db);
}
