import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Live chat's look and greeting, set from the console (docs/livechat.md, "Settings"): the
// widget reads them at start, so a change shows without touching the embed snippet. Null =
// the widget's default. `livechat_pre_chat` says which fields the widget asks before the first
// message (`{"name": bool, "email": bool}`).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE connections
      ADD COLUMN livechat_title text,
      ADD COLUMN livechat_colour text CHECK (livechat_colour ~ '^#[0-9a-f]{6}$'),
      ADD COLUMN livechat_greeting text,
      ADD COLUMN livechat_pre_chat jsonb NOT NULL DEFAULT '{"name": false, "email": false}'
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE connections
      DROP COLUMN livechat_title,
      DROP COLUMN livechat_colour,
      DROP COLUMN livechat_greeting,
      DROP COLUMN livechat_pre_chat
  `.execute(db);
}
