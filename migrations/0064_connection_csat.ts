import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// CSAT per connection (docs/reports.md, "CSAT"): whether a user's resolution sends the contact
// the survey on this channel, and the question it asks (null = the default question).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE connections
      ADD COLUMN csat_enabled boolean NOT NULL DEFAULT false,
      ADD COLUMN csat_question text
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE connections DROP COLUMN csat_question, DROP COLUMN csat_enabled`.execute(db);
}
