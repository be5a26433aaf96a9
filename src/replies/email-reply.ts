import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { replySubject } from '../channels/email.js';
import { isMessageId } from '../channels/email-inbound.js';
import type { Executor } from '../db/database.js';
import type { EmailHeaders, MailAddress } from '../db/types.js';
import { errors } from '../http/errors.js';
import { isSingleMailbox } from '../text/mailbox.js';

/** What a reply on an e-mail thread may say about its own headers (docs/email.md, "Replies"). */
export interface EmailReplyFields {
  cc?: string[];
  bcc?: string[];
  subject?: string;
}

/** One plain address: what RCPT TO takes, without a display name or a second address. */
const ADDRESS = /^[^\s@<>(),;:"[\]\\]+@[^\s@<>(),;:"[\]\\]+\.[^\s@<>(),;:"[\]\\]+$/;

/** Refuses cc/bcc/subject where they mean nothing, and addresses a mail server would refuse. */
export function checkEmailReplyFields(fields: EmailReplyFields, onEmailThread: boolean, isNote: boolean): void {
  const named = (['cc', 'bcc', 'subject'] as const).filter((k) => fields[k] !== undefined);
  if (named.length === 0) return;
  if (isNote) throw errors.validation(`${named.join(', ')}: a private note is never mailed`);
  if (!onEmailThread) throw errors.validation(`${named.join(', ')}: only a reply on an e-mail thread takes them`);
  for (const k of ['cc', 'bcc'] as const) {
    const bad = (fields[k] ?? []).filter((a) => !ADDRESS.test(a.trim()));
    if (bad.length > 0) throw errors.validation(`${k}: ${bad.slice(0, 3).join(', ')} is not an e-mail address`);
  }
  if (fields.subject !== undefined && /[\r\n]/.test(fields.subject)) throw errors.validation('subject: one line');
}

/**
 * The headers of a reply on an e-mail thread, decided when it is queued so a retry sends the
 * same mail: a Message-ID of ours (on the domain of the mailbox, as mail servers expect), the
 * thread's last inbound mail answered (In-Reply-To, References), its subject as `Re: …`
 * unless one is given, and its Cc kept unless `cc` is given (the mailbox and the contact, who
 * are From and To, are left out of it). Without an inbound mail (a conversation the business
 * starts) the subject is the sender's to choose (see the e-mail channel's firstLineSubject).
 * The mail answered is the last one a person wrote: an out-of-office reply after it has its
 * own subject ("Automatic reply: …") and no Cc, so answering it would drop the Cc and rename
 * the conversation. A thread with only a machine's mail answers that.
 */
export async function emailReplyHeaders(db: Executor, threadId: number, fields: EmailReplyFields): Promise<EmailHeaders> {
  const { rows } = await sql<{ account: string; contact: string | null; email: EmailHeaders | null; external_id: string | null }>`
    SELECT c.external_account_id AS account, h.external_id AS contact, li.email, li.external_id
    FROM threads t
    JOIN connections c ON c.id = t.connection_id
    LEFT JOIN LATERAL (
      SELECT external_id FROM contact_handles WHERE contact_id = t.contact_id AND integration_key = c.integration_key LIMIT 1
    ) h ON true
    LEFT JOIN LATERAL (
      SELECT email, external_id FROM messages
      WHERE thread_id = t.id AND direction = 'inbound'
      ORDER BY (email->'automatic') IS NOT NULL, created_at DESC, id DESC
      LIMIT 1
    ) li ON true
    WHERE t.id = ${threadId}`.execute(db);
  const row = rows[0]!;
  const last = row.external_id === null && row.email === null ? undefined : row;
  const account = row.account.toLowerCase();
  const contact = row.contact?.toLowerCase() ?? null;
  // A mail read without a Message-ID is stored under a key of ours (`sha256:…`): never named
  // in a header. The reply then answers the mail that mail answered, else the nearest message
  // of the thread that has a real id.
  const own = last?.email?.messageId ?? last?.external_id ?? null;
  const itsOwn = last?.email?.inReplyTo ?? null;
  const answered =
    own !== null && isMessageId(own) ? own : itsOwn !== null && isMessageId(itsOwn) ? itsOwn : await nearestMessageId(db, threadId);
  const chain = (last?.email?.references ?? []).filter(isMessageId);
  // A sender's Cc entry that is no single mailbox (a list, a line break) would be read as more,
  // unseen, recipients: only plain mailboxes are kept.
  const kept = (last?.email?.cc ?? []).filter((a) => a.email !== account && a.email !== contact && isSingleMailbox(a.email));
  const subject = fields.subject?.trim() || (replySubject(last?.email?.subject ?? undefined) ?? null);
  const domain = account.includes('@') ? account.slice(account.lastIndexOf('@') + 1) : 'inbox.invalid';
  return {
    messageId: `<${randomUUID()}@${domain}>`,
    inReplyTo: answered,
    from: { email: account },
    to: contact ? [{ email: contact }] : [],
    cc: fields.cc ? addresses(fields.cc) : kept,
    ...(fields.bcc && fields.bcc.length > 0 ? { bcc: addresses(fields.bcc) } : {}),
    subject,
    references: answered ? [...chain.filter((id) => id !== answered), answered].slice(-20) : [],
  };
}

/** The Message-ID of the thread's latest mail (either way) that has one; null when none has. */
async function nearestMessageId(db: Executor, threadId: number): Promise<string | null> {
  const { rows } = await sql<{ mid: string | null }>`
    SELECT COALESCE(email->>'messageId', external_id) AS mid FROM messages
    WHERE thread_id = ${threadId} AND kind = 'message' AND COALESCE(email->>'messageId', external_id) IS NOT NULL
    ORDER BY created_at DESC, id DESC
    LIMIT 50`.execute(db);
  return rows.map((r) => r.mid!).find(isMessageId) ?? null;
}

function addresses(list: string[]): MailAddress[] {
  return [...new Set(list.map((a) => a.trim().toLowerCase()))].map((email) => ({ email }));
}
