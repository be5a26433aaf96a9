import { sha256Hex } from '../crypto/hmac.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { withIdempotency } from '../idempotency/with-idempotency.js';
import { announce } from '../messaging/announce.js';
import { PREVIEW_LENGTH } from '../messaging/announcements.js';
import { messageResource } from '../messaging/messaging.resources.js';
import { findReplyThread, insertReply } from './replies.queries.js';
import { enqueueSend } from './send-message.queue.js';

/** Channels that never send: the AI integration only ever receives. */
const CANNOT_SEND = new Set(['ai']);

export interface ReplyRequest {
  /** The caller's app: its key space for `Idempotency-Key`. */
  appId: string;
  workspaceId: number;
  threadId: number;
  text: string;
  idempotencyKey: string | undefined;
}

/**
 * An agent's reply: the message row (`queued`), its send job and its announcement commit
 * together, and the answer is the queued Message; the worker sends it. With an idempotency
 * key, a retried request answers the first answer again and sends nothing more (docs/replies.md).
 */
export async function postReply(deps: Deps, req: ReplyRequest) {
  const request = { space: req.appId, key: req.idempotencyKey, request: `reply ${req.threadId} ${sha256Hex(req.text)}`, statusCode: 202 };
  return withIdempotency(deps.db, request, async (trx) => {
    const thread = await findReplyThread(trx, req.workspaceId, req.threadId);
    if (!thread) throw errors.notFound('thread');
    if (CANNOT_SEND.has(thread.integration_key)) throw errors.validation('this channel cannot send');
    const now = deps.now();
    const row = await insertReply(
      trx,
      {
        workspaceId: thread.workspace_id,
        threadId: thread.id,
        connectionId: thread.connection_id,
        text: req.text,
        preview: req.text.slice(0, PREVIEW_LENGTH),
      },
      now,
    );
    await enqueueSend(deps.boss, trx, { messageId: row.id, attempt: 1 });
    await announce(deps.boss, trx, [{ type: 'message.created', message: row }], now);
    return messageResource(row);
  });
}
