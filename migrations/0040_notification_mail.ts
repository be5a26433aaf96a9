import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Notification e-mail (docs/teams.md, "Mentions and notifications"): each user's choice of
// what is e-mailed while they have no socket open; the notifications waiting for their user's
// next mail; when each user was last mailed, so a user gets at most one mail per window
// whichever process sends it, across restarts.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE users
      ADD COLUMN notify_email_assigned boolean NOT NULL DEFAULT true,
      ADD COLUMN notify_email_mentioned boolean NOT NULL DEFAULT true,
      ADD COLUMN notify_email_sla boolean NOT NULL DEFAULT true;

    -- Written when a notification is made for a user with no open socket who wants its type
    -- e-mailed; deleted when their next mail takes it. Small: only what waits for a mail.
    CREATE TABLE notification_mail_queue (
      notification_id bigint PRIMARY KEY REFERENCES notifications(id) ON DELETE CASCADE,
      user_id integer NOT NULL REFERENCES users(id) ON DELETE CASCADE
    );
    CREATE INDEX notification_mail_queue_user_idx ON notification_mail_queue (user_id);

    -- One row per user a mail was made for: when the last one went (the start of the current
    -- window; null before the first). Also what a sender locks, so two processes never mail
    -- one user at once.
    CREATE TABLE notification_mail_times (
      user_id integer PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
      sent_at timestamptz(3)
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE notification_mail_times;
    DROP TABLE notification_mail_queue;
    ALTER TABLE users DROP COLUMN notify_email_assigned, DROP COLUMN notify_email_mentioned, DROP COLUMN notify_email_sla;
  `.execute(db);
}
