import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Finding conversations (docs/conversations.md): indexes for the thread list's filters and for
// full-text search over messages.
//
// Search matches a stored tsvector column, to_tsvector('simple', text) computed once when a
// message is written ('simple': no stop words, no stemming, so any language's words match as
// written). Which way to find a page is chosen by the search query itself (docs/performance.md,
// "Conversations"): first a bounded walk of messages_workspace_idx, newest first, testing each
// row, then the GIN index when the walk found too few. The walk is why the vector is stored: an
// expression index would make every row walked parse its text again (about 11 µs a row against
// 1 µs measured on a million messages), and the planner, left to choose, walks for rare words
// too (150 ms) or for a word no message has (every message of the workspace). The price is a
// wider row (about 200 bytes a message) and this migration rewriting the messages table once.
//
// The thread list: equality on workspace, status and assignee, then already in page order,
// so "my open conversations" reads exactly one page of index. Labels are matched with @>.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE messages ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (to_tsvector('simple', text)) STORED;
    CREATE INDEX messages_text_search_idx ON messages USING gin (search_vector);
    CREATE INDEX messages_workspace_idx ON messages (workspace_id, created_at DESC, id DESC);
    CREATE INDEX threads_filter_idx ON threads (workspace_id, status, assignee_id, last_message_at DESC, id DESC);
    CREATE INDEX threads_labels_idx ON threads USING gin (labels);
    CREATE INDEX threads_contact_idx ON threads (contact_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX threads_contact_idx;
    DROP INDEX threads_labels_idx;
    DROP INDEX threads_filter_idx;
    DROP INDEX messages_workspace_idx;
    DROP INDEX messages_text_search_idx;
    ALTER TABLE messages DROP COLUMN search_vector;
  `.execute(db);
}
