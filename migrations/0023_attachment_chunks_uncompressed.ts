import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Attachment chunks stored out of line and uncompressed (docs/performance.md, "Attachments").
// Most attachments are compressed already (JPEG, MP4, Opus, PDF): PostgreSQL's pglz only spends
// CPU on each 1 MB chunk to find that out, and for a file that does compress it makes every
// 256 KB read decompress the chunk from its start. EXTERNAL keeps chunks as they came, so a
// read fetches only the TOAST pages of its slice. Rows written before this keep their form.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE attachment_chunks ALTER COLUMN data SET STORAGE EXTERNAL`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE attachment_chunks ALTER COLUMN data SET STORAGE EXTENDED`.execute(db);
}
