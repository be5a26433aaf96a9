import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Teams group a workspace's users (docs/teams.md). A thread and a connection may belong to one;
// deleting a team leaves its threads and connections without one (SET NULL), never deletes them.
// Names are unique per workspace whatever their case ("Billing" and "billing" are one team).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE teams (
      id serial PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      description text,
      auto_assign boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX teams_workspace_name_key ON teams (workspace_id, lower(name));

    CREATE TABLE team_members (
      team_id integer NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      PRIMARY KEY (team_id, user_id)
    );
    CREATE INDEX team_members_user_idx ON team_members (user_id);

    ALTER TABLE threads ADD COLUMN team_id integer REFERENCES teams(id) ON DELETE SET NULL;
    -- A team's threads in page order (the ?teamId= filter), and what SET NULL looks up.
    CREATE INDEX threads_team_idx ON threads (team_id, last_message_at DESC, id DESC) WHERE team_id IS NOT NULL;

    ALTER TABLE connections ADD COLUMN team_id integer REFERENCES teams(id) ON DELETE SET NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE connections DROP COLUMN team_id;
    ALTER TABLE threads DROP COLUMN team_id;
    DROP TABLE team_members;
    DROP TABLE teams;
  `.execute(db);
}
