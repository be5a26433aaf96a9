import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// A delivery is stored as the UTF-8 text of its body, which cannot hold bytes that are not
// UTF-8 (they become U+FFFD) nor NUL. Integrations that post binary form parts (e-mail
// attachments) lose their files that way, so such a body also keeps its exact bytes here.
// NULL for every other row: the text is then the body byte for byte. A nullable column with
// no default is added without rewriting the table; retention deletes it with its row.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE webhook_inbox ADD COLUMN raw_bytes bytea;
    COMMENT ON COLUMN webhook_inbox.raw_bytes IS
      'The body exactly as received, only when raw_body (its UTF-8 text) does not hold it byte for byte and the integration posts binary parts; NULL otherwise. Read by the fetch-media job for files inside a delivery.';
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE webhook_inbox DROP COLUMN raw_bytes`.execute(db);
}
