import type { ThreadPriority, ThreadStatus } from '../db/types.js';

/**
 * The words of activity lines: what happened to a conversation, as the transcript shows it
 * ("Ada assigned the conversation to Bo"). `actor` is a user's name, or "API key <name>".
 */

const STATUS_VERB: Record<Exclude<ThreadStatus, 'snoozed'>, string> = {
  open: 'reopened the conversation',
  pending: 'marked the conversation as pending',
  resolved: 'resolved the conversation',
};

export function statusLine(actor: string, status: ThreadStatus, snoozedUntil: Date | null): string {
  if (status === 'snoozed') return `${actor} snoozed the conversation until ${snoozedUntil!.toISOString()}`;
  return `${actor} ${STATUS_VERB[status]}`;
}

export function assigneeLine(actor: string, assignee: string | null, previous: string | null): string {
  if (assignee !== null) return `${actor} assigned the conversation to ${assignee}`;
  return previous !== null ? `${actor} unassigned ${previous} from the conversation` : `${actor} unassigned the conversation`;
}

export function teamLine(actor: string, team: string | null, previous: string | null): string {
  if (team !== null) return `${actor} moved the conversation to the team ${team}`;
  return `${actor} removed the conversation from the team ${previous ?? ''}`.trimEnd();
}

const list = (labels: string[]) => `${labels.length === 1 ? 'label' : 'labels'} ${labels.join(', ')}`;

export function labelsLine(actor: string, added: string[], removed: string[]): string {
  const parts: string[] = [];
  if (added.length > 0) parts.push(`added the ${list(added)}`);
  if (removed.length > 0) parts.push(`removed the ${list(removed)}`);
  return `${actor} ${parts.join(' and ')}`;
}

export const priorityLine = (actor: string, priority: ThreadPriority) => `${actor} set the priority to ${priority}`;
/** The connection's away message answered a contact who wrote outside business hours (docs/sla.md). */
export const AWAY_REPLY_SENT = 'Outside business hours: the away message was sent';

export const autoAssignedLine = (assignee: string) => `Assigned to ${assignee} by routing`;
export const REOPENED_BY_MESSAGE = 'A new message from the contact reopened the conversation';
export const SNOOZE_ENDED = 'The snooze ended: the conversation is open again';
