import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// An `sms`/`sms.twilio` connection's account id is its number, and Twilio names it in E.164
// (`To=+15557122661`). Since a fix, a number typed as consoles show it, `+1 (555) 712-2661`, is
// kept so: trimmed, and when it is a `+` then digits with spaces, dashes, dots or brackets
// among them, the `+` and the digits alone (other forms, short codes, stay as given).
// Connections made before kept the spacing, so no inbound SMS ever found them, and replies went
// From a number Twilio refuses; deleting and making them again would leave their conversations
// read-only. So their numbers are brought to that form here, as migration 0072 did for trimming.
//
// A number is left as it was when its E.164 form is already another live connection's of the
// same integration (that one has had the number's deliveries all along), and of two that come to
// the same number only the older changes: the unique index on live account ids must hold. Such a
// connection still matches no delivery (the number's go to the one holding it). Nothing is logged
// here: migrations have no log of their own, and a number is a customer's contact detail.

const PHONE_KEYS = ['sms', 'sms.twilio'];
/** What JavaScript's `\s` and `String.prototype.trim` count as white space, as a regex class body. */
const SPACE = '\\t\\n\\v\\f\\r \\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff';
const TRIM = `^[${SPACE}]+|[${SPACE}]+$`;
/** A number in E.164 with the spaces, dashes, dots or brackets people write it with. */
const FORMATTED_E164 = `^\\+[${SPACE}().-]*[0-9][0-9${SPACE}().-]*$`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    WITH trimmed AS (
      SELECT id, integration_key, external_account_id AS stored,
        regexp_replace(external_account_id, ${TRIM}, '', 'g') AS account
      FROM connections
      WHERE deleted_at IS NULL AND integration_key = ANY(${PHONE_KEYS}::text[])
    ),
    wanted AS (
      SELECT id, integration_key, stored,
        CASE WHEN account ~ ${FORMATTED_E164} THEN '+' || regexp_replace(account, '[^0-9]', '', 'g') ELSE account END AS account
      FROM trimmed
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
  // Nothing to undo: the numbers as they were stored were never matched by any delivery.
}
