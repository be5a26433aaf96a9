import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Automation rules (docs/automation.md): a workspace's rules are read whole, enabled ones of one
// event at a time, in position order. `conditions` and `actions` are data the service checked
// at save. A `thread.idle` rule keeps how far its periodic check has come (`idle_cutoff_at`,
// `idle_cutoff_id`: the last message time and thread id it has looked at), so each idle stretch
// fires once and the check reads only the threads that went idle since, by
// threads_workspace_idx.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE automation_rules (
      id serial PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      position integer NOT NULL,
      event text NOT NULL CHECK (event IN ('message.created', 'thread.created', 'thread.updated', 'thread.idle')),
      match text NOT NULL DEFAULT 'all' CHECK (match IN ('all', 'any')),
      conditions jsonb NOT NULL DEFAULT '[]'::jsonb,
      actions jsonb NOT NULL DEFAULT '[]'::jsonb,
      idle_minutes integer CHECK (idle_minutes >= 5),
      statuses text[],
      idle_cutoff_at timestamptz(3),
      idle_cutoff_id bigint,
      runs integer NOT NULL DEFAULT 0,
      last_run_at timestamptz(3),
      last_error text,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
    CREATE INDEX automation_rules_workspace_idx ON automation_rules (workspace_id, position, id);
    CREATE INDEX automation_rules_idle_idx ON automation_rules (id) WHERE event = 'thread.idle' AND enabled;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE automation_rules`.execute(db);
}
