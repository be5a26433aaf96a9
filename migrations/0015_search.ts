import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Finding conversations (docs/conversations.md): indexes for the thread list's filters and for
// full-text search over messages.
//
// Search uses an expression index over to_tsvector('simple', text) rather than a stored
// tsvector column: a stored column would rewrite the messages table here and ride along on
// every `RETURNING *` and `SELECT *` of the ingestion path; the expression is only computed
// on insert (for the index) and on the rows a search reads. 'simple' has no stop words and
// no stemming, so any language's words match as written.
//
// A word in a large share of messages is cheaper to find by walking the workspace's messages
// newest first and testing each (a few hundred rows for a page) than by the GIN index (every
// match, then a sort): messages_workspace_idx is that walk. The planner chooses per query from
// the word's frequency, and from what testing a row costs: to_tsvector's catalogue cost is far
// below what it really costs (measured: a walk for a word in 0.14 % of a million messages read
// 38,000 rows, 300 ms, where the GIN index answers in a few). The expression is therefore one
// function of ours with that cost stated; plpgsql, because a SQL function would be inlined
// and its cost forgotten.
//
// The thread list: equality on workspace, status and assignee, then already in page order,
// so "my open conversations" reads exactly one page of index. Labels are matched with @>.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    CREATE FUNCTION message_search_vector(body text) RETURNS tsvector
      LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE COST 1000
      AS $$ BEGIN RETURN to_tsvector('simple', body); END $$;
    CREATE INDEX messages_text_search_idx ON messages USING gin (message_search_vector(text));
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
    DROP FUNCTION message_search_vector(text);
  `.execute(db);
}
