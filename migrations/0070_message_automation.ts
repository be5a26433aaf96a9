import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// `messages.automation` marks a reply or note the service wrote on its own: an automation
// rule's, an away message, a CSAT survey. Their `author_id` is null like an API key's, and the
// console names them "Automation" where it names an API key's "API". A column with a constant
// default: no table rewrite.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE messages ADD COLUMN automation boolean NOT NULL DEFAULT false`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE messages DROP COLUMN automation`.execute(db);
}
