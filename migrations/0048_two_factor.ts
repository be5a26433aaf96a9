import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Two-factor sign-in (docs/security.md, "Two-factor sign-in"). A user's TOTP secret is sealed
// under INBOX_SECRET_KEY like connection credentials; it is kept from setup on and counts
// only once `totp_enabled_at` is set (a setup never confirmed turns nothing on).
// `totp_last_step` is the time step of the last code accepted: the same code never works twice.
// Recovery codes: only their SHA-256 is kept (each has 80 random bits), each works once.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE users
      ADD COLUMN totp_secret bytea,
      ADD COLUMN totp_enabled_at timestamptz(3),
      ADD COLUMN totp_last_step bigint,
      ADD CONSTRAINT users_totp_enabled_has_secret CHECK (totp_enabled_at IS NULL OR totp_secret IS NOT NULL);
    CREATE TABLE recovery_codes (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      code_hash text NOT NULL,
      used_at timestamptz(3),
      UNIQUE (user_id, code_hash)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE recovery_codes;
    ALTER TABLE users DROP CONSTRAINT users_totp_enabled_has_secret,
      DROP COLUMN totp_secret, DROP COLUMN totp_enabled_at, DROP COLUMN totp_last_step;
  `.execute(db);
}
