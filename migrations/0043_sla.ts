import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Business hours, priorities, SLA policies and away replies (docs/sla.md). A thread's SLA
// state is one object (`sla`, written only by the SLA code) beside two columns the lists read:
// the nearest due time (`?sort=sla`) and the status (`?slaStatus=`). Both indexes are partial,
// so the threads of a workspace without a policy cost them nothing.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE teams ADD COLUMN business_hours jsonb;
    ALTER TABLE connections ADD COLUMN away_message text;

    ALTER TABLE threads
      ADD COLUMN priority text NOT NULL DEFAULT 'normal' CHECK (priority IN ('low', 'normal', 'high', 'urgent')),
      ADD COLUMN sla jsonb,
      ADD COLUMN sla_due_at timestamptz(3),
      ADD COLUMN sla_status text CHECK (sla_status IN ('ok', 'warning', 'breached')),
      ADD COLUMN away_replied_at timestamptz(3);
    CREATE INDEX threads_sla_due_idx ON threads (workspace_id, sla_due_at, id) WHERE sla_due_at IS NOT NULL;
    CREATE INDEX threads_sla_status_idx ON threads (workspace_id, sla_status, last_message_at DESC, id DESC) WHERE sla_status IS NOT NULL;

    CREATE TABLE sla_policies (
      id serial PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      position integer NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      first_response text,
      next_response text,
      resolution text,
      business_hours_only boolean NOT NULL DEFAULT false,
      conditions jsonb NOT NULL DEFAULT '{}'::jsonb,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      updated_at timestamptz(3) NOT NULL DEFAULT now()
    );
    CREATE INDEX sla_policies_workspace_idx ON sla_policies (workspace_id, position, id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE sla_policies;
    ALTER TABLE threads DROP COLUMN away_replied_at, DROP COLUMN sla_status, DROP COLUMN sla_due_at, DROP COLUMN sla, DROP COLUMN priority;
    ALTER TABLE connections DROP COLUMN away_message;
    ALTER TABLE teams DROP COLUMN business_hours;
  `.execute(db);
}
