import { type Kysely, sql } from 'kysely';

// Timestamps are kept at millisecond precision (timestamptz(3)) so a keyset cursor, which
// carries epoch milliseconds, names an exact position.

// Frozen in time: this file never imports from src/.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE workspaces (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      name text NOT NULL,
      app_id text NOT NULL UNIQUE,
      created_at timestamptz(3) NOT NULL DEFAULT now()
    );

    CREATE TABLE users (
      id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      email text NOT NULL,
      password_hash text NOT NULL,
      roles text[] NOT NULL DEFAULT '{}',
      created_at timestamptz(3) NOT NULL DEFAULT now()
    );
    CREATE UNIQUE INDEX users_email_key ON users (lower(email));
    CREATE INDEX users_workspace_idx ON users (workspace_id);

    CREATE TABLE api_keys (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      name text NOT NULL,
      scopes text[] NOT NULL DEFAULT '{}',
      key_hash text NOT NULL UNIQUE,
      key_prefix text NOT NULL,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      last_used_at timestamptz(3),
      revoked_at timestamptz(3)
    );
    CREATE INDEX api_keys_workspace_idx ON api_keys (workspace_id, created_at DESC, id DESC);

    CREATE TABLE connections (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      workspace_id integer NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
      integration_key text NOT NULL,
      external_account_id text NOT NULL,
      name text NOT NULL,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      UNIQUE (integration_key, external_account_id)
    );
    CREATE INDEX connections_workspace_idx ON connections (workspace_id, created_at DESC, id DESC);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE connections, api_keys, users, workspaces`.execute(db);
}
