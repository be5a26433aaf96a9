import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// A message's words are parsed for search after it is stored, not inside the statement that
// stores it: to_tsvector('simple', text) costs about 160 ns per character, the largest single
// cost of an inbound batch (docs/performance.md, "Search, indexed after the batch").
//
// search_vector becomes a plain column (DROP EXPRESSION keeps every value already computed)
// that a new message leaves NULL; the worker's search indexer fills it once the batch has
// committed, oldest first. Until then search tests the message's text itself, found through
// messages_unindexed_idx, which holds only the messages not indexed yet: a few seconds' worth.
//
// A change of a message's text (an edit, an erasure) makes its vector stale: the trigger
// resets it to NULL, so the old words stop matching at once and the indexer parses the new
// text. It fires only on an UPDATE that names `text`, so inserts and status updates pay nothing.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE messages ALTER COLUMN search_vector DROP EXPRESSION;
    CREATE INDEX messages_unindexed_idx ON messages (workspace_id, created_at DESC, id DESC) WHERE search_vector IS NULL;
    CREATE FUNCTION messages_text_unindexed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.search_vector := NULL;
      RETURN NEW;
    END $$;
    CREATE TRIGGER messages_text_unindexed BEFORE UPDATE OF text ON messages
      FOR EACH ROW WHEN (NEW.text IS DISTINCT FROM OLD.text) EXECUTE FUNCTION messages_text_unindexed();
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP TRIGGER messages_text_unindexed ON messages;
    DROP FUNCTION messages_text_unindexed();
    DROP INDEX messages_unindexed_idx;
    ALTER TABLE messages DROP COLUMN search_vector;
    ALTER TABLE messages ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED;
    CREATE INDEX messages_text_search_idx ON messages USING gin (search_vector);
  `.execute(db);
}
