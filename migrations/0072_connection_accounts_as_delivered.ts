import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// A delivery finds its connection by the account id it names, exactly (docs/webhooks.md). Two
// fixes made new connections keep their id as deliveries name it: trimmed, and for the mail
// integrations in lower case (inbound mail names its receiving address so). Connections made
// before kept `" 106540352242922"` or `Support@Acme.test`, which no delivery ever matched, and
// deleting and making them again would leave their conversations read-only. So their ids are
// brought to that form here. One already taken by another live connection of the key (which then
// received that account's deliveries all along) is left as it was, and of two that come to the
// same id, only the older changes: the unique index must hold.

const MAIL_KEYS = ['email', 'email.postmark', 'email.mailgun', 'email.imap'];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    WITH wanted AS (
      SELECT id, integration_key, external_account_id AS stored,
        CASE WHEN integration_key = ANY(${MAIL_KEYS}::text[])
          THEN lower(regexp_replace(external_account_id, '^[\\s\\u00a0\\ufeff]+|[\\s\\u00a0\\ufeff]+$', '', 'g'))
          ELSE regexp_replace(external_account_id, '^[\\s\\u00a0\\ufeff]+|[\\s\\u00a0\\ufeff]+$', '', 'g')
        END AS account
      FROM connections
      WHERE deleted_at IS NULL
    ),
    changing AS (
      SELECT DISTINCT ON (w.integration_key, w.account) w.id, w.account
      FROM wanted w
      WHERE w.account <> w.stored AND w.account <> ''
        AND NOT EXISTS (
          SELECT 1 FROM connections o
          WHERE o.deleted_at IS NULL AND o.integration_key = w.integration_key AND o.external_account_id = w.account
        )
      ORDER BY w.integration_key, w.account, w.id
    )
    UPDATE connections c SET external_account_id = changing.account
    FROM changing
    WHERE c.id = changing.id`.execute(db);
}

export async function down(): Promise<void> {
  // Nothing to undo: the ids as they were stored were never matched by any delivery.
}
