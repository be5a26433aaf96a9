import { describe, expect, it } from 'vitest';
import type { MessageRow } from '../../src/messaging/announcements.js';
import {
  type ApplyPlan,
  byKey,
  type ContactIds,
  type DeliveryEvents,
  messageThreads,
  pendingAttachments,
  planBatch,
  type Resolved,
  threadChoices,
  threadInputs,
  threadTouches,
  unreadCorrections,
} from '../../src/messaging/apply-plan.js';
import { nothingWritten, type Written } from '../../src/messaging/apply-upsert.js';
import { batchChanges } from '../../src/messaging/apply-views.js';
import type { ConnectionRef, ThreadRow } from '../../src/messaging/messaging.queries.js';

// The plan and the views are applying without its I/O: these cases need no database. The
// statements themselves run in apply-deliveries.test.ts and test/threads/.

const NOW = new Date('2030-01-02T03:04:05Z');
const conn: ConnectionRef = {
  id: 7,
  workspace_id: 3,
  integration_key: 'email',
  external_account_id: 'support@example.test',
  app_id: 'app_1',
  auto_assign: false,
  team_id: null,
  sla: false,
  away_message: null,
};
const resolved: Resolved = {
  connections: new Map([[byKey('email', conn.external_account_id), conn]]),
  sentMessages: new Map([[byKey('email', 'sent-1'), { connectionId: conn.id, account: conn.external_account_id, appId: 'app_1' }]]),
};
const message = (id: string, from: string, text: string, extra: object = {}) =>
  ({
    type: 'message',
    externalAccountId: conn.external_account_id,
    externalMessageId: id,
    contact: { externalId: from },
    text,
    ...extra,
  }) as const;
const delivery = (deliveryId: string, events: DeliveryEvents['events']): DeliveryEvents => ({
  deliveryId,
  integrationKey: 'email',
  events,
});
const receipt = (status: 'sent' | 'delivered' | 'read' | 'failed', externalMessageId = 'sent-1') =>
  ({ type: 'status', resolveBy: 'account', externalAccountId: conn.external_account_id, externalMessageId, status }) as const;
const contactIds = (...names: [string, number][]): ContactIds => new Map(names.map(([n, id]) => [`3|email|${n}`, id]));

describe('planBatch', () => {
  it('plans the same provider message twice in one batch once: the last copy, in the place of the first', () => {
    const plan = planBatch(
      [
        delivery('d1', [message('m1', 'alice', 'first copy'), message('m2', 'bob', 'other')]),
        delivery('d2', [message('m1', 'alice', 'retried copy')]),
      ],
      resolved,
    );
    expect(plan.messages.map((m) => [m.event.externalMessageId, m.event.text, m.deliveryId])).toEqual([
      ['m1', 'retried copy', 'd2'],
      ['m2', 'other', 'd1'],
    ]);
    // Every copy still names its contact: the contacts' upsert takes them as they came.
    expect(plan.handles.map((h) => h.externalId)).toEqual(['alice', 'bob', 'alice']);
  });

  it('keeps of several receipts for one message in a batch the one that moves it furthest', () => {
    const statusOf = (...events: DeliveryEvents['events']) => planBatch([delivery('d', events)], resolved).statuses;
    expect(statusOf(receipt('delivered'), receipt('read'))).toEqual([
      { connectionId: 7, externalId: 'sent-1', status: 'read', error: null },
    ]);
    expect(statusOf(receipt('read'), receipt('delivered')).map((s) => s.status)).toEqual(['read']);
    expect(statusOf(receipt('delivered'), receipt('failed')).map((s) => s.status)).toEqual(['delivered']);
    expect(statusOf(receipt('sent'), receipt('failed')).map((s) => s.status)).toEqual(['failed']);
    // Resolved by the message it names, a receipt is the same message's as one resolved by account.
    expect(
      statusOf(receipt('delivered'), { type: 'status', resolveBy: 'sent_message', externalMessageId: 'sent-1', status: 'read' }),
    ).toHaveLength(1);
    expect(statusOf({ type: 'status', resolveBy: 'sent_message', externalMessageId: 'never-sent', status: 'read' })).toEqual([]);
  });
});

describe('the steps that take the database answers', () => {
  it("joins a message to a thread its references name only when that thread is the sender's", () => {
    const plan = planBatch(
      [
        delivery('d', [
          message('r1', 'alice', 'reply', { references: ['gone', 'm-a'] }),
          message('r2', 'carol', 'stranger', { references: ['m-a'] }),
        ]),
      ],
      resolved,
    );
    expect(plan.references).toEqual([
      { connectionId: 7, externalId: 'gone' },
      { connectionId: 7, externalId: 'm-a' },
      { connectionId: 7, externalId: 'm-a' },
    ]);
    const ids = contactIds(['alice', 100], ['carol', 101]);
    const choices = threadChoices(plan, new Map([['7|m-a', { threadId: 50, contactId: 100 }]]), ids);
    // Alice's reply joins thread 50 and moves it on; Carol gets her own thread.
    expect(threadInputs(plan, ids, choices, NOW).map((t) => t.contactId)).toEqual([101]);
    expect(threadTouches(plan, choices.joined, NOW)).toEqual([{ threadId: 50, lastMessageAt: NOW, preview: 'reply' }]);
    const threads = new Map([['7|101|', { id: 60 } as ThreadRow]]);
    expect(messageThreads(plan, ids, choices, threads)).toEqual([50, 60]);
  });

  it('opens a thread per e-mail conversation, and a reply within the batch joins the mail it answers', () => {
    const mail = (id: string, from: string, references: string[] = []) =>
      message(id, from, id, {
        references,
        email: { messageId: id, inReplyTo: references[0] ?? null, from: { email: from }, to: [], cc: [], subject: 's' },
      });
    const plan = planBatch(
      [
        delivery('d', [
          mail('a1', 'alice'),
          mail('a2', 'alice'),
          mail('a1-re', 'alice', ['a1']),
          mail('carol-re', 'carol', ['a2']),
          message('chat', 'alice', 'not a mail'),
        ]),
      ],
      resolved,
    );
    const ids = contactIds(['alice', 100], ['carol', 101]);
    const choices = threadChoices(plan, new Map(), ids);
    expect(choices.joined.size).toBe(0);
    // Two conversations of Alice's, the reply in the first; Carol's reply to Alice's mail opens her own.
    expect(threadInputs(plan, ids, choices, NOW).map((t) => [t.contactId, t.conversationKey])).toEqual([
      [100, 'a1'],
      [100, 'a2'],
      [100, 'a1'],
      [101, 'carol-re'],
      [100, ''],
    ]);
    const threads = new Map([
      ['7|100|a1', { id: 1 } as ThreadRow],
      ['7|100|a2', { id: 2 } as ThreadRow],
      ['7|101|carol-re', { id: 3 } as ThreadRow],
      ['7|100|', { id: 4 } as ThreadRow],
    ]);
    expect(messageThreads(plan, ids, choices, threads)).toEqual([1, 2, 1, 3, 4]);
    // A reply within the batch to a mail that joined a stored thread joins that thread too.
    const stored = threadChoices(
      planBatch([delivery('d', [mail('b1', 'alice', ['old']), mail('b2', 'alice', ['b1'])])], resolved),
      new Map([['7|old', { threadId: 50, contactId: 100 }]]),
      ids,
    );
    expect([...stored.joined.values()]).toEqual([50, 50]);
  });

  it('writes attachments pending and counts unread only for the messages the insert stored', () => {
    const plan = planBatch(
      [
        delivery('d1', [
          message('new', 'alice', 'with a file', { attachments: [{ kind: 'file', source: { from: 'delivery', index: 0 } }] }),
          message('stored', 'alice', 'a retry', { attachments: [{ kind: 'image', source: { from: 'whatsapp_media', mediaId: 'x' } }] }),
        ]),
      ],
      resolved,
    );
    const inserted = [{ id: 900, connection_id: 7, external_id: 'new', workspace_id: 3, thread_id: 60 }];
    expect(pendingAttachments(plan, inserted)).toEqual([
      {
        workspaceId: 3,
        messageId: 900,
        kind: 'file',
        contentType: undefined,
        filename: undefined,
        source: { from: 'delivery', index: 0, deliveryId: 'd1' },
      },
    ]);
    expect(unreadCorrections([60, 60], inserted)).toEqual([{ threadId: 60, n: 1 }]);
    expect(unreadCorrections([60], inserted)).toEqual([]);
  });
});

describe('batchChanges', () => {
  const thread = (fields: Partial<ThreadRow>): ThreadRow => ({
    id: 60,
    workspace_id: 3,
    connection_id: 7,
    contact_id: 101,
    status: 'open',
    snoozed_until: null,
    assignee_id: null,
    labels: [],
    agent_last_seen_at: null,
    unread_count: 1,
    last_message_at: NOW,
    last_message_preview: 'hi',
    last_inbound_at: NOW,
    team_id: null,
    conversation_key: '',
    priority: 'normal' as const,
    sla: null,
    sla_due_at: null,
    sla_status: null,
    away_replied_at: null,
    conversation_messages_in: 0,
    conversation_messages_out: 0,
    created_at: NOW,
    updated_at: NOW,
    created: false,
    contact_name: null,
    team_routes: false,
    ...fields,
  });
  const inboundRow = (id: number, threadId: number) => ({ id, thread_id: threadId, workspace_id: 3 }) as MessageRow;
  const written = (fields: Partial<Written>): Written => ({ ...nothingWritten(), ...fields });
  const plan: Pick<ApplyPlan, 'integrationOf'> = { integrationOf: new Map([[7, 'email']]) };

  it('shows a reopened thread open and unsnoozed, told once however many messages it got', () => {
    const snoozed = thread({ status: 'snoozed', snoozed_until: new Date('2030-02-01T00:00:00Z'), unread_count: 2 });
    const changes = batchChanges(
      plan,
      written({
        threads: new Map([['7|101|', snoozed]]),
        messages: [inboundRow(1, 60), inboundRow(2, 60)],
        work: { activity: [inboundRow(3, 60)], reopened: [60], assigned: [{ id: 60, assignee_id: 5 }], notifications: [] },
      }),
      NOW,
    );
    expect(changes.map((c) => c.type)).toEqual(['message.created', 'thread.updated', 'message.created', 'message.created']);
    expect(changes[1]).toMatchObject({
      thread: { id: 60, status: 'open', snoozed_until: null, assignee_id: 5, integration_key: 'email', unread_count: 2 },
    });
  });

  it('takes back the unread count of a message the insert skipped, and announces new contacts and threads first', () => {
    const changes = batchChanges(
      plan,
      written({
        contactsCreated: [{ id: 101, workspaceId: 3, integrationKey: 'email', externalId: 'carol', name: null }],
        threads: new Map([['7|101|', thread({ created: true, unread_count: 2 })]]),
        openedThreadIds: [60],
        messages: [inboundRow(1, 60)],
        unreadTakenBack: [{ threadId: 60, n: 1 }],
      }),
      NOW,
    );
    expect(changes.map((c) => c.type)).toEqual(['contact.created', 'thread.created', 'thread.updated', 'message.created']);
    expect(changes[1]).toMatchObject({ thread: { unread_count: 1 } });
    expect(changes[0]).toMatchObject({ contact: { createdAt: NOW } });
  });
});
