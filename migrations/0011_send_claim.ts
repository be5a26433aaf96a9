import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// A reply's send is claimed on its message row before the provider is called, so two jobs
// of one message (a job fetched again while its first attempt is still sending) cannot both
// send it. The claim lives in its own columns: the API's status stays `queued` while a send
// is in flight. `send_attempt` is the attempt number last claimed: a job of an attempt that
// already ran (its outcome recorded, or its claim still held) does not send again.

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE messages
      ADD COLUMN send_claim_token uuid,
      ADD COLUMN send_claimed_at timestamptz(3),
      ADD COLUMN send_attempt integer NOT NULL DEFAULT 0;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE messages DROP COLUMN send_claim_token, DROP COLUMN send_claimed_at, DROP COLUMN send_attempt;
  `.execute(db);
}
