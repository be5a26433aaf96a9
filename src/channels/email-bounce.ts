import type { ParsedMail } from 'mailparser';
import { truncate } from '../text/truncate.js';
import { messageIds } from './email-inbound.js';

/**
 * The mail a delivery report (RFC 3464: `multipart/report; report-type=delivery-status`) says
 * could not be delivered, and why: the Message-ID of the returned mail (its headers, as
 * `message/rfc822` or `text/rfc822-headers`, else the report's In-Reply-To) and the first
 * failed recipient's address and `Diagnostic-Code` or `Status`. Undefined for any other mail, and for a
 * report that delivered or only delayed (`Action: delayed`, `delivered`, `relayed`).
 */
export function deliveryFailure(parsed: ParsedMail): { messageId: string; error: string; recipient?: string } | undefined {
  const type = parsed.headers.get('content-type') as { value?: string; params?: Record<string, string> } | undefined;
  if (type?.value?.toLowerCase() !== 'multipart/report') return undefined;
  if (type.params?.['report-type']?.toLowerCase() !== 'delivery-status') return undefined;
  // The parser gives the report's `message/delivery-status` part as text, after the human part.
  const failed = failedRecipient(parsed.text ?? '');
  if (!failed) return undefined;
  const returned = parsed.attachments.find((a) => /^(message\/rfc822|text\/rfc822-headers)$/i.test(a.contentType));
  const messageId = (returned && returnedMessageId(returned.content.toString('utf8'))) ?? messageIds(parsed.inReplyTo)[0] ?? undefined;
  if (!messageId) return undefined;
  const why = failed.recipient ? `${failed.recipient}: ${failed.why}` : failed.why;
  return { messageId, error: truncate(`bounced: ${why}`, 500), ...(failed.recipient ? { recipient: failed.recipient } : {}) };
}

/** The recipient fields of the first `Action: failed` group: its diagnostic, else its status. */
function failedRecipient(text: string): { recipient?: string; why: string } | undefined {
  const groups = text
    .replace(/\r\n?/g, '\n')
    .replace(/\n[ \t]+/g, ' ')
    .split(/\n\s*\n/);
  for (const group of groups) {
    const field = (name: string) => new RegExp(`^${name}:[ \\t]*(.+)$`, 'im').exec(group)?.[1]?.trim();
    if (field('Action')?.toLowerCase() !== 'failed') continue;
    const recipient = field('Final-Recipient')?.replace(/^rfc822;\s*/i, '');
    const why = field('Diagnostic-Code')?.replace(/^smtp;\s*/i, '') ?? field('Status') ?? 'no reason given';
    return recipient ? { recipient, why } : { why };
  }
  return undefined;
}

/** The Message-ID in the header section of a returned mail. */
function returnedMessageId(mail: string): string | undefined {
  const headers = mail.replace(/\r\n?/g, '\n').split(/\n\n/)[0] ?? '';
  const line = /^Message-ID:[ \t]*(.*(?:\n[ \t]+.*)*)/im.exec(headers)?.[1];
  return messageIds(line?.replace(/\n[ \t]+/g, ' ').trim())[0];
}
