import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Mailboxes the service reads over IMAP (`email.imap`, docs/email.md, "Mailboxes"):
// - connections.imap_folder: the folder read (null = INBOX).
// - imap_mailbox_state: per connection, the folder's UIDVALIDITY and the last UID stored, so a
//   reader (whichever process holds the mailbox) goes on from there; a new UIDVALIDITY reads
//   the folder again from the start.
// - imap_messages: every mail ever stored, by connection and Message-ID (a hash of the bytes
//   when it has none), and by UIDVALIDITY and UID: a mail read twice (a crash before the state
//   moved on, a new UIDVALIDITY, the same mail in the folder twice) is stored once. Kept after
//   webhook_inbox rows expire, which a re-read folder would otherwise bring back.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE connections ADD COLUMN imap_folder text;
    CREATE TABLE imap_mailbox_state (
      connection_id bigint PRIMARY KEY REFERENCES connections (id) ON DELETE CASCADE,
      folder text NOT NULL,
      uid_validity bigint NOT NULL,
      last_uid bigint NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TABLE imap_messages (
      connection_id bigint NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
      message_key text NOT NULL,
      folder text NOT NULL,
      uid_validity bigint NOT NULL,
      uid bigint NOT NULL,
      delivery_id uuid NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (connection_id, message_key)
    );
    CREATE UNIQUE INDEX imap_messages_uid ON imap_messages (connection_id, folder, uid_validity, uid);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TABLE imap_messages;
    DROP TABLE imap_mailbox_state;
    ALTER TABLE connections DROP COLUMN imap_folder;
  `.execute(db);
}
