import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// Who made a connection decides whose provider account it may use (docs/security.md): one the
// operator made (engage route, CLI) may fall back on the integration's INBOX_INTEGRATIONS
// credentials; one a workspace admin made sends only with its own. Every connection made
// before this column was made by the operator's routes or treated as such, so they stay
// `operator`; the default is dropped afterwards so that every insert must say who made it.
// A rate limit's hit gains a cost, so a budget of bytes (a widget's visitor uploads per hour)
// is kept in the same table as the limits that count calls (cost 1).

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE connections
      ADD COLUMN managed_by text NOT NULL DEFAULT 'operator' CHECK (managed_by IN ('operator', 'workspace'));
    ALTER TABLE connections ALTER COLUMN managed_by DROP DEFAULT;
    ALTER TABLE rate_limit_hits ADD COLUMN cost bigint NOT NULL DEFAULT 1 CHECK (cost >= 0);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE rate_limit_hits DROP COLUMN cost;
    ALTER TABLE connections DROP COLUMN managed_by;
  `.execute(db);
}
