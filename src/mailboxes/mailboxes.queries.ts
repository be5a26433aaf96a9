import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import { storableJson, storableText } from '../channels/channel.js';
import type { ImapMailPayload } from '../channels/email-imap.js';
import { type Executor, withClientTransaction } from '../db/database.js';
import { deliveriesJobStatement } from '../webhooks-in/inbox.enqueue.js';
import { type NewInboxRow, storeDeliveries } from '../webhooks-in/inbox.queries.js';

/** A mailbox to read: an `email.imap` connection, and what tells that its settings changed. */
export interface MailboxRow {
  id: number;
  account: string;
  folder: string;
  /** Changes whenever its credentials or folder do: the reader then starts again with them. */
  version: string;
}

export async function listMailboxes(db: Executor): Promise<MailboxRow[]> {
  const { rows } = await sql<MailboxRow>`
    SELECT id, external_account_id AS account, COALESCE(imap_folder, 'INBOX') AS folder,
      md5(COALESCE(encode(credentials_sealed, 'base64'), '') || '|' || COALESCE(imap_folder, '')) AS version
    FROM connections
    WHERE integration_key = 'email.imap' AND deleted_at IS NULL
    ORDER BY id`.execute(db);
  return rows;
}

/** Where the last reader stopped: the folder's UIDVALIDITY then and the last UID stored. */
export async function findMailboxState(
  db: Executor,
  connectionId: number,
): Promise<{ folder: string; uidValidity: number; lastUid: number } | undefined> {
  const row = await db
    .selectFrom('imap_mailbox_state')
    .select(['folder', 'uid_validity', 'last_uid'])
    .where('connection_id', '=', connectionId)
    .executeTakeFirst();
  return row && { folder: row.folder, uidValidity: Number(row.uid_validity), lastUid: Number(row.last_uid) };
}

/** One mail read from the folder, parsed. */
export interface FetchedMail {
  uid: number;
  raw: Buffer;
  payload: ImapMailPayload;
}

/**
 * Stores a batch of mails read from a folder, in one transaction: each mail not stored before
 * (by Message-ID, or by UID under this UIDVALIDITY) becomes a webhook_inbox row with its raw
 * bytes, its parse and its processing job; the folder's state moves on to `lastUid`. A crash
 * before the commit leaves nothing, and the next reader reads the batch again; one after it
 * finds every mail already there. Returns how many mails were new.
 */
export async function storeMails(
  pool: pg.Pool,
  boss: PgBoss,
  mailbox: { id: number; account: string; folder: string },
  uidValidity: number,
  lastUid: number,
  mails: FetchedMail[],
  beforeCommit?: () => Promise<void>,
): Promise<number> {
  return withClientTransaction(pool, async (client) => {
    const ids = mails.map(() => randomUUID());
    const claimed =
      mails.length === 0
        ? []
        : (
            await client.query<{ delivery_id: string }>(
              `INSERT INTO imap_messages (connection_id, message_key, folder, uid_validity, uid, delivery_id)
               SELECT $1, v.k, $2, $3, v.u, v.d FROM unnest($4::text[], $5::bigint[], $6::uuid[]) AS v(k, u, d)
               ON CONFLICT DO NOTHING RETURNING delivery_id`,
              [mailbox.id, mailbox.folder, uidValidity, mails.map((m) => m.payload.messageKey), mails.map((m) => m.uid), ids],
            )
          ).rows;
    const fresh = new Set(claimed.map((r) => r.delivery_id));
    const rows: NewInboxRow[] = [];
    mails.forEach((m, i) => {
      if (!fresh.has(ids[i]!)) return;
      const text = storableText(m.raw.toString('utf8'));
      rows.push({
        id: ids[i]!,
        integrationKey: 'email.imap',
        event: 'inbound',
        rawBody: text,
        // The text holds the bytes exactly unless decoding replaced some (channels/channel.ts, bytesToKeep).
        rawBytes: text.includes('\uFFFD') ? m.raw : null,
        verification: 'signed',
        verifiedAccount: mailbox.account,
        // jsonb holds no NUL and no lone surrogate (a subject in UTF-16 can decode to one).
        payloadJson: JSON.stringify(storableJson(m.payload)),
      });
    });
    if (rows.length > 0) {
      await storeDeliveries(client, rows, await deliveriesJobStatement(boss, rows));
    }
    await client.query(
      `INSERT INTO imap_mailbox_state (connection_id, folder, uid_validity, last_uid) VALUES ($1, $2, $3, $4)
       ON CONFLICT (connection_id) DO UPDATE SET folder = EXCLUDED.folder, uid_validity = EXCLUDED.uid_validity,
         last_uid = EXCLUDED.last_uid, updated_at = now()`,
      [mailbox.id, mailbox.folder, uidValidity, lastUid],
    );
    await beforeCommit?.();
    return rows.length;
  });
}
