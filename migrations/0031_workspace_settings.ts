import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// A workspace's settings (GET/PATCH /v1/workspace, docs/teams.md) in one object: a setting
// absent from it has its default, which lives in the code (src/workspaces/workspace-settings.ts),
// so a new setting needs no migration.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE workspaces ADD COLUMN settings jsonb NOT NULL DEFAULT '{}'::jsonb`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE workspaces DROP COLUMN settings`.execute(db);
}
