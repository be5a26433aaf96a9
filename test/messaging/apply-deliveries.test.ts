import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import type { DB } from '../../src/db/types.js';
import { announcements, PREVIEW_LENGTH } from '../../src/messaging/announcements.js';
import { applyDeliveries, type DeliveryEvents } from '../../src/messaging/apply-events.js';
import { REALTIME_CHANNEL } from '../../src/realtime/publish.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeOutboundMessage, makeTenant } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';

const ctx = await useTestContext();
const tenant = await makeTenant(ctx.deps);

const apply = (deliveries: DeliveryEvents[]) =>
  ctx.deps.db.transaction().execute((trx) => applyDeliveries(ctx.deps, trx, deliveries, new Date()));
const statusOf = async (id: number) =>
  (await ctx.deps.db.selectFrom('messages').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;

describe('applyDeliveries: receipts resolved by the message they name', () => {
  it("goes through the delivery's own integration, never another's message with the same id", async () => {
    const whatsapp = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'whatsapp' });
    const sms = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms' });
    const mine = await makeOutboundMessage(ctx.deps, whatsapp, 'shared-provider-id');
    const theirs = await makeOutboundMessage(ctx.deps, sms, 'shared-provider-id');
    const resolutions = await apply([
      {
        deliveryId: 'd1',
        integrationKey: 'whatsapp',
        events: [{ type: 'status', resolveBy: 'sent_message', externalMessageId: 'shared-provider-id', status: 'delivered' }],
      },
    ]);
    expect(resolutions.get('d1')).toEqual({ appId: tenant.workspace.appId });
    expect(await statusOf(mine.id)).toBe('delivered');
    expect(await statusOf(theirs.id)).toBe('sent');
  });

  it('claims no account: a receipt naming no sent message resolves to nothing and changes nothing', async () => {
    const resolutions = await apply([
      {
        deliveryId: 'd2',
        integrationKey: 'sms',
        events: [{ type: 'status', resolveBy: 'sent_message', externalMessageId: 'never-sent', status: 'delivered' }],
      },
    ]);
    expect(resolutions.get('d2')).toEqual({ appId: null });
  });

  it('resolves by account only through a connected account; an unknown one fails the delivery', async () => {
    const sms = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms', externalAccountId: '+15005550999' });
    const sent = await makeOutboundMessage(ctx.deps, sms, 'SM-by-account');
    const resolutions = await apply([
      {
        deliveryId: 'ok',
        integrationKey: 'sms',
        events: [
          { type: 'status', resolveBy: 'account', externalAccountId: '+15005550999', externalMessageId: 'SM-by-account', status: 'read' },
        ],
      },
      {
        deliveryId: 'unknown',
        integrationKey: 'sms',
        events: [
          { type: 'status', resolveBy: 'account', externalAccountId: '+19999999999', externalMessageId: 'SM-by-account', status: 'failed' },
        ],
      },
    ]);
    expect(resolutions.get('ok')).toEqual({ appId: tenant.workspace.appId });
    expect(resolutions.get('unknown')?.error).toMatch(/no connection for sms account "\+19999999999"/);
    expect(await statusOf(sent.id)).toBe('read');
  });
});

describe('announcing what changed', () => {
  it('publishes an applied message to agents (preview cut) only when the transaction commits', async () => {
    const conn = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'aggregator' });
    const listener = new pg.Client({ connectionString: ctx.database.url });
    await listener.connect();
    try {
      const heard: { type: string; data: Record<string, unknown> }[] = [];
      listener.on('notification', (n) => heard.push(JSON.parse(n.payload!)));
      await listener.query(`LISTEN ${REALTIME_CHANNEL}`);
      const text = 'x'.repeat(PREVIEW_LENGTH + 50);
      const delivery = (id: string): DeliveryEvents => ({
        deliveryId: id,
        integrationKey: 'aggregator',
        events: [
          {
            type: 'message',
            externalAccountId: conn.externalAccountId,
            externalMessageId: id,
            contact: { externalId: 'agg-contact-1' },
            text,
          },
        ],
      });
      // Rolled back: nothing was applied, so nothing is heard.
      await expect(
        ctx.deps.db.transaction().execute(async (trx) => {
          await applyDeliveries(ctx.deps, trx, [delivery('rolled-back')], new Date());
          throw new Error('roll back');
        }),
      ).rejects.toThrow('roll back');
      await apply([delivery('committed')]);
      const created = await waitFor(async () => heard.find((e) => e.type === 'message.created'), 'message.created');
      expect(created.data).toMatchObject({ direction: 'inbound', status: 'received', preview: text.slice(0, PREVIEW_LENGTH) });
      expect(heard.filter((e) => e.type === 'message.created')).toHaveLength(1);
      expect(heard.map((e) => e.type)).toContain('thread.updated');
    } finally {
      await listener.end();
    }
  });

  it('tells each audience what its table entry says, in the order of the changes', () => {
    const at = new Date('2025-01-02T03:04:05Z');
    const message = {
      id: 7,
      workspace_id: 3,
      thread_id: 9,
      connection_id: 1,
      direction: 'outbound' as const,
      external_id: null,
      text: 'hello',
      status: 'queued' as const,
      error: null,
      created_at: at,
      updated_at: at,
      send_claim_token: null,
      send_claimed_at: null,
      send_attempt: 0,
      template: null,
      kind: 'message' as const,
      private: false,
      author_id: null,
      ai: false,
      automation: false,
      mentions: null,
      email: null,
      html: null,
      quoted_text: null,
    };
    const thread = {
      id: 9,
      workspace_id: 3,
      connection_id: 1,
      contact_id: 5,
      status: 'open' as const,
      snoozed_until: null,
      assignee_id: 4,
      labels: ['vip'],
      agent_last_seen_at: null,
      last_message_at: at,
      last_message_preview: 'hello',
      last_inbound_at: null,
      team_id: null,
      conversation_key: '',
      priority: 'normal' as const,
      sla: null,
      sla_due_at: null,
      sla_status: null,
      away_replied_at: null,
      conversation_messages_in: 0,
      conversation_messages_out: 0,
      created_at: at,
      updated_at: at,
      integration_key: 'sms',
      contact_name: 'Ada',
      unread_count: 2,
    };
    const { realtime, outbound } = announcements(
      [
        {
          type: 'contact.created',
          contact: { id: 5, workspaceId: 3, name: null, integrationKey: 'sms', externalId: '+1555', createdAt: at },
        },
        { type: 'message.created', message },
        { type: 'thread.updated', thread },
        { type: 'message.updated', message: { ...message, status: 'failed', error: 'no' } },
      ],
      new Map(),
    );
    expect(realtime).toEqual([
      {
        type: 'message.created',
        workspaceId: 3,
        data: {
          id: 7,
          threadId: 9,
          direction: 'outbound',
          kind: 'message',
          private: false,
          status: 'queued',
          preview: 'hello',
          attachments: [],
        },
      },
      {
        type: 'thread.updated',
        workspaceId: 3,
        data: {
          id: 9,
          connectionId: 1,
          integrationKey: 'sms',
          contactId: 5,
          contactName: 'Ada',
          status: 'open',
          snoozedUntil: null,
          teamId: null,
          assigneeId: 4,
          labels: ['vip'],
          priority: 'normal',
          sla: null,
          unreadCount: 2,
          agentLastSeenAt: null,
          lastMessageAt: at.toISOString(),
          lastMessagePreview: 'hello',
          replyWindowEndsAt: null,
          createdAt: at.toISOString(),
        },
      },
      { type: 'message.updated', workspaceId: 3, data: { id: 7, threadId: 9, status: 'failed', error: 'no', attachments: [] } },
    ]);
    expect(outbound.map((e) => e.type)).toEqual(['contact.created', 'message.created', 'thread.updated', 'message.updated']);
    // Agents' sockets and customers' endpoints read the same Thread.
    expect(outbound[2]!.data).toEqual(realtime[1]!.data);
    expect(outbound[0]!.data).toEqual({
      id: 5,
      name: null,
      email: null,
      phone: null,
      attributes: {},
      handles: [{ integrationKey: 'sms', externalId: '+1555' }],
      createdAt: at.toISOString(),
    });
    expect(outbound[1]!.data).toMatchObject({
      id: 7,
      threadId: 9,
      status: 'queued',
      externalId: null,
      kind: 'message',
      private: false,
      authorId: null,
    });
  });

  it('shapes an outbound event for every change endpoints take, with or without an endpoint (the event log)', async () => {
    const at = new Date('2026-01-02T03:04:05.000Z');
    const thread = {
      id: 9,
      workspace_id: 3,
      connection_id: 1,
      contact_id: 5,
      status: 'open' as const,
      snoozed_until: null,
      assignee_id: null,
      team_id: null,
      conversation_key: '',
      priority: 'normal' as const,
      sla: null,
      sla_due_at: null,
      sla_status: null,
      away_replied_at: null,
      conversation_messages_in: 0,
      conversation_messages_out: 0,
      labels: [],
      agent_last_seen_at: null,
      last_message_at: at,
      last_message_preview: 'hello',
      last_inbound_at: null,
      created_at: at,
      updated_at: at,
      integration_key: 'sms',
      contact_name: null,
      unread_count: 1,
    };
    const { realtime, outbound } = announcements(
      [
        { type: 'thread.created', thread },
        { type: 'thread.updated', thread },
        { type: 'thread.updated', thread: { ...thread, id: 10, workspace_id: 4 } },
      ],
      new Map(),
    );
    expect(outbound.map((e) => [e.workspaceId, e.type])).toEqual([
      [3, 'thread.created'],
      [3, 'thread.updated'],
      [4, 'thread.updated'],
    ]);
    // Agents are told of every change whatever the endpoints take.
    expect(realtime.map((e) => [e.workspaceId, e.type])).toEqual([
      [3, 'thread.updated'],
      [4, 'thread.updated'],
    ]);
  });
});

describe('reading attachments to announce', () => {
  it('reads none for messages the batch wrote without files, and reads those of a message with one', async () => {
    const conn = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'aggregator' });
    const statements: string[] = [];
    // The app's own pool, with every statement it runs recorded.
    const db = new Kysely<DB>({
      dialect: new PostgresDialect({ pool: ctx.deps.pool }),
      log: (e) => void statements.push(e.query.sql),
    });
    const message = (id: string, attachments?: { kind: 'image'; source: { from: 'url'; url: string; auth: 'none' } }[]) => ({
      deliveryId: id,
      integrationKey: 'aggregator',
      events: [
        {
          type: 'message' as const,
          externalAccountId: conn.externalAccountId,
          externalMessageId: id,
          contact: { externalId: `contact-${id}` },
          text: 'hello',
          ...(attachments ? { attachments } : {}),
        },
      ],
    });
    const readsAttachments = () => statements.filter((q) => /from "attachments"/.test(q)).length;
    await db.transaction().execute((trx) => applyDeliveries(ctx.deps, trx, [message('bare-1'), message('bare-2')], new Date()));
    expect(statements.some((q) => q.includes('INSERT INTO messages'))).toBe(true);
    expect(readsAttachments()).toBe(0);
    await db
      .transaction()
      .execute((trx) =>
        applyDeliveries(
          ctx.deps,
          trx,
          [message('with-file', [{ kind: 'image', source: { from: 'url', url: 'https://files.example/a.png', auth: 'none' } }])],
          new Date(),
        ),
      );
    expect(readsAttachments()).toBe(1);
  });
});

describe("a thread's preview of a contact's message", () => {
  it('names the files of a message without text ([image], [audio]…), on the thread, in thread.updated and message.created', async () => {
    const conn = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'aggregator' });
    const source = { from: 'url' as const, url: 'https://files.example/a', auth: 'none' as const };
    const sends = (id: string, text: string, kinds: ('image' | 'audio')[]) => ({
      deliveryId: id,
      integrationKey: 'aggregator',
      events: [
        {
          type: 'message' as const,
          externalAccountId: conn.externalAccountId,
          externalMessageId: id,
          contact: { externalId: 'contact-preview' },
          text,
          attachments: kinds.map((kind) => ({ kind, source })),
        },
      ],
    });
    const bus = new pg.Client({ connectionString: ctx.database.url });
    await bus.connect();
    const told: { type: string; data: { lastMessagePreview?: string; preview?: string } }[] = [];
    bus.on('notification', (n) => told.push(JSON.parse(n.payload!)));
    await bus.query(`LISTEN ${REALTIME_CHANNEL}`);
    try {
      const previews: string[] = [];
      for (const [id, text, kinds] of [
        ['voice-1', '', ['audio']],
        ['photos-1', '', ['image', 'image']],
        ['caption-1', 'This one', ['image']],
      ] as const) {
        await apply([sends(id, text, [...kinds])]);
        const row = await ctx.deps.db
          .selectFrom('messages')
          .innerJoin('threads', 'threads.id', 'messages.thread_id')
          .select('threads.last_message_preview')
          .where('messages.external_id', '=', id)
          .executeTakeFirstOrThrow();
        previews.push(row.last_message_preview!);
      }
      // A voice note or a photo alone reads as what it is, as an agent's reply with files does.
      expect(previews).toEqual(['[audio]', '[image] [image]', 'This one']);
      await waitFor(async () => told.filter((e) => e.type === 'thread.updated').length >= 3, 'three thread.updated');
      expect(told.filter((e) => e.type === 'thread.updated').map((e) => e.data.lastMessagePreview)).toEqual(previews);
      // The socket's message.created says the same as the thread's preview, not "".
      await waitFor(async () => told.filter((e) => e.type === 'message.created').length >= 3, 'three message.created');
      expect(told.filter((e) => e.type === 'message.created').map((e) => e.data.preview)).toEqual(previews);
    } finally {
      await bus.end();
    }
  });
});
