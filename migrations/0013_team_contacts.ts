import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// The team, contacts and canned responses (docs/conversations.md).
// - A user may be deactivated (`active = false`): they cannot sign in, and what they were signed
//   in with ends when it happens. The row stays, so threads assigned to them keep their assignee.
// - A contact gains an e-mail, a phone and free-form attributes (a flat JSON object).
// - Canned responses: a short code, unique per workspace, and the text it stands for.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE users ADD COLUMN active boolean NOT NULL DEFAULT true;
    CREATE INDEX users_workspace_created_idx ON users (workspace_id, created_at DESC, id DESC);

    ALTER TABLE contacts
      ADD COLUMN email text,
      ADD COLUMN phone text,
      ADD COLUMN attributes jsonb NOT NULL DEFAULT '{}'::jsonb;

    CREATE TABLE canned_responses (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      short_code text NOT NULL,
      content text NOT NULL,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now(),
      UNIQUE (workspace_id, short_code)
    );
    CREATE INDEX canned_responses_workspace_idx ON canned_responses (workspace_id, created_at DESC, id DESC);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE canned_responses;
    ALTER TABLE contacts DROP COLUMN email, DROP COLUMN phone, DROP COLUMN attributes;
    DROP INDEX users_workspace_created_idx;
    ALTER TABLE users DROP COLUMN active;
  `.execute(db);
}
