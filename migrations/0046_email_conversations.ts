import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// E-mail threads per conversation (docs/email.md, "Threads"). A thread is one per (connection,
// contact, conversation_key): '' on every channel but e-mail, where the key is the Message-ID
// of the mail that opened the conversation, so one contact may have several e-mail threads.
// Existing e-mail threads (one per contact until now) take the id of their first message, or
// their own id when they have none with a provider id: each stays the conversation it was, and
// a mail naming one of its messages still joins it.
//
// The contact leads the key (as 0038 decided), so it also serves the reads by contact.
//
// Messages gain what an e-mail shows: its headers (`email`), its sanitized HTML and the quoted
// history cut from its text. Nullable columns without a default: no table rewrite.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE threads ADD COLUMN conversation_key text NOT NULL DEFAULT '';
    UPDATE threads t SET conversation_key = COALESCE(
        (SELECT m.external_id FROM messages m WHERE m.thread_id = t.id AND m.external_id IS NOT NULL ORDER BY m.created_at, m.id LIMIT 1),
        'thread:' || t.id)
      FROM connections c
      WHERE c.id = t.connection_id AND c.integration_key IN ('email', 'email.postmark', 'email.mailgun');
    CREATE UNIQUE INDEX threads_conversation_key ON threads (contact_id, connection_id, conversation_key);
    DROP INDEX threads_pair_key;

    ALTER TABLE messages ADD COLUMN email jsonb, ADD COLUMN html text, ADD COLUMN quoted_text text;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE messages DROP COLUMN email, DROP COLUMN html, DROP COLUMN quoted_text;
    -- Back to one thread per pair: the newest conversation of each keeps the pair's messages.
    CREATE TEMP TABLE thread_folds ON COMMIT DROP AS
      SELECT id, keep FROM (
        SELECT id, first_value(id) OVER (PARTITION BY connection_id, contact_id ORDER BY last_message_at DESC, id DESC) AS keep
        FROM threads
      ) ranked
      WHERE id <> keep;
    UPDATE messages m SET thread_id = f.keep FROM thread_folds f WHERE m.thread_id = f.id;
    UPDATE livechat_visitors v SET thread_id = f.keep FROM thread_folds f WHERE v.thread_id = f.id;
    DELETE FROM threads t USING thread_folds f WHERE t.id = f.id;
    CREATE UNIQUE INDEX threads_pair_key ON threads (contact_id, connection_id);
    DROP INDEX threads_conversation_key;
    ALTER TABLE threads DROP COLUMN conversation_key;
  `.execute(db);
}
