import { contentUrl } from '../attachments/attachments.resources.js';
import { messageResources } from '../attachments/message-attachments.js';
import type { TenantAuth } from '../auth/auth.js';
import { replyWindowEndsAt } from '../channels/reply-window.js';
import { findConnection } from '../connections/connections.queries.js';
import { sha256Hex } from '../crypto/hmac.js';
import type { Executor } from '../db/database.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { withIdempotency } from '../idempotency/with-idempotency.js';
import { announce } from '../messaging/announce.js';
import type { Change } from '../messaging/announcements.js';
import { threadKey, upsertContacts, upsertThreads } from '../messaging/messaging.queries.js';
import { enforceRateLimit, type RateLimit } from '../rate-limits/rate-limit.js';
import { recordOpenings, recordReplyTo } from '../reports/record.js';
import { moveSla, slaReplied } from '../sla/sla.service.js';
import { autoAssignedLine } from '../threads/activity.js';
import { routeThreadNow } from '../threads/routing.js';
import { changeThreadIn } from '../threads/thread-workflow.service.js';
import { findThread, findThreadViews } from '../threads/threads.queries.js';
import { threadResource } from '../threads/threads.resources.js';
import { workspaceSettings } from '../workspaces/workspace-settings.js';
import { queueMessage } from './queue-message.js';
import { handleVariants, recipientHandle } from './recipient-handle.js';
import { firstKnownHandle } from './replies.queries.js';
import { checkChannelTakes, checkContent } from './reply-attachments.js';
import { prepareTemplateReply, type TemplateReply } from './template-reply.js';

export interface StartRequest {
  /** The caller's app: its key space for `Idempotency-Key`. */
  appId: string;
  workspaceId: number;
  connectionId: number;
  /** The recipient as the caller wrote it; stored normalised (see recipient-handle.ts). */
  to: string;
  /** The contact's name, kept when the contact has none yet. */
  name?: string;
  /** `text`, `template`, or `attachmentIds` (with `text` as their caption, or alone). */
  text?: string;
  template?: TemplateReply;
  /** Uploads (POST /v1/attachments) sent with the first message, as a reply sends them. */
  attachmentIds?: number[];
  /** The user writing; null for an API key. */
  authorId: number | null;
  /** The caller: the conversation's thread must be one it sees (a team's connection it is not in: 404). */
  reader: TenantAuth;
  idempotencyKey: string | undefined;
}

/**
 * New conversations a workspace may start per minute (INBOX_MAX_NEW_CONVERSATIONS_PER_MINUTE):
 * each may send through a provider account and write a contact, so one tenant can neither run
 * up a provider's bill nor fill the database at the speed of its API key.
 */
const newConversationsLimit = (limit: number): RateLimit => ({
  name: 'new-conversations',
  what: 'new conversations of a workspace',
  limit,
  windowMs: 60_000,
});

/**
 * Speaks first (docs/replies.md, "Starting a conversation"): finds or creates the contact by
 * its normalised handle and the one thread of (connection, contact), and queues the message
 * through the replies' sender, all in one transaction with the announcements
 * (`contact.created` and `thread.created` as inbound messages make them, then
 * `message.created` and `thread.updated`). A free-form message on a channel with a reply
 * window needs the window open, as a reply does; a refusal rolls everything back, so a new
 * contact or thread is never left behind by a 422. With an idempotency key a retried request
 * answers the first answer.
 */
export async function startConversation(deps: Deps, req: StartRequest) {
  const attachmentIds = req.attachmentIds ?? [];
  checkContent(req.text, req.template, attachmentIds);
  const asked = JSON.stringify([
    req.to,
    req.name ?? null,
    req.text ?? null,
    req.template ?? null,
    ...(attachmentIds.length > 0 ? [attachmentIds] : []),
  ]);
  const request = {
    space: req.appId,
    key: req.idempotencyKey,
    request: `conversation ${req.connectionId} ${sha256Hex(asked)}`,
    statusCode: 202,
    // A replay shows the thread too: only to a caller who sees it.
    replayable: async (trx: Executor, answer: { thread: { id: number } }) => {
      if (!(await findThread(trx, req.reader, answer.thread.id))) throw errors.notFound('thread');
    },
  };
  return withIdempotency(deps.db, request, async (trx) => {
    // Counted in this transaction: a refused request (429, or any 4xx below) writes nothing,
    // and a replayed idempotency key answers above without counting again.
    await enforceRateLimit(trx, newConversationsLimit(deps.config.maxNewConversationsPerMinute), req.workspaceId, deps.now());
    const connection = await findConnection(trx, req.workspaceId, req.connectionId);
    if (!connection) throw errors.notFound('connection');
    const written = recipientHandle(connection.integration_key, req.to);
    // A contact who wrote from another form of the number (WhatsApp's ninth digit in Brazil, the
    // 1 of Mexico) is the person written to: their contact and thread, and their own id.
    const variants = handleVariants(connection.integration_key, written);
    const handle =
      variants.length === 0
        ? written
        : ((await firstKnownHandle(trx, req.workspaceId, connection.integration_key, [written, ...variants])) ?? written);
    checkChannelTakes(connection.integration_key, attachmentIds.length);
    const now = deps.now();
    const contacts = await upsertContacts(
      trx,
      [{ workspaceId: req.workspaceId, integrationKey: connection.integration_key, externalId: handle, name: req.name ?? null }],
      now,
    );
    const contactId = contacts.ids.get(`${req.workspaceId}|${connection.integration_key}|${handle}`)!;
    // The one thread of (connection, contact), whatever its status, as a reply would use it;
    // the contact's next message reopens a resolved one as usual. On e-mail that is the
    // contact's thread of key '' (docs/email.md, "Threads"): the answer names the mail sent and
    // joins it; a mail naming nothing opens a conversation of its own.
    const threads = await upsertThreads(
      trx,
      [
        {
          workspaceId: req.workspaceId,
          connectionId: connection.id,
          contactId,
          lastMessageAt: now,
          preview: null,
          unread: 0,
          teamId: connection.team_id,
        },
      ],
      now,
    );
    const thread = threads.get(threadKey(connection.id, contactId))!;
    // Read before anything is sent: a thread the caller does not see is refused, and the
    // rollback takes back a contact or thread made for it.
    if (!(await findThread(trx, req.reader, thread.id))) throw errors.notFound('thread');
    if (!req.template) {
      // A new thread's contact never wrote: on a windowed channel its window is closed.
      const windowEnd = replyWindowEndsAt(connection.integration_key, thread.last_inbound_at);
      if (windowEnd && now.getTime() > windowEnd.getTime()) throw errors.windowClosed(thread.last_inbound_at);
    }
    const content = req.template
      ? await prepareTemplateReply(
          trx,
          { ...thread, integration_key: connection.integration_key, business_account_id: connection.business_account_id },
          req.template,
        )
      : { text: req.text ?? '', template: undefined };
    const message = await queueMessage(
      deps.boss,
      trx,
      {
        workspaceId: req.workspaceId,
        threadId: thread.id,
        connectionId: connection.id,
        text: content.text,
        template: content.template,
        attachmentIds,
        authorId: req.authorId,
      },
      now,
    );
    // A thread made here opens like one the contact starts: the first matching SLA policy
    // applies from now. Into it, as into a thread the contact is waiting in, the business's
    // message is an answer of a user or an API key: it meets the first and next response
    // targets as a reply does, so the contact's next message starts the next response (docs/sla.md).
    const opened = thread.created ? await moveSla(deps, trx, req.workspaceId, [{ thread, event: 'opened' }], now) : undefined;
    await slaReplied(deps, trx, { id: thread.id, sla: opened?.get(thread.id)?.sla ?? thread.sla }, now);
    // A thread made here opens its first conversation (docs/reports.md), as the contact's first
    // message would; into an open one, the message is its first response if none came yet.
    if (thread.created)
      await recordOpenings(trx, [{ workspaceId: req.workspaceId, threadId: thread.id, connectionId: connection.id, reopened: false }], now);
    else await recordReplyTo(trx, thread, now);
    let [view] = await findThreadViews(trx, [thread.id]);
    const changes: Change[] = [
      ...contacts.created.map((c): Change => ({ type: 'contact.created', contact: { ...c, createdAt: now } })),
      ...(thread.created ? [{ type: 'thread.created' as const, thread: view! }] : []),
      { type: 'message.created', message },
    ];
    // A first message without files has no attachments to read back, for the event or the answer.
    const bare = attachmentIds.length === 0 ? new Set([message.id]) : undefined;
    // A new thread is routed as one a contact opens (docs/teams.md, "Routing"), in this commit:
    // its activity line, the assignee's notification and thread.updated come with it. Otherwise
    // the thread's last message moved, and thread.updated says so, as for an inbound message.
    const updated: Change = { type: 'thread.updated', thread: view! };
    // The person who writes on a thread nobody has takes it (assignOnReply), as a reply's
    // author does: by a PATCH's own path (activity line, `thread.updated`), instead of routing.
    const takes = req.authorId !== null && thread.assignee_id === null && (await workspaceSettings(trx, req.workspaceId)).assignOnReply;
    const routes = !takes && thread.created && thread.assignee_id === null && (connection.auto_assign || thread.team_routes);
    if (takes) {
      await announce(deps, trx, changes, now, { bare });
      await changeThreadIn(deps, trx, req.reader, thread.id, { assigneeId: req.authorId });
      [view] = await findThreadViews(trx, [thread.id]);
    } else if (!routes) await announce(deps, trx, [...changes, updated], now, { bare });
    else {
      await announce(deps, trx, changes, now, { bare });
      if (await routeThreadNow(deps, trx, thread, autoAssignedLine, now)) [view] = await findThreadViews(trx, [thread.id]);
      else await announce(deps, trx, [updated], now);
    }
    const [answer] = await messageResources(trx, [message], contentUrl(deps.config.publicUrl), { bare });
    return { thread: threadResource(view!), message: answer! };
  });
}
