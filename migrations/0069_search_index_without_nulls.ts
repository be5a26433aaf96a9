import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// A new message is stored with a NULL search_vector (0037: its words are parsed after the
// batch), and the GIN index took an entry for that NULL on every insert, which no search ever
// reads: a search for words matches only vectors (the `@@` operator is strict, so the planner
// uses an index WHERE search_vector IS NOT NULL for it), and the messages not indexed yet are
// found through messages_unindexed_idx. Without those entries, storing a message costs about a
// tenth less (docs/performance.md, "The delivery path's writes").
//
// The index is rebuilt in this migration's transaction: processing, which writes messages,
// waits for it, while deliveries are still acknowledged and queued (a million messages of 15
// words each took 4.7 s on a 2-core machine; see CHANGELOG.md).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX messages_text_search_idx;
    CREATE INDEX messages_text_search_idx ON messages USING gin (search_vector) WHERE search_vector IS NOT NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    DROP INDEX messages_text_search_idx;
    CREATE INDEX messages_text_search_idx ON messages USING gin (search_vector);
  `.execute(db);
}
