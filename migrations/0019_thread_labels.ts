import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Labels as rows (docs/conversations.md, "Labels"; figures in docs/performance.md):
// thread_labels holds one row per (thread, label) with whether the thread is open, so that
// `GET /v1/labels` counts index entries instead of reading every labelled thread, and the
// thread list's `label=` filter finds a rare label's threads without walking the inbox.
//
// A trigger on threads keeps it in step, in the transaction that changes the thread, so no
// writer (the PATCH route, the inbound batch that reopens threads, the snooze sweep, a contact
// merge that deletes folded threads, a workspace's cascade) has to remember it. Why one row per
// thread rather than a counter per label: a thread's rows are only written while that thread's
// row is locked by the statement changing it, so concurrent changes to different threads never
// wait on one another, and two batches touching the same labels in different orders cannot
// deadlock on a shared counter. threads.labels stays the thread's own list (the API's order).
//
// The UPDATE trigger's WHEN skips every change that moves neither the labels nor the open
// flag, which is most of them (each inbound message updates its thread's last message).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE thread_labels (
      workspace_id integer NOT NULL,
      name text NOT NULL,
      thread_id bigint NOT NULL,
      open boolean NOT NULL,
      PRIMARY KEY (workspace_id, name, thread_id)
    );
    -- GET /v1/labels: one probe per distinct name, then an index-only count of its open threads.
    CREATE INDEX thread_labels_open_idx ON thread_labels (workspace_id, name) WHERE open;

    CREATE FUNCTION thread_labels_sync() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' THEN
        DELETE FROM thread_labels
        WHERE workspace_id = OLD.workspace_id AND name = ANY (OLD.labels) AND thread_id = OLD.id;
        RETURN NULL;
      END IF;
      IF TG_OP = 'UPDATE' THEN
        DELETE FROM thread_labels
        WHERE workspace_id = OLD.workspace_id AND name = ANY (OLD.labels) AND thread_id = OLD.id
          AND NOT (name = ANY (NEW.labels));
      END IF;
      INSERT INTO thread_labels (workspace_id, name, thread_id, open)
      SELECT DISTINCT NEW.workspace_id, l, NEW.id, NEW.status = 'open' FROM unnest(NEW.labels) AS l
      ON CONFLICT (workspace_id, name, thread_id) DO UPDATE SET open = EXCLUDED.open
        WHERE thread_labels.open IS DISTINCT FROM EXCLUDED.open;
      RETURN NULL;
    END $$;

    CREATE TRIGGER thread_labels_insert AFTER INSERT ON threads
      FOR EACH ROW WHEN (cardinality(NEW.labels) > 0) EXECUTE FUNCTION thread_labels_sync();
    CREATE TRIGGER thread_labels_update AFTER UPDATE OF labels, status ON threads
      FOR EACH ROW WHEN (OLD.labels IS DISTINCT FROM NEW.labels OR (OLD.status = 'open') <> (NEW.status = 'open'))
      EXECUTE FUNCTION thread_labels_sync();
    CREATE TRIGGER thread_labels_delete AFTER DELETE ON threads
      FOR EACH ROW WHEN (cardinality(OLD.labels) > 0) EXECUTE FUNCTION thread_labels_sync();

    INSERT INTO thread_labels (workspace_id, name, thread_id, open)
    SELECT DISTINCT t.workspace_id, l, t.id, t.status = 'open'
    FROM threads t CROSS JOIN LATERAL unnest(t.labels) AS l
    WHERE t.labels <> '{}';
    ANALYZE thread_labels;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER thread_labels_delete ON threads;
    DROP TRIGGER thread_labels_update ON threads;
    DROP TRIGGER thread_labels_insert ON threads;
    DROP FUNCTION thread_labels_sync();
    DROP TABLE thread_labels;
  `.execute(db);
}
