import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Who is available (docs/teams.md "Availability and routing"): a user's own status, their cap
// of open threads, when they were last given a thread (routing's tie-break), and their realtime
// sockets on every api process, so `connected` and the automatic `offline` work across processes.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE users
      ADD COLUMN availability text NOT NULL DEFAULT 'online' CHECK (availability IN ('online', 'busy', 'offline')),
      ADD COLUMN max_open_threads integer CHECK (max_open_threads >= 0),
      -- Set when the user's last socket went; cleared when one opens or the user is set offline.
      ADD COLUMN disconnected_at timestamptz;
    -- What each heartbeat's backstop looks for: users disconnected long enough.
    CREATE INDEX users_disconnected_idx ON users (disconnected_at) WHERE disconnected_at IS NOT NULL;

    -- One row per open realtime socket, refreshed by its process's heartbeat; a row whose
    -- process died stops being refreshed and expires.
    CREATE TABLE user_sockets (
      process_id text NOT NULL,
      socket_id text NOT NULL,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      workspace_id integer NOT NULL,
      -- Two heartbeats after the last one that saw the socket: past it, the socket is gone.
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (process_id, socket_id)
    );
    CREATE INDEX user_sockets_user_idx ON user_sockets (user_id, expires_at);
    CREATE INDEX user_sockets_expiry_idx ON user_sockets (expires_at);

    -- When routing or a person last gave the user a thread (routing's tie-break). Apart from
    -- users so that routing, which holds the workspace's routing lock, never waits for a lock
    -- on a user row that someone waiting for that lock holds.
    CREATE TABLE user_assignment_times (
      user_id integer PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
      last_assigned_at timestamptz NOT NULL
    );

    -- Routing's queue: a workspace's open threads nobody has, oldest first.
    CREATE INDEX threads_waiting_idx ON threads (workspace_id, created_at, id) WHERE status = 'open' AND assignee_id IS NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX threads_waiting_idx;
    DROP TABLE user_assignment_times;
    DROP TABLE user_sockets;
    ALTER TABLE users DROP COLUMN availability, DROP COLUMN max_open_threads, DROP COLUMN disconnected_at;
  `.execute(db);
}
