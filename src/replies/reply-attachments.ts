import { lockReplyAttachments } from '../attachments/reply-attachments.queries.js';
import { filesPerMessage } from '../channels/attachment-limits.js';
import type { Executor } from '../db/database.js';
import { errors } from '../http/errors.js';

/**
 * What a message to the contact may be: text, a template, or files (with the text as their
 * caption, or alone); a template goes alone. Shared by replies and new conversations.
 */
export function checkContent(text: string | undefined, template: unknown, attachmentIds: readonly number[]): void {
  if (text !== undefined && template !== undefined) throw errors.validation('send exactly one of "text" and "template"');
  if (template !== undefined && attachmentIds.length > 0)
    throw errors.validation('a template is sent alone: send "attachmentIds" with "text", or on their own');
  if (text === undefined && template === undefined && attachmentIds.length === 0)
    throw errors.validation('send exactly one of "text" and "template", or "attachmentIds": a message is text or at least one attachment');
  checkDistinct(attachmentIds);
}

/** The ids a reply names, each once; checked before anything else about them. */
export function checkDistinct(ids: readonly number[]): void {
  if (new Set(ids).size !== ids.length) throw errors.validation('attachmentIds: an attachment is named twice');
}

/**
 * The channel's rule on files, checked before anything is read or written: a channel that
 * cannot send files refuses any, one that carries one file per message refuses a second
 * (docs/attachments.md, "Outbound"). Notes never leave the service and are not asked.
 */
export function checkChannelTakes(integrationKey: string, count: number): void {
  if (count === 0) return;
  const most = filesPerMessage(integrationKey);
  if (most === 0) throw errors.validation(`attachmentIds: ${integrationKey} cannot send files`);
  if (count > most)
    throw errors.validation(
      `attachmentIds: ${integrationKey} carries ${most === 1 ? 'one attachment' : `at most ${most} attachments`} per message; ${count} given`,
    );
}

/**
 * Checks the uploads a reply names, inside the reply's transaction: each must
 * be an attachment of the workspace (an unknown id and another workspace's are refused alike,
 * 422, as an `assigneeId` of another workspace is, so nothing tells one from the other), stored,
 * and on no message yet. The rows stay locked until the transaction ends, so two replies naming
 * one upload cannot both take it (the caller links them to its message with linkAttachments).
 * Answers the rows in the order named.
 */
export async function lockUnusedAttachments(trx: Executor, workspaceId: number, ids: number[]) {
  if (ids.length === 0) return [];
  const rows = new Map((await lockReplyAttachments(trx, workspaceId, ids)).map((r) => [r.id, r]));
  return ids.map((id, i) => {
    const row = rows.get(id);
    if (!row) throw errors.validation(`attachmentIds[${i}]: ${id} names no attachment of this workspace`);
    if (row.message_id !== null) throw errors.validation(`attachmentIds[${i}]: attachment ${id} is already on a message`);
    if (row.status !== 'stored') throw errors.validation(`attachmentIds[${i}]: attachment ${id} is ${row.status}, not stored`);
    return row;
  });
}
