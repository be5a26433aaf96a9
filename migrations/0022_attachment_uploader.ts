import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Live chat visitors upload files before they send them (docs/attachments.md): the upload
// remembers its visitor, so a visitor's message may carry only that visitor's own unused
// uploads. A visitor row pruned later leaves the attachment on its message (SET NULL).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE attachments
      ADD COLUMN uploaded_by_visitor bigint REFERENCES livechat_visitors(id) ON DELETE SET NULL;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE attachments DROP COLUMN uploaded_by_visitor`.execute(db);
}
