import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Working a conversation (docs/conversations.md). A thread is open, pending, resolved or
// snoozed (until snoozed_until), may be assigned to a user and labelled, and remembers when an
// agent last read it. The former 'closed' is 'resolved'. There is one thread per (connection,
// contact) whatever its status: a new inbound message reopens it rather than starting another.
// A message is a message, a private note or an activity line, and may name the user who
// wrote or caused it. A connection may assign its new and reopened threads automatically.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE threads DROP CONSTRAINT IF EXISTS threads_status_check;
    UPDATE threads SET status = 'resolved' WHERE status = 'closed';
    ALTER TABLE threads
      ADD CONSTRAINT threads_status_check CHECK (status IN ('open', 'pending', 'resolved', 'snoozed')),
      ADD COLUMN snoozed_until timestamptz(3),
      ADD COLUMN assignee_id integer REFERENCES users(id) ON DELETE SET NULL,
      ADD COLUMN labels text[] NOT NULL DEFAULT '{}',
      ADD COLUMN agent_last_seen_at timestamptz(3),
      ADD CONSTRAINT threads_snooze_check CHECK ((status = 'snoozed') = (snoozed_until IS NOT NULL));

    -- Earlier versions kept one open thread per pair but allowed closed ones beside it; fold
    -- every older thread of a pair into its newest one before the key covers every status.
    CREATE TEMP TABLE thread_folds ON COMMIT DROP AS
      SELECT id, keep FROM (
        SELECT id, first_value(id) OVER (PARTITION BY connection_id, contact_id ORDER BY last_message_at DESC, id DESC) AS keep
        FROM threads
      ) ranked
      WHERE id <> keep;
    UPDATE messages m SET thread_id = f.keep FROM thread_folds f WHERE m.thread_id = f.id;
    UPDATE livechat_visitors v SET thread_id = f.keep FROM thread_folds f WHERE v.thread_id = f.id;
    DELETE FROM threads t USING thread_folds f WHERE t.id = f.id;
    DROP INDEX threads_open_key;
    CREATE UNIQUE INDEX threads_pair_key ON threads (connection_id, contact_id);

    ALTER TABLE messages
      ADD COLUMN kind text NOT NULL DEFAULT 'message' CHECK (kind IN ('message', 'note', 'activity')),
      ADD COLUMN private boolean NOT NULL DEFAULT false,
      ADD COLUMN author_id integer REFERENCES users(id) ON DELETE SET NULL;

    ALTER TABLE connections ADD COLUMN auto_assign boolean NOT NULL DEFAULT false;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE connections DROP COLUMN auto_assign;
    ALTER TABLE messages DROP COLUMN kind, DROP COLUMN private, DROP COLUMN author_id;
    DROP INDEX threads_pair_key;
    UPDATE threads SET status = 'closed' WHERE status <> 'open';
    ALTER TABLE threads
      DROP CONSTRAINT threads_snooze_check,
      DROP CONSTRAINT threads_status_check,
      DROP COLUMN snoozed_until, DROP COLUMN assignee_id, DROP COLUMN labels, DROP COLUMN agent_last_seen_at,
      ADD CONSTRAINT threads_status_check CHECK (status IN ('open', 'closed'));
    CREATE UNIQUE INDEX threads_open_key ON threads (connection_id, contact_id) WHERE status = 'open';
  `.execute(db);
}
