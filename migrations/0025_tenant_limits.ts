import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Who made a connection decides whose provider account it may use (docs/security.md): one the
// operator made (engage route, CLI) may fall back on the integration's INBOX_INTEGRATIONS
// credentials; one a workspace admin made sends only with its own. Every connection made
// before this column was made by the operator's routes or treated as such, so they stay
// `operator`; the default is dropped afterwards so that every insert must say who made it.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE connections
      ADD COLUMN managed_by text NOT NULL DEFAULT 'operator' CHECK (managed_by IN ('operator', 'workspace'));
    ALTER TABLE connections ALTER COLUMN managed_by DROP DEFAULT;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE connections DROP COLUMN managed_by`.execute(db);
}
