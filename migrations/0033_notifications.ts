import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Notifications tell one user what needs them (docs/teams.md, "Mentions and notifications"):
// read newest first, all or only the unread, so both orders have their index. A note may name
// users (`mentions`); other messages leave it null.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE notifications (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      type text NOT NULL CHECK (type IN ('assigned', 'mentioned', 'message', 'sla_warning', 'sla_breached')),
      thread_id bigint REFERENCES threads(id) ON DELETE CASCADE,
      message_id bigint REFERENCES messages(id) ON DELETE CASCADE,
      actor_id integer REFERENCES users(id) ON DELETE SET NULL,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      read_at timestamptz(3)
    );
    CREATE INDEX notifications_user_idx ON notifications (user_id, created_at DESC, id DESC);
    CREATE INDEX notifications_unread_idx ON notifications (user_id, created_at DESC, id DESC) WHERE read_at IS NULL;
    CREATE INDEX notifications_message_idx ON notifications (message_id) WHERE message_id IS NOT NULL;

    ALTER TABLE messages ADD COLUMN mentions integer[];
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE messages DROP COLUMN mentions;
    DROP TABLE notifications;
  `.execute(db);
}
