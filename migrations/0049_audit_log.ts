import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// The audit log (docs/security.md, "Audit log"): who did what, written in the transaction of
// the change it records. Append-only, and the database itself says so: a trigger refuses every
// UPDATE, every TRUNCATE, and every DELETE but the retention job's, which marks its transaction
// (`SET LOCAL inbox.audit_retention_days = N`) and may then delete only entries older than N
// days. No foreign keys: an entry outlives what it names.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE audit_log (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      workspace_id integer,
      at timestamptz(3) NOT NULL DEFAULT now(),
      actor_type text NOT NULL CHECK (actor_type IN ('user', 'api_key', 'operator', 'system')),
      actor_id bigint,
      action text NOT NULL,
      target_type text,
      target_id text,
      ip text,
      changes jsonb
    );
    CREATE INDEX audit_log_workspace_idx ON audit_log (workspace_id, at DESC, id DESC);
    CREATE INDEX audit_log_operator_idx ON audit_log (at DESC, id DESC) WHERE actor_type = 'operator';
    CREATE INDEX audit_log_at_idx ON audit_log (at);

    CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      keep_days integer := nullif(current_setting('inbox.audit_retention_days', true), '')::integer;
    BEGIN
      IF TG_OP = 'DELETE' AND keep_days IS NOT NULL AND OLD.at < now() - make_interval(days => keep_days) THEN
        RETURN OLD;
      END IF;
      RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
    END $$;
    CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
      FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
    CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
      FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE audit_log;
    DROP FUNCTION audit_log_append_only();
  `.execute(db);
}
