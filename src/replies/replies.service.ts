import { contentUrl } from '../attachments/attachments.resources.js';
import { messageResources } from '../attachments/message-attachments.js';
import { linkAttachments } from '../attachments/reply-attachments.queries.js';
import type { TenantAuth } from '../auth/auth.js';
import { isEmailIntegration } from '../channels/email-inbound.js';
import { replyWindowEndsAt } from '../channels/reply-window.js';
import { sha256Hex } from '../crypto/hmac.js';
import type { Executor } from '../db/database.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { withIdempotency } from '../idempotency/with-idempotency.js';
import { announce } from '../messaging/announce.js';
import type { Change } from '../messaging/announcements.js';
import { insertNotifications } from '../notifications/notifications.queries.js';
import { recordReply } from '../reports/record.js';
import { slaReplied } from '../sla/sla.service.js';
import { workspaceUserIds } from '../teams/teams.queries.js';
import { insertTranscriptLines, lockThreadRow, setMentions } from '../threads/thread-workflow.queries.js';
import { changeThreadIn, type ThreadActor } from '../threads/thread-workflow.service.js';
import { findThread, findThreadViews } from '../threads/threads.queries.js';
import { usersNotSeeing } from '../threads/visibility.js';
import { workspaceSettings } from '../workspaces/workspace-settings.js';
import { checkEmailReplyFields, type EmailReplyFields, emailReplyHeaders } from './email-reply.js';
import { queueMessage } from './queue-message.js';
import { findReplyThread } from './replies.queries.js';
import { checkChannelTakes, checkContent, lockUnusedAttachments } from './reply-attachments.js';
import { RECEIVE_ONLY } from './send-policy.js';
import { prepareTemplateReply, type TemplateReply } from './template-reply.js';

/** The most users one note may name. */
export const MAX_MENTIONS = 50;

export interface ReplyRequest {
  /** Who writes: a user (its author), an API key or a rule (no author). */
  auth: ThreadActor;
  threadId: number;
  /** At most one of `text` and `template`; `text` may be left out when attachments are given. */
  text?: string;
  template?: TemplateReply;
  /** Uploads (`POST /v1/attachments`) the reply carries; `text` is then their caption. */
  attachmentIds?: number[];
  /** A private note for colleagues: stored in the transcript, never sent. */
  private: boolean;
  /** A note the workspace's model wrote (docs/ai.md, "Summarize"); set by the service, never by a request body. */
  ai?: boolean;
  /** A note's named users (docs/teams.md, "Mentions and notifications"): users of the workspace. */
  mentions?: number[];
  /** E-mail threads only: the reply's Cc, Bcc and subject (docs/email.md, "Replies"). */
  email?: EmailReplyFields;
  idempotencyKey: string | undefined;
}

/**
 * An agent's reply: the message row (`queued`), its send job and its announcement commit
 * together, and the answer is the queued Message; the worker sends it. With an idempotency
 * key, a retried request answers the first answer again and sends nothing more (docs/replies.md).
 * With `private`, a note: stored `sent` in the transcript and announced to agents and the
 * workspace's endpoints, never sent to the contact (docs/conversations.md). A reply after the
 * channel's reply window is refused (422 window_closed); a note never is. Attachments named
 * by `attachmentIds` are checked against the channel and linked to the message in the same
 * transaction (docs/attachments.md, "Outbound").
 */
export async function postReply(deps: Deps, req: ReplyRequest & { auth: TenantAuth }) {
  const { request, write } = prepareReply(deps, req);
  // An API caller's app is the `Idempotency-Key` space. A replay answers only a caller who
  // sees the thread: a key must not show a restricted agent a thread of another team.
  const replayable = async (trx: Executor) => {
    if (!(await findThread(trx, req.auth, req.threadId))) throw errors.notFound('thread');
  };
  return withIdempotency(deps.db, { ...request, space: req.auth.appId, replayable }, write);
}

/**
 * postReply in the caller's transaction, without an idempotency key: a rule's or a macro's
 * reply or note (docs/automation.md), checked and written exactly as an agent's.
 */
export async function postReplyIn(deps: Deps, trx: Executor, req: Omit<ReplyRequest, 'idempotencyKey'>) {
  return prepareReply(deps, { ...req, idempotencyKey: undefined }).write(trx);
}

function prepareReply(deps: Deps, req: ReplyRequest) {
  const { auth } = req;
  const authorId = auth.kind === 'user' || auth.kind === 'pat' ? auth.userId : null;
  const attachmentIds = req.attachmentIds ?? [];
  checkContent(req.text, req.template, attachmentIds);
  if (req.private && req.template) throw errors.validation('a private note is text; templates are sent to the contact');
  // A mention tells a colleague; in a reply it would be words sent to the contact.
  if (req.mentions !== undefined && !req.private) throw errors.validation('mentions: only a private note (private: true) names users');
  const mentions = [...new Set(req.mentions ?? [])];
  const mailFields = Object.fromEntries(Object.entries(req.email ?? {}).filter(([, v]) => v !== undefined)) as EmailReplyFields;
  const what = req.private ? 'note' : req.template ? 'template' : 'reply';
  // A reply with files is told apart by them too; one without keeps the key of before.
  // A note naming users is told apart by them too.
  const content =
    attachmentIds.length > 0 || mentions.length > 0 || Object.keys(mailFields).length > 0
      ? JSON.stringify({ text: req.text ?? '', attachmentIds, ...(mentions.length > 0 ? { mentions } : {}), ...mailFields })
      : (req.text ?? JSON.stringify(req.template));
  const request = {
    key: req.idempotencyKey,
    request: `${what} ${req.threadId} ${sha256Hex(content)}`,
    statusCode: req.private ? 201 : 202,
  };
  const write = async (trx: Executor) => {
    // A reply or note locks its thread before reading it: replies to one thread at once then
    // take turns, so only the first answers the conversation and assigns the thread
    // (assignOnReply), none deadlocks with another on the thread row it updates and its messages
    // reference, and a thread a merge folds away meanwhile is a 404, not a message without one.
    await lockThreadRow(trx, auth.workspaceId, req.threadId);
    const thread = await findReplyThread(trx, auth, req.threadId);
    if (!thread) throw errors.notFound('thread');
    const now = deps.now();
    const onEmail = isEmailIntegration(thread.integration_key);
    checkEmailReplyFields(mailFields, onEmail, req.private);
    if (req.private) {
      // A note branches off here: no send job, no channel check (nothing leaves the service),
      // and the thread's preview stays the conversation's last word with the contact. Its
      // attachments are checked like a reply's and stay with it in the transcript.
      const known = await workspaceUserIds(trx, thread.workspace_id, mentions);
      const strangers = mentions.filter((u) => !known.has(u));
      if (strangers.length > 0) throw errors.validation(`mentions: ${strangers.slice(0, 10).join(', ')} not users of this workspace`);
      const blind = await usersNotSeeing(trx, thread.workspace_id, thread.id, mentions);
      if (blind.length > 0)
        throw errors.validation(
          `mentions: ${blind.slice(0, 10).join(', ')} cannot see this thread (restrictAgentsToTeams): add them to its team or assign it to them first`,
        );
      const files = await lockUnusedAttachments(trx, thread.workspace_id, attachmentIds);
      const [written] = await insertTranscriptLines(
        trx,
        'note',
        [
          {
            workspaceId: thread.workspace_id,
            threadId: thread.id,
            connectionId: thread.connection_id,
            text: req.text ?? '',
            authorId,
            ai: req.ai === true,
            automation: auth.kind === 'automation',
          },
        ],
        now,
      );
      const note = mentions.length > 0 ? await setMentions(trx, written!.id, mentions) : written!;
      await linkAttachments(
        trx,
        files.map((f) => f.id),
        note.id,
        now,
      );
      // Each named colleague is told, but not the author naming themselves.
      const notifications = await insertNotifications(
        trx,
        mentions
          .filter((userId) => userId !== authorId)
          .map((userId) => ({
            workspaceId: thread.workspace_id,
            userId,
            type: 'mentioned' as const,
            threadId: thread.id,
            messageId: note.id,
            actorId: authorId,
          })),
        now,
      );
      const changes: Change[] = [
        { type: 'message.created', message: note },
        ...notifications.map((notification) => ({ type: 'notification.created' as const, notification })),
      ];
      // A note without files has no attachments to read back, for the event or the answer.
      const bare = files.length === 0 ? new Set([note.id]) : undefined;
      await announce(deps, trx, changes, now, { bare });
      const [answer] = await messageResources(trx, [note], contentUrl(deps.config.publicUrl), { bare });
      return answer!;
    }
    if (RECEIVE_ONLY.has(thread.integration_key)) throw errors.validation('this channel cannot send');
    if (thread.connection_deleted_at !== null)
      throw errors.conflict("this thread's connection was deleted: the thread is kept read-only and replies cannot be sent");
    // An erased person has no handle left to write to: a reply would only fail in the send job.
    if (thread.contact_erased_at !== null) throw errors.conflict("this thread's contact was erased: replies cannot be sent");
    checkChannelTakes(thread.integration_key, attachmentIds.length);
    if (!req.template) {
      // The provider would refuse it after the send job ran (WhatsApp's 131047): say so now,
      // before anything is stored or queued (docs/replies.md, "Reply windows"). A template may
      // be sent at any time.
      const windowEnd = replyWindowEndsAt(thread.integration_key, thread.last_inbound_at);
      if (windowEnd && now.getTime() > windowEnd.getTime()) throw errors.windowClosed(thread.last_inbound_at);
    }
    // A template is checked against the synced list.
    const prepared = req.template ? await prepareTemplateReply(trx, thread, req.template) : { text: req.text ?? '', template: undefined };
    const row = await queueMessage(
      deps.boss,
      trx,
      {
        workspaceId: thread.workspace_id,
        threadId: thread.id,
        connectionId: thread.connection_id,
        text: prepared.text,
        template: prepared.template,
        attachmentIds,
        authorId,
        automation: auth.kind === 'automation',
        ...(onEmail ? { email: await emailReplyHeaders(trx, thread.id, mailFields) } : {}),
      },
      now,
    );
    // A reply of a user or an API key meets the first and next response targets (docs/sla.md);
    // a rule's is no answer of the team's.
    if (auth.kind !== 'automation') await slaReplied(deps, trx, thread, now);
    await recordReply(trx, thread, now);
    // The person who answers an unassigned thread takes it (workspace setting assignOnReply):
    // assigned as a PATCH assigns, with its activity line and thread.updated, in this commit.
    const assigns = authorId !== null && thread.assignee_id === null && (await workspaceSettings(trx, auth.workspaceId)).assignOnReply;
    // The thread's last message, preview and SLA clock moved: the lists see it in thread.updated,
    // here or, when the reply assigns the thread, in the assignment's own.
    const [view] = assigns ? [] : await findThreadViews(trx, [thread.id]);
    // A reply without files has no attachments to read back, for the event or the answer.
    const bare = attachmentIds.length === 0 ? new Set([row.id]) : undefined;
    await announce(
      deps,
      trx,
      [{ type: 'message.created', message: row }, ...(view ? [{ type: 'thread.updated' as const, thread: view }] : [])],
      now,
      { bare },
    );
    if (assigns) await changeThreadIn(deps, trx, auth, thread.id, { assigneeId: authorId });
    const [answer] = await messageResources(trx, [row], contentUrl(deps.config.publicUrl), { bare });
    return answer!;
  };
  return { request, write };
}
