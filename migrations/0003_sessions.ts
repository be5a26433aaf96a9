import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Server-side sessions (a JWT's jti names one), one-time auth codes, personal-access tokens
// and failed login attempts (rate limiting shared by every api process).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE TABLE sessions (
      id uuid PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      remember boolean NOT NULL DEFAULT false,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      expires_at timestamptz(3) NOT NULL,
      revoked_at timestamptz(3)
    );
    CREATE INDEX sessions_user_idx ON sessions (user_id) WHERE revoked_at IS NULL;

    CREATE TABLE auth_codes (
      code_hash text PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      remember boolean NOT NULL DEFAULT false,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      expires_at timestamptz(3) NOT NULL,
      used_at timestamptz(3)
    );

    CREATE TABLE personal_access_tokens (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      name text NOT NULL,
      token_hash text NOT NULL UNIQUE,
      token_prefix text NOT NULL,
      created_at timestamptz(3) NOT NULL DEFAULT now(),
      last_used_at timestamptz(3),
      revoked_at timestamptz(3)
    );
    CREATE INDEX personal_access_tokens_user_idx ON personal_access_tokens (user_id, created_at DESC, id DESC);

    CREATE TABLE login_attempts (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      email text NOT NULL,
      ip text NOT NULL,
      created_at timestamptz(3) NOT NULL DEFAULT now()
    );
    CREATE INDEX login_attempts_email_idx ON login_attempts (email, created_at);
    CREATE INDEX login_attempts_ip_idx ON login_attempts (ip, created_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`DROP TABLE login_attempts, personal_access_tokens, auth_codes, sessions`.execute(db);
}
