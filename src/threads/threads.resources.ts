import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import { replyWindowEndsAt } from '../channels/reply-window.js';
import type { ThreadsTable } from '../db/types.js';
import { Nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { SlaResource, slaResource } from '../sla/sla-state.js';

export const THREAD_STATUSES = ['open', 'pending', 'resolved', 'snoozed'] as const;
export const THREAD_PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;

/** A thread as the API shows it: its row, its connection's integration and its contact's name. */
export type ThreadView = Selectable<ThreadsTable> & { integration_key: string; contact_name: string | null };

export const ThreadResource = Type.Object(
  {
    id: Type.Integer(),
    connectionId: Type.Integer(),
    integrationKey: Type.String(),
    contactId: Type.Integer(),
    contactName: Nullable(Type.String({ description: "the contact's name; null while the contact has none" })),
    status: StringEnum(THREAD_STATUSES),
    snoozedUntil: Nullable(Type.String({ format: 'date-time', description: 'when a snoozed thread opens again; null unless snoozed' })),
    assigneeId: Nullable(Type.Integer({ description: 'the user working the thread' })),
    teamId: Nullable(Type.Integer({ description: 'the team the thread belongs to (docs/teams.md); null = none' })),
    labels: Type.Array(Type.String()),
    priority: StringEnum(THREAD_PRIORITIES, { description: 'how urgent the thread is; SLA policies may match it' }),
    sla: SlaResource,
    unreadCount: Type.Integer({ minimum: 0, description: 'inbound messages that arrived since agentLastSeenAt' }),
    agentLastSeenAt: Nullable(Type.String({ format: 'date-time', description: 'when an agent last read the thread' })),
    lastMessageAt: Timestamp,
    lastMessagePreview: Nullable(Type.String()),
    replyWindowEndsAt: Nullable(
      Type.String({
        format: 'date-time',
        description:
          "until when a free-form reply is accepted (the contact's last message + the channel's window); null for channels without a window",
      }),
    ),
    createdAt: Timestamp,
  },
  { title: 'Thread' },
);

export function threadResource(row: ThreadView): Static<typeof ThreadResource> {
  return {
    id: row.id,
    connectionId: row.connection_id,
    integrationKey: row.integration_key,
    contactId: row.contact_id,
    contactName: row.contact_name,
    status: row.status,
    snoozedUntil: row.snoozed_until?.toISOString() ?? null,
    assigneeId: row.assignee_id,
    teamId: row.team_id,
    labels: row.labels,
    priority: row.priority,
    sla: slaResource(row.sla),
    unreadCount: row.unread_count,
    agentLastSeenAt: row.agent_last_seen_at?.toISOString() ?? null,
    lastMessageAt: row.last_message_at.toISOString(),
    lastMessagePreview: row.last_message_preview,
    replyWindowEndsAt: replyWindowEndsAt(row.integration_key, row.last_inbound_at)?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
  };
}

/** `GET /v1/threads/counts`: the number of threads in each view of the list, under one set of filters. */
export const ThreadCountsResource = Type.Object(
  {
    mine: Nullable(Type.Integer({ minimum: 0, description: 'assigned to the caller; null for an API key' })),
    unassigned: Type.Integer({ minimum: 0 }),
    all: Type.Integer({ minimum: 0 }),
  },
  { title: 'ThreadCounts' },
);
